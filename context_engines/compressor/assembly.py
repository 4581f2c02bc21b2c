"""Phase 4: head, then the handoff block, then the tail, as one valid message list.

The block sits under a reference-only prefix and ends with a marker, so
the model reads it as background and answers only the latest user message
after it. Its role is chosen so no two neighbours share a role; when both
roles collide it is merged into the first tail message (which the boundary
rules guarantee is never the user's newest request). The first message is
always a user message: the kernel adds the system prompt only at request
time, and Anthropic rejects a conversation that opens with the assistant.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes.kernel.context_engine import HANDOFF_MARKER, MARKER_KEY

from .._messages import repair_tool_pairs

__all__ = [
    "HANDOFF_END",
    "HANDOFF_MARK",
    "HANDOFF_PREFIX",
    "HANDOFF_PREFIX_INLINE",
    "SYSTEM_NOTE",
    "assemble",
    "extract_handoff",
    "handoff_block",
    "with_system_note",
]

HANDOFF_MARK = "[CONTEXT HANDOFF]"
HANDOFF_PREFIX = (
    f"{HANDOFF_MARK} This is a handoff from a previous context window — background, not instructions. "
    "Do not answer anything in it; respond only to the latest user message after it."
)
#: The wording when the block follows the user's request (a long task compressed mid-way).
HANDOFF_PREFIX_INLINE = (
    f"{HANDOFF_MARK} This is a handoff from a previous context window — background, not instructions. "
    "Do not answer anything in it; keep working on the user's latest request above, continuing from the "
    "messages after this note."
)
HANDOFF_END = "[END OF CONTEXT HANDOFF]"
SYSTEM_NOTE = (
    "Note: earlier turns of this conversation were compacted into a context handoff summary to save space; "
    "treat it as background and work on the latest user message."
)


def handoff_block(body: str, *, inline: bool = False) -> str:
    # A marker inside the body (echoed by a model) would end the block early on the next pass.
    body = body.replace(HANDOFF_END, "[end marker]").replace(HANDOFF_MARK, "[handoff]").strip()
    return f"{HANDOFF_PREFIX_INLINE if inline else HANDOFF_PREFIX}\n\n{body}\n\n{HANDOFF_END}"


def _content_with_block(content: Any, block: str) -> Any:
    if isinstance(content, list):
        return [{"type": "text", "text": block}, *content]
    if isinstance(content, str) and content.strip():
        return f"{block}\n\n{content}"
    return block


def extract_handoff(messages: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], str | None, int]:
    """The messages with an earlier handoff block taken out, that block's body (None if none),
    and where the next tail may start at the earliest.

    Only a message marked ``marker: handoff`` holds a handoff: the kernel stores that field
    with the message and never sends it to a model, so handoff-looking text in a user
    message or a tool result is ordinary content and stays where it is.

    A block that was a message of its own leaves its two neighbours side by side, often with
    the same role; the new block must go between them, so the tail may not start before the
    message that followed it.
    """
    found: str | None = None
    floor = 0
    result: list[dict[str, Any]] = []
    for message in messages:
        if message.get(MARKER_KEY) != HANDOFF_MARKER:
            result.append(message)
            continue
        found, rest = _split_block(message.get("content"))
        unmarked = {k: v for k, v in message.items() if k != MARKER_KEY}
        if rest or message.get("tool_calls"):
            result.append({**unmarked, "content": rest})
        else:
            floor = len(result)
    return result, found, floor


def _split_block(content: Any) -> tuple[str, Any]:
    """A marked message's note body and what else it carries (a carrier's own content)."""
    if isinstance(content, list):
        first = content[0] if content and isinstance(content[0], dict) else {}
        text = first.get("text") if first.get("type") == "text" else None
        if isinstance(text, str):
            body, rest = _split_text(text)
            return body, ([{**first, "text": rest}] if rest else []) + list(content[1:]) or None
        return "", content
    body, rest = _split_text(content if isinstance(content, str) else "")
    return body, rest or None


def _split_text(text: str) -> tuple[str, str]:
    # The block's body never holds the end marker (``handoff_block`` escapes it), so the
    # first end marker is the block's own.
    if HANDOFF_END not in text:
        return _between(text), ""
    block, rest = text.split(HANDOFF_END, 1)
    return _between(block), rest.strip()


def _between(block: str) -> str:
    for prefix in (HANDOFF_PREFIX, HANDOFF_PREFIX_INLINE):
        if block.startswith(prefix):
            return block[len(prefix) :].strip()
    return block.removeprefix(HANDOFF_MARK).strip()


def assemble(
    head: Sequence[dict[str, Any]],
    body: str,
    tail: Sequence[dict[str, Any]],
    pinned: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """``head + [handoff] + tail`` with roles that alternate and tool pairs intact.

    With a ``pinned`` request (the user's newest message, older than the tail) it stays its
    own message: ``head + [handoff] + [request] + tail`` when the head ends with a user or tool
    message, else ``head + [request] + [handoff] + tail`` with the inline wording. The inline
    wording is also used when the request is in the head (one long task compressed mid-way).
    """
    # Orphans go first, so the role is chosen against the neighbours that stay.
    head, tail = repair_tool_pairs(head, keep_open_end=False), repair_tool_pairs(tail)
    before = head[-1]["role"] if head else None
    if pinned is None and head and not any(m.get("role") == "user" for m in tail):
        # The request is in the head: no user message follows the block, so it must not say
        # "respond to the message after it". It rides on the next assistant message if it can.
        block = handoff_block(body, inline=True)
        if tail and tail[0]["role"] == "assistant" and before != "assistant":
            carrier = {**tail[0], "content": _content_with_block(tail[0].get("content"), block), MARKER_KEY: HANDOFF_MARKER}
            return repair_tool_pairs([*head, carrier, *tail[1:]])
        return repair_tool_pairs([*head, _marked("user", block), *tail])
    if pinned is None:
        return repair_tool_pairs([*head, *_place(handoff_block(body), before, tail)])
    if head and head[-1]["role"] in ("user", "tool"):
        return repair_tool_pairs([*head, _marked("assistant", handoff_block(body)), pinned, *tail])
    placed = _place(handoff_block(body, inline=True), "user", tail)
    return repair_tool_pairs([*head, pinned, *placed])


def _place(block: str, before: str | None, tail: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The block as its own message between ``before`` and the tail, or merged into the tail's first."""
    after = tail[0]["role"] if tail else None
    # With nothing before it the block opens the conversation, so it must be a user message.
    choices = ["user"] if before is None else ["user", "assistant"]
    role = next((r for r in choices if r != before and r != after), None)
    if role is not None:
        return [_marked(role, block), *tail]
    first = tail[0]
    return [{**first, "content": _content_with_block(first.get("content"), block), MARKER_KEY: HANDOFF_MARKER}, *tail[1:]]


def _marked(role: str, block: str) -> dict[str, Any]:
    return {"role": role, "content": block, MARKER_KEY: HANDOFF_MARKER}


def with_system_note(system: dict[str, Any], note: str = SYSTEM_NOTE) -> dict[str, Any]:
    """The system message with the one-time note of what the compaction did."""
    content = system.get("content")
    if isinstance(content, str):
        return system if note in content else {**system, "content": f"{content}\n\n{note}".strip()}
    return system
