"""The rows a session store keeps: column lists, and messages encoded to and decoded from them.

Shared by every backend that stores the same rows (SQLite here, PostgreSQL in
``hermes.plugins.session_stores``), so a message reads back the same everywhere.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from .content import decode_content, encode_content, from_json, strip_images, to_json, tool_args_text

__all__ = ["CHAT_COLUMNS", "MESSAGE_COLUMNS", "SESSION_COLUMNS", "chat_rows", "decode_message", "message_row", "new_session_id", "page_offset"]

SESSION_COLUMNS = (
    "id", "source", "model", "system_prompt", "parent_session_id", "started_at", "ended_at",
    "end_reason", "title", "message_count", "tool_call_count", "api_call_count",
    "compression_count", "input_tokens", "output_tokens", "cache_read_tokens",
    "cache_write_tokens", "reasoning_tokens", "estimated_cost_usd", "cost_status", "updated_at", "tenant",
)  # fmt: skip
_MESSAGE_COLUMNS = (
    "id", "session_id", "role", "content", "content_parts", "tool_calls", "tool_call_id",
    "tool_name", "reasoning", "finish_reason", "token_count", "timestamp", "marker",
)  # fmt: skip
_INSERT_MESSAGE = (
    "INSERT INTO messages (session_id, role, content, content_parts, tool_calls, tool_call_id, "
    "tool_name, reasoning, finish_reason, token_count, timestamp, tool_args, marker) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
)



def new_session_id(now: datetime | None = None) -> str:
    """``YYYYMMDD_HHMMSS_`` plus 6 hex digits: sortable by time, unique in practice."""
    return (now or datetime.now()).strftime("%Y%m%d_%H%M%S_") + secrets.token_hex(3)


def page_offset(offset: int) -> int:
    """``list_sessions``'s ``offset``, checked (any backend): a page never starts before the first row."""
    if int(offset) < 0:
        raise ValueError(f"offset must be zero or more, not {offset!r}")
    return int(offset)


def _message_row(session_id: str, message: Mapping[str, Any], now: float) -> tuple[Any, ...]:
    content, parts = encode_content(strip_images(message.get("content")))
    tool_calls = message.get("tool_calls")
    return (
        session_id,
        message["role"],
        content,
        parts,
        to_json(tool_calls) if tool_calls is not None else None,
        message.get("tool_call_id"),
        message.get("tool_name", message.get("name")),
        message.get("reasoning", message.get("reasoning_content")),
        message.get("finish_reason"),
        message.get("token_count"),
        float(message.get("timestamp") or now),
        tool_args_text(tool_calls),
        message.get("marker"),
    )


def _decode_message(row: sqlite3.Row | tuple[Any, ...]) -> dict[str, Any]:
    data = dict(zip(_MESSAGE_COLUMNS, row))
    data["content"] = decode_content(data["content"], data.pop("content_parts"))
    data["tool_calls"] = from_json(data["tool_calls"])
    return data


#: What :func:`chat_rows` reads: the columns a resumed conversation carries (the marker too:
#: engines find their handoff note by it after a resume).
CHAT_COLUMNS = ("role", "content", "content_parts", "tool_calls", "tool_call_id", "tool_name", "reasoning", "marker")


def _chat_rows(rows: Iterable[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """Stored messages as the loop sends them to a provider, straight from rows of :data:`CHAT_COLUMNS`:
    role and content, and each of tool_calls, tool_call_id, tool_name, reasoning and marker that is set."""
    # One loop with decode_content and from_json inlined, not a call per row: this runs once
    # per message of a resumed session, and the calls alone cost a tenth of a long load.
    loads = json.loads
    out = []
    for role, content, parts, tool_calls, tool_call_id, tool_name, reasoning, marker in rows:
        message: dict[str, Any] = {"role": role, "content": content if parts is None else loads(parts)}
        if tool_calls is not None:
            message["tool_calls"] = loads(tool_calls)
        if tool_call_id is not None:
            message["tool_call_id"] = tool_call_id
        if tool_name is not None:
            message["tool_name"] = tool_name
        if reasoning is not None:
            message["reasoning"] = reasoning
        if marker is not None:
            message["marker"] = marker
        out.append(message)
    return out


# Public names for other backends, which store the same rows (hermes.plugins.session_stores).
MESSAGE_COLUMNS = _MESSAGE_COLUMNS
message_row = _message_row
decode_message = _decode_message
chat_rows = _chat_rows
