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
from .wire_chat import check_tool_choice, check_type, parse_tools, pending_calls, text_of, unknown_call

__all__ = ["ResponsesRequest", "ResponsesStream", "parse_responses", "parse_response_id", "response_id", "response_json"]

_CONVERSATION_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
SERVER_LABEL = "hermes"


def response_id(start: int, session_id: str) -> str:
    """The id of the response whose input starts at message ``start`` of ``session_id``.

    Known before the turn runs, so ``response.created`` and ``response.completed``
    carry the same id (the SDK's stream helpers insist on it).
    """
    return f"resp_at{start}_{session_id}"


def parse_response_id(text: str) -> tuple[str, int, bool] | None:
    """``(session_id, number, starts)`` of a response id, or None when it is not one of ours.

    ``starts``: the number is where the response's input starts (``resp_at…``);
    else it is the message count after it (the ids older servers made).
    """
    match = re.fullmatch(r"resp_(at)?(\d+)_(.+)", text or "")
    return (match.group(3), int(match.group(2)), bool(match.group(1))) if match else None


class ResponsesRequest:
    def __init__(self, model: str, message: str | None, history: list[dict[str, Any]], instructions: str | None,
                 previous: str | None, conversation: str | None, stream: bool, tools: list[dict[str, Any]] | None = None,
                 tool_results: list[dict[str, Any]] | None = None, options: dict[str, Any] | None = None,
                 echo: dict[str, Any] | None = None) -> None:  # fmt: skip
        self.model, self.message, self.history, self.instructions = model, message, history, instructions
        self.previous, self.conversation, self.stream = previous, conversation, stream
        self.tools, self.tool_results, self.options = tools or [], tool_results or [], options or {}
        self.echo = echo or {}  # request fields the response object repeats (tools, tool_choice, text)
        self.id = ""  # set by the route once it knows the session


