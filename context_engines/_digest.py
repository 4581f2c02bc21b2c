"""A deterministic digest of dropped messages: what a reader needs without any model call.

Used by ``masking`` as its handoff and by ``compressor`` as the fallback when
the summary model fails (it says plainly that it is not a summary).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ._messages import call_arguments, call_name, text_of

__all__ = ["digest"]

_PATH_KEYS = ("path", "file", "file_path", "filename")
_MAX_LINES = 20


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def digest(
    messages: Sequence[dict[str, Any]],
    *,
    title: str,
    last_request: str | None = None,
    previous: str | None = None,
) -> str:
    """Tools used, files touched, recent actions and the requests made in ``messages``."""
    tools: Counter[str] = Counter()
    files: dict[str, None] = {}
    actions: list[str] = []
    requests: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "user" and text_of(message).strip():
            requests.append(_clip(text_of(message), 160))
        for call in message.get("tool_calls") or ():
            name = call_name(call)
            tools[name] += 1
            args = call_arguments(call)
            for key in _PATH_KEYS:
                if isinstance(args.get(key), str) and args[key]:
                    files[_clip(args[key], 120)] = None
        if role == "tool":
            line = text_of(message).strip().splitlines()
            if line:
                actions.append(_clip(line[0], 160))
    lines = [title, ""]
    if last_request:
        lines += ["Latest user request (verbatim):", last_request.strip(), ""]
    if previous:
        lines += ["Earlier handoff:", _clip(previous, 2_000), ""]
    lines.append(f"Dropped: {len(messages)} messages, {len(requests)} user requests.")
    if tools:
        lines.append("Tools used: " + ", ".join(f"{n} ×{c}" for n, c in sorted(tools.items())))
    if files:
        lines.append("Files touched: " + ", ".join(list(files)[-_MAX_LINES:]))
    if requests:
        lines += ["Earlier user requests:", *(f"- {r}" for r in requests[-5:])]
    if actions:
        lines += ["Recent tool results:", *(f"- {a}" for a in actions[-_MAX_LINES:])]
    return "\n".join(lines)
