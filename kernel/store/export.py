"""A session as JSON Lines (lossless) or Markdown (for people)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from ..redact import redact_data

__all__ = ["EXPORT_FORMATS", "content_text", "export_jsonl", "export_markdown", "iso_time"]

EXPORT_FORMATS = ("jsonl", "markdown")


def iso_time(timestamp: float | None) -> str | None:
    """Seconds since the epoch as ISO 8601 in UTC."""
    if timestamp is None:
        return None
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).isoformat(timespec="seconds")


def export_jsonl(session: dict[str, Any], messages: list[dict[str, Any]]) -> str:
    """First line the session row, then one line per message, as stored but with secrets redacted."""
    session, messages = redact_data(session), redact_data(messages)
    lines = [json.dumps({"type": "session", **session}, ensure_ascii=False)]
    lines += [json.dumps({"type": "message", **m}, ensure_ascii=False) for m in messages]
    return "\n".join(lines) + "\n"


def content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "```json\n" + json.dumps(content, ensure_ascii=False, indent=2) + "\n```"


def export_markdown(session: dict[str, Any], messages: list[dict[str, Any]]) -> str:
    """A readable transcript: heading with the session's facts, one section per message (secrets redacted)."""
    session, messages = redact_data(session), redact_data(messages)
    title = session.get("title") or session["id"]
    out = [f"# {title}", ""]
    for key in ("id", "source", "tenant", "model", "parent_session_id", "started_at", "ended_at", "end_reason"):
        value = session.get(key)
        if value is not None:
            out.append(f"- **{key}**: {iso_time(value) if key.endswith('_at') else value}")
    out.append("")
    for message in messages:
        who = message["role"] + (f" ({message['tool_name']})" if message.get("tool_name") else "")
        out += [f"## {who} · {iso_time(message['timestamp'])}", ""]
        if message.get("reasoning"):
            out += ["> " + line for line in message["reasoning"].splitlines()] + [""]
        if message.get("content") is not None:
            out += [content_text(message["content"]), ""]
        for call in message.get("tool_calls") or []:
            out += ["```json", json.dumps(call, ensure_ascii=False, indent=2), "```", ""]
    return "\n".join(out).rstrip() + "\n"