def _output_text(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return text_of(value, where)
    raise RequestError(f"'{where}' must be a string or a list of content parts", param=where, code="invalid_type")


def _items(raw: list[Any]) -> list[dict[str, Any]]:
    """Input items as chat messages: message, function_call and function_call_output items."""
    items: list[dict[str, Any]] = []
    known: set[str] = set()
    for index, item in enumerate(raw):
        where = f"input[{index}]"
        kind = item.get("type", "message") if isinstance(item, dict) else type(item).__name__
        if kind == "message":
            role = item.get("role")
            if role not in ("user", "assistant", "system", "developer"):
                raise RequestError(f"{where} needs a role of user, assistant, system or developer", param=f"{where}.role")
            items.append({"role": role, "content": text_of(item.get("content"), f"{where}.content")})
        elif kind == "function_call":
            call_id, name, arguments = item.get("call_id"), item.get("name"), item.get("arguments")
            if not isinstance(call_id, str) or not isinstance(name, str) or not isinstance(arguments, str):
                raise RequestError(f"{where}: a function_call needs call_id, name and arguments (a JSON string)", param=where)
            call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
            last = items[-1] if items else None
            if last and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
                last["content"] = last["content"] or None
            else:
                items.append({"role": "assistant", "content": None, "tool_calls": [call]})
            known.add(call_id)
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if not isinstance(call_id, str):
                raise RequestError(f"{where}: a function_call_output needs a call_id", param=f"{where}.call_id")
            items.append({"role": "tool", "tool_call_id": call_id, "content": _output_text(item.get("output"), f"{where}.output"),
                          "_where": f"{where}.call_id", "_known": call_id in known})  # fmt: skip
        elif kind == "reasoning":
            continue  # the model's own reasoning, sent back by clients that keep it: nothing to add
        else:
            raise RequestError(f"{where}: only message, function_call and function_call_output items are supported, "
                               f"got {kind!r}", param=where)  # fmt: skip
    return items


def parse_responses(body: Any) -> ResponsesRequest:
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    check_type(body, "model", str)
    stream = check_type(body, "stream", bool)
    for name in ("temperature", "top_p"):
        check_type(body, name, int, float)
    check_type(body, "max_output_tokens", int)
    check_type(body, "metadata", dict)
    check_type(body, "store", bool)
    check_type(body, "instructions", str)
    check_type(body, "user", str)
    parallel = check_type(body, "parallel_tool_calls", bool)
    raw = body.get("input")
    if isinstance(raw, str):
        items = [{"role": "user", "content": raw}]
    elif isinstance(raw, list):
        items = _items(raw)
    else:
        raise RequestError("'input' must be a string or a list of input items", param="input")
    tools = parse_tools(body.get("tools"), "tools", flat=True)
    options: dict[str, Any] = {}
    echo: dict[str, Any] = {"tools": body.get("tools") or []}
    choice = check_tool_choice(body.get("tool_choice"), tools, flat=True)
    if choice is not None and tools:
        options["tool_choice"] = choice
        echo["tool_choice"] = body["tool_choice"]
    if parallel is not None and tools:
        options["parallel_tool_calls"] = parallel
        echo["parallel_tool_calls"] = parallel
    text = check_type(body, "text", dict)
    if text and text.get("format") is not None:
        fmt = text["format"]
        if not isinstance(fmt, dict) or fmt.get("type") not in ("text", "json_object", "json_schema"):
            raise RequestError("'text.format.type' must be text, json_object or json_schema", param="text.format")
        if fmt["type"] == "json_schema":
            if not isinstance(fmt.get("name"), str) or not isinstance(fmt.get("schema"), dict):
                raise RequestError("'text.format' needs a name and a schema", param="text.format")
            spec = {"name": fmt["name"], "schema": fmt["schema"]}
            spec.update({k: fmt[k] for k in ("strict", "description") if fmt.get(k) is not None})
            options["response_format"] = {"type": "json_schema", "json_schema": spec}
        elif fmt["type"] == "json_object":
            options["response_format"] = {"type": "json_object"}
        echo["text"] = text
    system = [i["content"] for i in items if i["role"] in ("system", "developer")]
    history = [i for i in items if i["role"] in ("user", "assistant", "tool")]
    trailing: list[dict[str, Any]] = []
    while history and history[-1]["role"] == "tool":
        trailing.insert(0, history.pop())
    message: str | None = None
    if not trailing:
        if not history or history[-1]["role"] != "user" or not history[-1]["content"].strip():
            raise RequestError("the input must end with a user message with text, or function_call_output items", param="input")
        message = history.pop()["content"]
    conversation = body.get("conversation")
    if isinstance(conversation, dict):
        conversation = conversation.get("id")
    if conversation is not None and (not isinstance(conversation, str) or not _CONVERSATION_RE.match(conversation)):
        raise RequestError("'conversation' must be an id of 1-64 letters, digits, '.', '_' or '-'", param="conversation")
    previous = check_type(body, "previous_response_id", str)
    if previous and conversation:
        raise RequestError("give previous_response_id or conversation, not both", param="conversation")
    instructions = body.get("instructions")
    instructions = "\n\n".join([*(s for s in system if s.strip()), *([instructions] if isinstance(instructions, str) else [])])
    for result in history:  # results inside the history must answer a call the input made
        if result["role"] == "tool" and not result.pop("_known"):
            raise unknown_call(result["tool_call_id"], result.pop("_where"))
        result.pop("_where", None)
    return ResponsesRequest(
        model=str(body.get("model") or ""), message=message, history=history, instructions=instructions or None,
        previous=previous or None, conversation=conversation, stream=bool(stream), tools=tools,
        tool_results=trailing, options=options, echo=echo,
    )  # fmt: skip


def check_results(results: list[dict[str, Any]], before: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The trailing tool results, checked against the calls left open in ``before`` (a 400 naming an unknown id)."""
    open_calls = pending_calls(before)
    clean = []
    for result in results:
        where = result.get("_where") or "input"
        if result["tool_call_id"] not in open_calls and not result.get("_known"):
            raise unknown_call(result["tool_call_id"], where)
        clean.append({k: v for k, v in result.items() if not k.startswith("_")})
    return clean


def _usage(tokens: dict[str, int]) -> dict[str, Any]:
    prompt = tokens.get("input_tokens", 0) + tokens.get("cache_read_tokens", 0) + tokens.get("cache_write_tokens", 0)
    output = tokens.get("output_tokens", 0)
    return {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": tokens.get("cache_read_tokens", 0)},
            "output_tokens": output, "output_tokens_details": {"reasoning_tokens": tokens.get("reasoning_tokens", 0)},
            "total_tokens": prompt + output}  # fmt: skip


def _message_item(text: str, item_id: str | None = None, status: str = "completed") -> dict[str, Any]:
    return {"id": item_id or "msg_" + secrets.token_hex(12), "type": "message", "role": "assistant", "status": status,
            "content": [{"type": "output_text", "text": text, "annotations": []}] if status == "completed" else []}  # fmt: skip


def _arguments(arguments: Any) -> str:
    """Tool arguments as the API carries them: a JSON string, encoded once."""
    return arguments if isinstance(arguments, str) else json.dumps(arguments if arguments is not None else {})


def _tool_item(call_id: str, name: str, arguments: Any, status: str, error: bool = False, output: str | None = None) -> dict[str, Any]:
    return {"id": f"mcp_{call_id}", "type": "mcp_call", "server_label": SERVER_LABEL, "name": name,
            "arguments": _arguments(arguments), "status": status,
            "output": output, "error": "the tool reported an error" if error else None}  # fmt: skip


def _function_item(call: dict[str, Any], status: str = "completed") -> dict[str, Any]:
    function = call.get("function") or {}
    return {"id": f"fc_{call.get('id')}", "type": "function_call", "call_id": str(call.get("id")),
            "name": str(function.get("name")), "arguments": _arguments(function.get("arguments")), "status": status}  # fmt: skip


def _envelope(request: ResponsesRequest, status: str, output: list[dict[str, Any]], created: int,
              conversation: str | None) -> dict[str, Any]:  # fmt: skip
    echo = request.echo
    return {"id": request.id, "object": "response", "created_at": created, "status": status, "model": request.model,
            "output": output, "previous_response_id": request.previous,
            "conversation": {"id": conversation} if conversation else None,
            "error": None, "incomplete_details": None, "instructions": request.instructions, "metadata": {},
            "parallel_tool_calls": echo.get("parallel_tool_calls", True), "tool_choice": echo.get("tool_choice", "auto"),
            "tools": echo.get("tools", []), "text": echo.get("text", {"format": {"type": "text"}}),
            "store": True, "usage": None}  # fmt: skip


def _status(result: dict[str, Any]) -> str:
    return "completed" if result.get("completed") else "incomplete"


def tool_items(messages: list[dict[str, Any]], start: int, client: set[str] | None = None) -> list[dict[str, Any]]:
    """Output items for the tool calls in ``messages[start:]``: ``mcp_call`` with its output for the
    agent's own, ``function_call`` for the client's (ids in ``client``)."""
    outputs = {m.get("tool_call_id"): m for m in messages[start:] if m.get("role") == "tool"}
    items = []
    for message in messages[start:]:
        for call in message.get("tool_calls") or []:
            if client and call.get("id") in client:
                items.append(_function_item(call))
                continue
            function = call.get("function") or {}
            result = outputs.get(call.get("id"))
            content = (result or {}).get("content")
            output = content if isinstance(content, str) or content is None else json.dumps(content)
            items.append(_tool_item(str(call.get("id")), str(function.get("name")), function.get("arguments"), "completed",
                                    output=output))  # fmt: skip
    return items


def response_json(request: ResponsesRequest, outcome: Any, turn_start: int, conversation: str | None) -> dict[str, Any]:
    result = outcome.result
    client = {str(c.get("id")) for c in result.get("client_tool_calls") or []}
    output = tool_items(result.get("messages") or [], turn_start, client)
    text = result.get("final_response") or ""
    calls = [i for i in output if i["type"] == "function_call"]
    output = [i for i in output if i["type"] != "function_call"]
    if text or not calls:  # the answer, or what the model said before calling the client's tools
        output.append(_message_item(text))
    output += calls
    data = _envelope(request, _status(result), output, int(time.time()), conversation)
    data["usage"] = _usage(outcome.usage)
    return data


class ResponsesStream:
    """Renders agent events as Responses API SSE events, numbered in order, under one response id."""

    def __init__(self, request: ResponsesRequest, conversation: str | None) -> None:
        self.request = request
        self.conversation = conversation
        self.created = int(time.time())
        self.output: list[dict[str, Any]] = []
        self._seq = 0
        self._text: list[str] | None = None  # the open message item's text
        self._calls: dict[str, int] = {}

    def _event(self, kind: str, **fields: Any) -> bytes:
        data = {"type": kind, "sequence_number": self._seq, **fields}
        self._seq += 1
        return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()

    def _envelope(self, status: str) -> dict[str, Any]:
        return _envelope(self.request, status, list(self.output), self.created, self.conversation)

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
        return (self._event("response.output_text.done", item_id=item["id"], output_index=index, content_index=0, text=text, logprobs=[])
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
            output = event.data.get("output")
            item.update(status="failed" if failed else "completed", error="the tool reported an error" if failed else None,
                        output=output if isinstance(output, str) else None)  # fmt: skip
            kind = "response.mcp_call.failed" if failed else "response.mcp_call.completed"
            return self._event(kind, item_id=item["id"], output_index=index) + \
                self._event("response.output_item.done", output_index=index, item=item)
        return None

    def _client_calls(self, calls: list[dict[str, Any]]) -> bytes:
        out = b""
        for call in calls:
            done = _function_item(call)
            item = {**done, "arguments": "", "status": "in_progress"}
            self.output.append(item)
            index = len(self.output) - 1
            out += self._event("response.output_item.added", output_index=index, item=dict(item))
            out += self._event("response.function_call_arguments.delta", item_id=item["id"], output_index=index,
                               delta=done["arguments"])  # fmt: skip
            out += self._event("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                               name=done["name"], arguments=done["arguments"])  # fmt: skip
            item.update(done)
            out += self._event("response.output_item.done", output_index=index, item=done)
        return out

    def end(self, outcome: Any) -> bytes:
        out = self._close_text() + self._client_calls(outcome.result.get("client_tool_calls") or [])
        final = self._envelope(_status(outcome.result))
        final["usage"] = _usage(outcome.usage)
        kind = "response.completed" if final["status"] == "completed" else "response.incomplete"
        return out + self._event(kind, response=final)

    def error(self, message: str, code: str) -> bytes:
        return self._event("error", code=code, message=message, param=None)
