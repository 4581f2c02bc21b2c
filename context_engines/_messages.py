"""Message-list helpers both built-in engines share: text, images, tool groups, tokens.

Everything here treats messages as the kernel stores them (OpenAI Chat
shape: ``role``, ``content`` as text or parts, ``tool_calls``,
``tool_call_id``) and never mutates its input.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes.kernel import decode_arguments
from hermes.kernel.context_engine import estimate_tokens

__all__ = [
    "IMAGE_PLACEHOLDER",
    "call_arguments",
    "call_name",
    "group_starts",
    "has_images",
    "last_index",
    "message_tokens",
    "repair_tool_pairs",
    "strip_images",
    "text_of",
]

IMAGE_PLACEHOLDER = "[image removed to save context]"
_STUB_RESULT = "(no result was recorded for this call; it was lost when earlier context was compacted)"


def text_of(message: dict[str, Any]) -> str:
    """The message's text, image parts left out (so no regex ever walks base64 data)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text") or "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def has_images(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(p, dict) and p.get("type") != "text" for p in content)


def strip_images(message: dict[str, Any]) -> dict[str, Any]:
    """A copy with every image part replaced by one short text part."""
    if not has_images(message):
        return message
    parts = [p for p in message["content"] if isinstance(p, dict) and p.get("type") == "text" and p.get("text")]
    parts.append({"type": "text", "text": IMAGE_PLACEHOLDER})
    return {**message, "content": parts}


def message_tokens(message: dict[str, Any]) -> int:
    return estimate_tokens([message])


def call_name(call: dict[str, Any]) -> str:
    return str((call.get("function") or {}).get("name") or "tool")


def call_arguments(call: dict[str, Any]) -> dict[str, Any]:
    raw = (call.get("function") or {}).get("arguments")
    try:
        parsed = decode_arguments(raw) if isinstance(raw, str) else raw
    except ValueError:  # not JSON, too deep or too long
        return {}
    return parsed if isinstance(parsed, dict) else {}


def group_starts(messages: Sequence[dict[str, Any]]) -> list[int]:
    """Indices where a cut is allowed: every message that is not a tool result.

    Cutting only there keeps an assistant's tool calls and their results on
    the same side of any boundary.
    """
    return [i for i, m in enumerate(messages) if m.get("role") != "tool"]


def last_index(messages: Sequence[dict[str, Any]], role: str, *, with_text: bool = False) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") == role and (not with_text or text_of(message).strip()):
            return index
    return None


def repair_tool_pairs(messages: Sequence[dict[str, Any]], *, keep_open_end: bool = True) -> list[dict[str, Any]]:
    """Orphaned tool results dropped; calls without a result given a stub result right after them.

    With ``keep_open_end`` a batch still running at the very end (calls whose
    results have not arrived yet) stays open: stubbing it would turn the real
    results into orphans when they arrive.
    """
    repaired: list[dict[str, Any]] = []
    open_calls: dict[str, str] = {}

    def close() -> None:
        for call_id, name in open_calls.items():
            repaired.append({"role": "tool", "tool_call_id": call_id, "tool_name": name, "content": _STUB_RESULT})
        open_calls.clear()

    for message in messages:
        if message.get("role") == "tool":
            if message.get("tool_call_id") in open_calls:
                del open_calls[message["tool_call_id"]]
                repaired.append(message)
            continue
        close()
        repaired.append(message)
        if message.get("role") == "assistant":
            for call in message.get("tool_calls") or ():
                open_calls[str(call.get("id"))] = call_name(call)
    if not keep_open_end:
        close()
    return repaired
