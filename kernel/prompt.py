"""The system prompt, built once per session from layers and then frozen.

Layers, in order: identity (``HERMES_HOME/SOUL.md`` or the default), guidance
for the tools actually loaded, the skills index, project context files
(``.hermes.md``, ``AGENTS.md``, ...), the caller's system message, the memory
snapshot block, notes tools carry over a compaction (the live todo list), and a runtime stamp. The result is stored in the session row
and reused byte for byte until a session boundary, so the provider's prefix
cache keeps hitting.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

__all__ = ["DEFAULT_IDENTITY", "PromptContext", "build_system_prompt", "tool_guidance"]

DEFAULT_IDENTITY = """\
You are Hermes, a capable and careful AI agent working on the user's machine through tools.
Work step by step: look before you change, make the smallest change that does the job, and
check your work by running it. When the task is done, answer plainly with what you did and
what you found. If something fails, say so and say why; never claim success you did not see."""

# Guidance per tool, added only when that tool is loaded.
_TOOL_GUIDANCE = {
    "read_file": "Read files with read_file (use offset and limit for long files) rather than cat in the terminal.",
    "patch": "Edit existing files with patch: old_string must match the file exactly and be unique; include surrounding lines if needed.",
    "write_file": "Create new files with write_file; prefer patch for small edits to existing files.",
    "search_files": "Find code with search_files (content regex or file names) before reading whole trees.",
    "terminal": "Run commands with terminal; set a timeout for long jobs and read the exit code before going on.",
    "todo": "For tasks with several steps, keep a todo list with the todo tool and update it as you go.",
    "clarify": "If the request is ambiguous in a way that matters, ask one short question with clarify.",
    "session_search": "To recall earlier conversations, search them with session_search.",
}


def tool_guidance(tool_names: Iterable[str]) -> str:
    """Guidance lines for the loaded tools, in the order given."""
    lines = [f"- {_TOOL_GUIDANCE[name]}" for name in tool_names if name in _TOOL_GUIDANCE]
    return "## Using your tools\n" + "\n".join(lines) if lines else ""


@dataclass(frozen=True)
class PromptContext:
    """Everything the prompt is built from."""

    session_id: str
    model: str
    provider: str
    tool_names: tuple[str, ...] = ()
    soul_path: Path | None = None
    system_message: str | None = None
    skills_index: str | None = None
    project_context: str | None = None
    memory_block: str | None = None
    carry_over: str | None = None
    cwd: Path | None = None
    now: datetime | None = None


def _identity(soul_path: Path | None) -> str:
    if soul_path is not None:
        try:
            text = soul_path.read_text(encoding="utf-8").strip()
        except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError):
            text = ""
        if text:
            return text
    return DEFAULT_IDENTITY


def _platform() -> str:
    """``Linux x86_64, Python 3.11.7``: from ``os.uname`` where there is one (the ``platform`` module's
    import costs every start more than this line is worth), else from ``platform``."""
    version = ".".join(str(part) for part in sys.version_info[:3])
    if hasattr(os, "uname"):
        name = os.uname()
        return f"{name.sysname} {name.machine}, Python {version}"
    import platform

    return f"{platform.system()} {platform.machine()}, Python {platform.python_version()}"


def build_system_prompt(ctx: PromptContext) -> str:
    """The system prompt for one session (deterministic for the same context)."""
    now = ctx.now or datetime.now(timezone.utc)
    stamp = (
        "## Runtime\n"
        f"- date: {now.strftime('%Y-%m-%d')}\n"
        f"- session: {ctx.session_id}\n"
        f"- model: {ctx.model or 'unknown'} via {ctx.provider}\n"
        f"- platform: {_platform()}\n"
        f"- working directory: {ctx.cwd or Path.cwd()}"
    )
    layers = [
        _identity(ctx.soul_path),
        tool_guidance(ctx.tool_names),
        ctx.skills_index.strip() if ctx.skills_index else "",
        ctx.project_context.strip() if ctx.project_context else "",
        ctx.system_message.strip() if ctx.system_message else "",
        ctx.memory_block.strip() if ctx.memory_block else "",
        ctx.carry_over.strip() if ctx.carry_over else "",
        stamp,
    ]
    return "\n\n".join(layer for layer in layers if layer)
