"""``POST /v1/responses``: server-side sessions continued by ``previous_response_id`` or ``conversation``.

A response id names the session and the number of messages it held when the
response was made (``resp_<count>_<session id>``), so any process on the same
store can continue it, and continuing an older response branches from there.
The agent's tool calls appear as ``mcp_call`` output items (server label
``hermes``): the Responses API's shape for tools run by the server.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from typing import Any

from .errors import RequestError
from .wire_chat import text_of

__all__ = ["ResponsesRequest", "ResponsesStream", "parse_responses", "parse_response_id", "response_id", "response_json"]

_CONVERSATION_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
SERVER_LABEL = "hermes"


def response_id(count: int, session_id: str) -> str:
    return f"resp_{count}_{session_id}"


def parse_response_id(text: str) -> tuple[str, int] | None:
    """``(session_id, message_count)`` of a response id, or None when it is not one of ours."""
    match = re.fullmatch(r"resp_(\d+)_(.+)", text or "")
    return (match.group(2), int(match.group(1))) if match else None


class ResponsesRequest:
    def __init__(self, model: str, message: str, history: list[dict[str, Any]], instructions: str | None,
                 previous: str | None, conversation: str | None, stream: bool) -> None:  # fmt: skip
        self.model, self.message, self.history, self.instructions = model, message, history, instructions
        self.previous, self.conversation, self.stream = previous, conversation, stream


def parse_responses(body: Any) -> ResponsesRequest:
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    raw = body.get("input")
    items: list[dict[str, Any]] = []
    if isinstance(raw, str):
        items = [{"role": "user", "content": raw}]
    elif isinstance(raw, list):
        for index, item in enumerate(raw):
            where = f"input[{index}]"
            if not isinstance(item, dict) or item.get("type", "message") != "message":
                kind = item.get("type") if isinstance(item, dict) else type(item).__name__
                raise RequestError(f"{where}: only message items are supported, got {kind!r}", param=where)
            role = item.get("role")
            if role not in ("user", "assistant", "system", "developer"):
                raise RequestError(f"{where} needs a role of user, assistant, system or developer", param=where)
            items.append({"role": role, "content": text_of(item.get("content"), f"{where}.content")})
    else:
        raise RequestError("'input' must be a string or a list of message items", param="input")
    system = [i["content"] for i in items if i["role"] in ("system", "developer")]
    history = [i for i in items if i["role"] in ("user", "assistant")]
    if not history or history[-1]["role"] != "user" or not history[-1]["content"].strip():
        raise RequestError("the input must end with a user message with text", param="input")
    message = history.pop()["content"]
    conversation = body.get("conversation")
    if isinstance(conversation, dict):
        conversation = conversation.get("id")
    if conversation is not None and (not isinstance(conversation, str) or not _CONVERSATION_RE.match(conversation)):
        raise RequestError("'conversation' must be an id of 1-64 letters, digits, '.', '_' or '-'", param="conversation")
    previous = body.get("previous_response_id")
    if previous is not None and not isinstance(previous, str):
        raise RequestError("'previous_response_id' must be a string", param="previous_response_id")
    if previous and conversation:
        raise RequestError("give previous_response_id or conversation, not both", param="conversation")
    instructions = body.get("instructions")
    instructions = "\n\n".join([*(s for s in system if s.strip()), *([instructions] if isinstance(instructions, str) else [])])
    return ResponsesRequest(
        model=str(body.get("model") or ""), message=message, history=history, instructions=instructions or None,
        previous=previous or None, conversation=conversation, stream=bool(body.get("stream")),
    )  # fmt: skip


def _usage(tokens: dict[str, int]) -> dict[str, Any]:
    prompt = tokens.get("input_tokens", 0) + tokens.get("cache_read_tokens", 0) + tokens.get("cache_write_tokens", 0)
    output = tokens.get("output_tokens", 0)
    return {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": tokens.get("cache_read_tokens", 0)},
            "output_tokens": output, "output_tokens_details": {"reasoning_tokens": tokens.get("reasoning_tokens", 0)},
            "total_tokens": prompt + output}  # fmt: skip


def _message_item(text: str, item_id: str | None = None, status: str = "completed") -> dict[str, Any]:
    return {"id": item_id or "msg_" + secrets.token_hex(12), "type": "message", "role": "assistant", "status": status,
            "content": [{"type": "output_text", "text": text, "annotations": []}] if status == "completed" else []}  # fmt: skip


def _tool_item(call_id: str, name: str, arguments: Any, status: str, error: bool = False) -> dict[str, Any]:
    return {"id": f"mcp_{call_id}", "type": "mcp_call", "server_label": SERVER_LABEL, "name": name,
            "arguments": json.dumps(arguments if arguments is not None else {}), "status": status,
            "output": None, "error": "the tool reported an error" if error else None}  # fmt: skip


def _envelope(rid: str, model: str, status: str, output: list[dict[str, Any]], created: int,
              previous: str | None, conversation: str | None) -> dict[str, Any]:  # fmt: skip
    return {"id": rid, "object": "response", "created_at": created, "status": status, "model": model,
            "output": output, "previous_response_id": previous, "conversation": {"id": conversation} if conversation else None,
            "error": None, "incomplete_details": None, "instructions": None, "metadata": {},
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "store": True, "usage": None}  # fmt: skip


def _status(result: dict[str, Any]) -> str:
    return "completed" if result.get("completed") else "incomplete"


def tool_items(messages: list[dict[str, Any]], start: int) -> list[dict[str, Any]]:
    """``mcp_call`` items for the tool calls in ``messages[start:]``, with their outputs."""
    outputs = {m.get("tool_call_id"): m for m in messages[start:] if m.get("role") == "tool"}
    items = []
    for message in messages[start:]:
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except ValueError:
                arguments = function.get("arguments")
            result = outputs.get(call.get("id")) or {}
            item = _tool_item(str(call.get("id")), str(function.get("name")), arguments, "completed")
            content = result.get("content")
            item["output"] = content if isinstance(content, str) else json.dumps(content)
            items.append(item)
    return items


def response_json(request: ResponsesRequest, outcome: Any, turn_start: int, conversation: str | None) -> dict[str, Any]:
    result = outcome.result
    output = tool_items(result.get("messages") or [], turn_start) + [_message_item(result.get("final_response") or "")]
    data = _envelope(response_id(outcome.message_count, outcome.session_id), request.model, _status(result), output,
                     int(time.time()), request.previous, conversation)  # fmt: skip
    data["usage"] = _usage(outcome.usage)
    return data


class ResponsesStream:
    """Renders agent events as Responses API SSE events, numbered in order."""

    def __init__(self, request: ResponsesRequest, conversation: str | None) -> None:
        self.request = request
        self.conversation = conversation
        self.created = int(time.time())
        self.rid = "resp_pending_" + secrets.token_hex(6)
        self.output: list[dict[str, Any]] = []
        self._seq = 0
        self._text: list[str] | None = None  # the open message item's text
        self._calls: dict[str, int] = {}

    def _event(self, kind: str, **fields: Any) -> bytes:
        data = {"type": kind, "sequence_number": self._seq, **fields}
        self._seq += 1
        return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()

    def _envelope(self, status: str) -> dict[str, Any]:
        return _envelope(self.rid, self.request.model, status, list(self.output), self.created,
                         self.request.previous, self.conversation)  # fmt: skip

    def start(self) -> bytes:
        return self._event("response.created", response=self._envelope("in_progress")) + \
            self._event("response.in_progress", response=self._envelope("in_progress"))

    def _close_text(self) -> bytes:
        if self._text is None:
            return b""
        index = len(self.output) - 1
        item = self.output[index]
        text = "".join(self._text)
        self._text = None
        part = {"type": "output_text", "text": text, "annotations": []}
        item.update(status="completed", content=[part])
        return (self._event("response.output_text.done", item_id=item["id"], output_index=index, content_index=0, text=text)
                + self._event("response.content_part.done", item_id=item["id"], output_index=index, content_index=0, part=part)
                + self._event("response.output_item.done", output_index=index, item=item))  # fmt: skip

    def event(self, event: Any) -> bytes | None:
        if event.kind == "text" and event.text:
            out = b""
            if self._text is None:
                item = _message_item("", status="in_progress")
                self.output.append(item)
                self._text = []
                index = len(self.output) - 1
                out += self._event("response.output_item.added", output_index=index, item=item)
                out += self._event("response.content_part.added", item_id=item["id"], output_index=index, content_index=0,
                                   part={"type": "output_text", "text": "", "annotations": []})  # fmt: skip
            self._text.append(event.text)
            index = len(self.output) - 1
            return out + self._event("response.output_text.delta", item_id=self.output[index]["id"], output_index=index,
                                     content_index=0, delta=event.text, logprobs=[])  # fmt: skip
        if event.kind == "tool_start":
            out = self._close_text()
            call_id = str(event.data.get("call_id"))
            item = _tool_item(call_id, event.text, event.data.get("arguments"), "in_progress")
            self.output.append(item)
            index = self._calls[call_id] = len(self.output) - 1
            return out + self._event("response.output_item.added", output_index=index, item=item) + \
                self._event("response.mcp_call.in_progress", item_id=item["id"], output_index=index)
        if event.kind == "tool_end":
            call_id = str(event.data.get("call_id"))
            index = self._calls.get(call_id)
            if index is None:
                return None
            item = self.output[index]
            failed = bool(event.data.get("error"))
            item.update(status="failed" if failed else "completed", error="the tool reported an error" if failed else None)
            kind = "response.mcp_call.failed" if failed else "response.mcp_call.completed"
            return self._event(kind, item_id=item["id"], output_index=index) + \
                self._event("response.output_item.done", output_index=index, item=item)
        return None

    def end(self, outcome: Any) -> bytes:
        out = self._close_text()
        self.rid = response_id(outcome.message_count, outcome.session_id)
        final = self._envelope(_status(outcome.result))
        final["usage"] = _usage(outcome.usage)
        kind = "response.completed" if final["status"] == "completed" else "response.incomplete"
        return out + self._event(kind, response=final)

    def error(self, message: str, code: str) -> bytes:
        return self._event("error", code=code, message=message, param=None)
