"""The trigger both built-in engines share: a share of the window, reported prompt tokens only,
and the anti-thrashing guard that switches automatic compression off when it stops paying."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hermes.kernel import ContextEngine, estimate_tokens

from .._messages import last_index
from .assembly import SYSTEM_NOTE, extract_handoff, with_system_note
from .boundaries import Sections, find_boundaries, split
from .budget import setting, tail_budget, threshold_tokens
from .failures import CompressionGuard
from .pruning import prune

__all__ = ["Cut", "ThresholdEngine"]


@dataclass
class Cut:
    """A message list split for compression: the pruned sections plus what the engines need."""

    system: dict[str, Any] | None
    body: list[dict[str, Any]]
    previous: str | None  # the handoff of an earlier compression, if any
    newest: int | None  # index in ``body`` of the newest user message
    pruned: list[dict[str, Any]]  # ``body`` after phase 1
    sections: Sections


class ThresholdEngine(ContextEngine):
    """Compress at ``compression.threshold`` of the window; keep ``target_ratio`` of it as the tail."""

    def __init__(self, **kwargs: Any) -> None:
        self.guard = CompressionGuard()
        super().__init__(**kwargs)

    def update_model(self, model: str, context_length: int) -> None:
        self.model = model
        self.context_length = context_length
        self.threshold_tokens = threshold_tokens(context_length, float(setting(self.config, "compression.threshold", 0.50)))
        ratio = float(setting(self.config, "compression.target_ratio", 0.20))
        self.tail_budget_tokens = tail_budget(self.threshold_tokens, ratio)
        self.protect_first_n = int(setting(self.config, "compression.protect_first_n", 3))

    def update_from_response(self, usage: Any) -> None:
        # Only what the provider reports it read counts; completion (reasoning) tokens never trigger.
        self.last_prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        self.last_completion_tokens = int(getattr(usage, "output_tokens", 0) or 0)

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        tokens = self.last_prompt_tokens if prompt_tokens is None else prompt_tokens
        return self.guard.auto_enabled and tokens >= self.threshold_tokens

    def resume_automatic(self) -> None:
        """``/compress``: switch automatic compression back on after anti-thrashing stopped it."""
        self.guard.resume()

    def on_session_reset(self) -> None:
        super().on_session_reset()
        self.guard.reset()
        self.system_note = None

    def cut(self, messages: list[dict[str, Any]]) -> Cut:
        """Phases 1 and 2, shared by both engines: find head and tail, prune what lies between."""
        system = messages[0] if messages and messages[0].get("role") == "system" else None
        body, previous, floor = extract_handoff(messages[1:] if system else messages)
        bounds = find_boundaries(
            body,
            protect_first_n=self.protect_first_n,  # the head stays protected across compressions
            tail_budget=self.tail_budget_tokens,
            min_tail_start=floor,
        )
        newest = last_index(body, "user")
        pruned = prune(body, bounds.head_end, bounds.tail_start, keep={newest} if newest is not None else ())
        return Cut(system, body, previous, newest, pruned, split(pruned, bounds, original=body))

    def finish(
        self, messages: list[dict[str, Any]], result: list[dict[str, Any]], system: dict[str, Any] | None, *, noted: bool = True
    ) -> dict[str, Any]:
        """Put the system message back (with the compaction note when ``noted``) and record the compression.

        Returns the estimated tokens before and after and the anti-thrashing warning, if any.
        """
        if system is not None:
            result.insert(0, with_system_note(system) if noted else system)
        before, after = estimate_tokens(messages), estimate_tokens(result)
        self.compression_count += 1
        self.system_note = SYSTEM_NOTE
        self.last_prompt_tokens = after  # until the next response reports the real number
        return {"before": before, "after": after, "warning": self.guard.record(before, after)}

    def get_status(self) -> dict[str, Any]:
        return {**super().get_status(), "auto_compression": self.guard.auto_enabled, "warning": self.guard.warning}
