"""Keep big tool results out of the context window.

A result over ``per_result`` characters is saved to ``results/<call-id>.txt``
and replaced by a preview that says where the rest is and how to read it.
When one step's results together pass ``per_step``, the largest are saved
first until the step fits. Tools that opt out (``read_file``) are never saved:
a saved read would only be read back, in a loop. A result is saved at most
once (saving its preview again would overwrite the full output), and when the
save fails (disk full, read-only home) the result is cut inline instead, its
start and end kept, so the turn goes on.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .home import atomic_write
from .tool_registry import ToolRegistry, ToolResult

__all__ = ["ResultBudget", "safe_result_name"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
log = logging.getLogger(__name__)


def safe_result_name(call_id: str) -> str:
    """A file name from a call id that cannot leave the results folder."""
    cleaned = _UNSAFE.sub("_", call_id).strip("._")[:80]
    if not cleaned:
        cleaned = "call"
    if cleaned != call_id:  # keep distinct ids distinct after cleaning
        cleaned += "-" + hashlib.sha256(call_id.encode()).hexdigest()[:8]
    return cleaned + ".txt"


@dataclass
class ResultBudget:
    """Limits on tool output per result and per step, in characters."""

    results_dir: Path
    per_result: int = 100_000
    per_step: int = 200_000
    preview_chars: int = 1_500

    def apply(self, results: Sequence[ToolResult], registry: ToolRegistry) -> list[ToolResult]:
        """Spill what is too big, in place, and return the results."""
        done: set[int] = set()  # by identity: a result is saved (or cut) once, never its preview again

        def spillable(result: ToolResult) -> bool:
            tool = registry.get(result.name)
            return id(result) not in done and (tool is None or tool.spill_large_results)

        for result in results:
            tool = registry.get(result.name)
            limit = (tool.max_result_chars if tool and tool.max_result_chars else None) or self.per_result
            if len(result.content) > limit and spillable(result):
                self._spill(result)
                done.add(id(result))
        total = sum(len(r.content) for r in results)
        for result in sorted(results, key=lambda r: len(r.content), reverse=True):
            if total <= self.per_step:
                break
            if spillable(result) and len(result.content) > self.preview_chars:
                before = len(result.content)
                self._spill(result)
                done.add(id(result))
                total -= before - len(result.content)
        return list(results)

    def _spill(self, result: ToolResult) -> None:
        path = (self.results_dir / safe_result_name(result.call_id)).resolve()
        if path.parent != self.results_dir.resolve():  # belt and braces for the name check
            raise ValueError(f"result path escapes {self.results_dir}")
        content = result.content
        lines = content.count("\n") + 1
        try:
            atomic_write(path, content, mode=0o600)
        except OSError as error:
            log.warning("could not save the output of %s to %s: %s; cutting it inline", result.name, path, error)
            keep = self.preview_chars
            result.content = (
                f"[output of {result.name} was {len(content):,} characters ({lines:,} lines), too large to show "
                f"whole, and saving it failed ({type(error).__name__}); its first and last {keep:,} characters "
                f"follow. Run the tool again with a narrower scope for the middle.]\n"
                f"{content[:keep]}\n… [{len(content) - 2 * keep:,} characters cut] …\n{content[-keep:]}"
            )
            return
        result.content = (
            f"[output of {result.name} was {len(content):,} characters ({lines:,} lines), too large "
            f"to show whole; saved to {path}. Read the rest with read_file(path={str(path)!r}, "
            f"offset=N, limit=M), or search it with search_files.]\n"
            f"--- first {self.preview_chars:,} characters ---\n{content[: self.preview_chars]}"
        )
