"""``POST /v1/chat/completions``: the client's history in, the agent's answer out (JSON or SSE chunks).

Stateless, as Chat Completions clients expect: every request is a new
session seeded with the history the client sent, ended when the turn ends.
The agent's own tool calls have no place in this API's message shape, so
they travel in a ``hermes`` field: a list on the JSON answer, and chunks with
no choices in the stream (clients that do not know the field ignore it).
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from .errors import RequestError

__all__ = ["ChatRequest", "ChatStream", "chat_json", "parse_chat"]


def text_of(content: Any, where: str) -> str:
    """Text of a message's content: a string, or the text parts of a list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, dict) and part.get("type") in ("image_url", "input_image", "input_file", "file"):
                raise RequestError(f"{where}: only text content is supported, got a {part['type']} part", param=where)
        return "\n".join(parts)
    raise RequestError(f"{where} must be a string or a list of text parts", param=where)


class ChatRequest:
    """A parsed request: ``system`` text, prior ``history`` and the new user ``message``."""

    def __init__(self, model: str, system: str | None, history: list[dict[str, Any]], message: str,
                 stream: bool, include_usage: bool) -> None:  # fmt: skip
        self.model, self.system, self.history, self.message = model, system, history, message
        self.stream, self.include_usage = stream, include_usage


def parse_chat(body: Any) -> ChatRequest:
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("'messages' must be a non-empty list", param="messages")
    system: list[str] = []
    history: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(message, dict) or message.get("role") not in ("system", "developer", "user", "assistant", "tool"):
            raise RequestError(f"{where} needs a role of system, developer, user, assistant or tool", param=where)
        role = message["role"]
        text = text_of(message.get("content"), f"{where}.content")
        if role in ("system", "developer"):
            system.append(text)
            continue
        item: dict[str, Any] = {"role": role, "content": text}
        if role == "assistant" and message.get("tool_calls"):
            item["tool_calls"] = message["tool_calls"]
        if role == "tool":
            if not message.get("tool_call_id"):
                raise RequestError(f"{where} is a tool result without tool_call_id", param=where)
            item["tool_call_id"] = message["tool_call_id"]
        history.append(item)
    if not history or history[-1]["role"] != "user" or not history[-1]["content"].strip():
        raise RequestError("the last message must be a user message with text", param="messages")
    last = history.pop()
    options = body.get("stream_options") or {}
    return ChatRequest(
        model=str(body.get("model") or ""), system="\n\n".join(s for s in system if s.strip()) or None,
        history=history, message=last["content"], stream=bool(body.get("stream")),
        include_usage=bool(isinstance(options, dict) and options.get("include_usage")),
    )  # fmt: skip


def _usage(tokens: dict[str, int]) -> dict[str, Any]:
    prompt = tokens.get("input_tokens", 0) + tokens.get("cache_read_tokens", 0) + tokens.get("cache_write_tokens", 0)
    completion = tokens.get("output_tokens", 0)
    return {
        "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": tokens.get("cache_read_tokens", 0)},
        "completion_tokens_details": {"reasoning_tokens": tokens.get("reasoning_tokens", 0)},
    }  # fmt: skip


def _finish(result: dict[str, Any]) -> str:
    return "length" if result.get("budget_exhausted") and not result.get("completed") else "stop"


def chat_json(model: str, outcome: Any, tools: list[dict[str, Any]]) -> dict[str, Any]:
    result = outcome.result
    return {
        "id": "chatcmpl-" + secrets.token_hex(12),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": result.get("final_response") or ""},
                     "finish_reason": _finish(result), "logprobs": None}],  # fmt: skip
        "usage": _usage(outcome.usage),
        "hermes": {"session_id": outcome.session_id, "tools": tools},
    }


class ChatStream:
    """Renders agent events as ``chat.completion.chunk`` SSE lines."""

    def __init__(self, model: str, include_usage: bool) -> None:
        self.id = "chatcmpl-" + secrets.token_hex(12)
        self.model = model
        self.include_usage = include_usage
        self.created = int(time.time())

    def _chunk(self, choices: list[dict[str, Any]], **extra: Any) -> bytes:
        data = {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                "choices": choices, **extra}  # fmt: skip
        return f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()

    def start(self) -> bytes:
        return self._chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])

    def event(self, event: Any) -> bytes | None:
        if event.kind == "text" and event.text:
            return self._chunk([{"index": 0, "delta": {"content": event.text}, "finish_reason": None}])
        if event.kind in ("tool_start", "tool_end"):
            info = {"type": event.kind, "name": event.text, "call_id": event.data.get("call_id")}
            if event.kind == "tool_end":
                info["error"] = bool(event.data.get("error"))
            return self._chunk([], hermes=info)
        return None

    def end(self, outcome: Any) -> bytes:
        out = self._chunk([{"index": 0, "delta": {}, "finish_reason": _finish(outcome.result)}],
                          hermes={"type": "done", "session_id": outcome.session_id})  # fmt: skip
        if self.include_usage:
            out += self._chunk([], usage=_usage(outcome.usage))
        return out + b"data: [DONE]\n\n"

    @staticmethod
    def error(payload: dict[str, Any]) -> bytes:
        return f"data: {json.dumps(payload)}\n\n".encode()
