"""``POST /v1/chat/completions``: the client's history in, the agent's answer out (JSON or SSE chunks).

Stateless, as Chat Completions clients expect: every request is a new
session seeded with the history the client sent, ended when the turn ends.
The agent's own tool calls have no place in this API's message shape, so
they travel in a ``hermes`` field: a list on the JSON answer, and chunks with
no choices in the stream (clients that do not know the field ignore it).
"""

from __future__ import annotations

import json
import re
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


_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_TYPE_NAMES = {str: "a string", bool: "a boolean", int: "an integer", float: "a number", dict: "an object", list: "an array"}


def check_type(body: dict[str, Any], name: str, *kinds: type, where: str | None = None) -> Any:
    """``body[name]`` when it is null/absent or one of ``kinds``; else a 400 naming the field (``param``)."""
    value = body.get(name)
    if value is None:
        return None
    ok = any(isinstance(value, k) and not (isinstance(value, bool) and k in (int, float)) for k in kinds)
    if not ok:
        param = f"{where}.{name}" if where else name
        wanted = " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds)
        raise RequestError(f"'{param}' must be {wanted}, got {json.dumps(value)[:40]}", param=param, code="invalid_type")
    return value


# Fields clients send that this server accepts (type-checked) without acting on them.
_NUMBERS = ("temperature", "top_p", "presence_penalty", "frequency_penalty")
_INTEGERS = ("max_tokens", "max_completion_tokens", "n", "seed", "top_logprobs")


def parse_tools(raw: Any, param: str, *, flat: bool) -> list[dict[str, Any]]:
    """A request's ``tools`` as Chat tool schemas; ``flat``: the Responses shape (``name`` at the top)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise RequestError(f"'{param}' must be an array of tools", param=param, code="invalid_type")
    tools: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, tool in enumerate(raw):
        where = f"{param}[{index}]"
        if not isinstance(tool, dict) or tool.get("type") != "function":
            kind = tool.get("type") if isinstance(tool, dict) else type(tool).__name__
            raise RequestError(f"{where}: only function tools are supported, got {kind!r}", param=f"{where}.type")
        function = tool if flat else tool.get("function")
        fwhere = where if flat else f"{where}.function"
        if not isinstance(function, dict):
            raise RequestError(f"'{fwhere}' must be an object", param=fwhere, code="invalid_type")
        name = function.get("name")
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            raise RequestError(f"'{fwhere}.name' must be 1-64 letters, digits, '_' or '-'", param=f"{fwhere}.name")
        if name in seen:
            raise RequestError(f"{where}: the tool name {name!r} is given twice", param=f"{fwhere}.name")
        seen.add(name)
        check_type(function, "description", str, where=fwhere)
        check_type(function, "parameters", dict, where=fwhere)
        check_type(function, "strict", bool, where=fwhere)
        schema: dict[str, Any] = {"name": name, "parameters": function.get("parameters") or {"type": "object", "properties": {}}}
        if function.get("description"):
            schema["description"] = function["description"]
        if function.get("strict") is not None:
            schema["strict"] = function["strict"]
        tools.append({"type": "function", "function": schema})
    return tools


def check_tool_choice(choice: Any, tools: list[dict[str, Any]], *, flat: bool) -> Any:
    """``tool_choice`` as Chat Completions takes it (a mode, or one function by name)."""
    if choice is None:
        return None
    if isinstance(choice, str):
        if choice not in ("none", "auto", "required"):
            raise RequestError("'tool_choice' must be none, auto, required or a function", param="tool_choice")
        return choice
    if not isinstance(choice, dict) or choice.get("type") != "function":
        raise RequestError("'tool_choice' must be none, auto, required or a function", param="tool_choice",
                           code="invalid_type")  # fmt: skip
    name = choice.get("name") if flat else (choice.get("function") or {}).get("name")
    if name not in {t["function"]["name"] for t in tools}:
        raise RequestError(f"'tool_choice' names the function {name!r}, which is not in 'tools'", param="tool_choice")
    return {"type": "function", "function": {"name": name}}


def check_response_format(value: Any, param: str = "response_format") -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or value.get("type") not in ("text", "json_object", "json_schema"):
        raise RequestError(f"'{param}.type' must be text, json_object or json_schema", param=param)
    if value["type"] == "json_schema":
        spec = value.get("json_schema")
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            raise RequestError(f"'{param}.json_schema' must be an object with a name and a schema",
                               param=f"{param}.json_schema")  # fmt: skip
    return value if value["type"] != "text" else None


def _tool_calls(raw: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise RequestError(f"'{where}' must be an array", param=where, code="invalid_type")
    calls = []
    for index, call in enumerate(raw):
        cwhere = f"{where}[{index}]"
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(call.get("id"), str) or not isinstance(function.get("name"), str):
            raise RequestError(f"'{cwhere}' must have an id and a function with a name", param=cwhere)
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, str):
            raise RequestError(f"'{cwhere}.function.arguments' must be a string of JSON", param=f"{cwhere}.function.arguments",
                               code="invalid_type")  # fmt: skip
        calls.append({"id": call["id"], "type": "function", "function": {"name": function["name"], "arguments": arguments or "{}"}})
    return calls


def pending_calls(history: list[dict[str, Any]]) -> dict[str, str]:
    """Tool call ids (to their names) of the history's last assistant message that have no result yet."""
    answered: set[str] = set()
    for message in reversed(history):
        if message.get("role") == "tool":
            answered.add(str(message.get("tool_call_id")))
        elif message.get("role") == "assistant":
            return {c["id"]: c["function"]["name"] for c in message.get("tool_calls") or [] if c.get("id") not in answered}
        else:
            break
    return {}


def unknown_call(call_id: str, param: str) -> RequestError:
    """The 400 for a tool result that answers no tool call (OpenAI's shape, naming the id)."""
    return RequestError(f"no tool call found for the tool result with call id {call_id!r}", param=param,
                        code="unknown_tool_call_id")  # fmt: skip


class ChatRequest:
    """A parsed request: ``system`` text, prior ``history`` and the new user ``message``.

    ``message`` is None when the request ends with tool results (``tool_results``)
    that continue the assistant's turn; ``tools`` are the client's (Chat schemas)
    and ``options`` pass through to the model (tool_choice, response_format, ...).
    """

    def __init__(self, model: str, system: str | None, history: list[dict[str, Any]], message: str | None,
                 stream: bool, include_usage: bool, tools: list[dict[str, Any]] | None = None,
                 tool_results: list[dict[str, Any]] | None = None, options: dict[str, Any] | None = None) -> None:  # fmt: skip
        self.model, self.system, self.history, self.message = model, system, history, message
        self.stream, self.include_usage = stream, include_usage
        self.tools, self.tool_results, self.options = tools or [], tool_results or [], options or {}


def parse_chat(body: Any) -> ChatRequest:
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    check_type(body, "model", str)
    stream = check_type(body, "stream", bool)
    options = check_type(body, "stream_options", dict) or {}
    include_usage = check_type(options, "include_usage", bool, where="stream_options")
    for name in _NUMBERS:
        check_type(body, name, int, float)
    for name in _INTEGERS:
        check_type(body, name, int)
    check_type(body, "stop", str, list)
    check_type(body, "user", str)
    check_type(body, "metadata", dict)
    parallel = check_type(body, "parallel_tool_calls", bool)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("'messages' must be a non-empty list", param="messages")
    tools = parse_tools(body.get("tools"), "tools", flat=False)
    passed: dict[str, Any] = {}
    choice = check_tool_choice(body.get("tool_choice"), tools, flat=False)
    if choice is not None and tools:
        passed["tool_choice"] = choice
    if parallel is not None and tools:
        passed["parallel_tool_calls"] = parallel
    response_format = check_response_format(body.get("response_format"))
    if response_format is not None:
        passed["response_format"] = response_format
    system: list[str] = []
    history: list[dict[str, Any]] = []
    known: set[str] = set()
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(message, dict) or message.get("role") not in ("system", "developer", "user", "assistant", "tool"):
            raise RequestError(f"{where} needs a role of system, developer, user, assistant or tool", param=f"{where}.role")
        role = message["role"]
        text = text_of(message.get("content"), f"{where}.content")
        if role in ("system", "developer"):
            system.append(text)
            continue
        item: dict[str, Any] = {"role": role, "content": text}
        if role == "assistant" and message.get("tool_calls"):
            item["tool_calls"] = _tool_calls(message["tool_calls"], f"{where}.tool_calls")
            known.update(c["id"] for c in item["tool_calls"])
            item["content"] = text or None
        if role == "tool":
            if not isinstance(message.get("tool_call_id"), str) or not message["tool_call_id"]:
                raise RequestError(f"{where} is a tool result without tool_call_id", param=f"{where}.tool_call_id")
            if message["tool_call_id"] not in known:
                raise unknown_call(message["tool_call_id"], f"{where}.tool_call_id")
            item["tool_call_id"] = message["tool_call_id"]
        history.append(item)
    trailing: list[dict[str, Any]] = []
    while history and history[-1]["role"] == "tool":
        trailing.insert(0, history.pop())
    if trailing:
        if not history or history[-1]["role"] != "assistant" or not history[-1].get("tool_calls"):
            raise RequestError("tool results must follow the assistant message that called the tools", param="messages")
        last: str | None = None
    elif not history or history[-1]["role"] != "user" or not history[-1]["content"].strip():
        raise RequestError("the last message must be a user message with text, or tool results", param="messages")
    else:
        last = history.pop()["content"]
    return ChatRequest(
        model=str(body.get("model") or ""), system="\n\n".join(s for s in system if s.strip()) or None,
        history=history, message=last, stream=bool(stream), include_usage=bool(include_usage),
        tools=tools, tool_results=trailing, options=passed,
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
    if result.get("client_tool_calls"):
        return "tool_calls"
    return "length" if result.get("budget_exhausted") and not result.get("completed") else "stop"


def client_calls(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The calls of client tools the turn stopped at, in Chat Completions' ``tool_calls`` shape."""
    calls = []
    for call in result.get("client_tool_calls") or []:
        function = call.get("function") or {}
        arguments = function.get("arguments")
        calls.append({"id": str(call.get("id")), "type": "function", "function": {
            "name": str(function.get("name")),
            "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments or {})}})  # fmt: skip
    return calls


def chat_json(model: str, outcome: Any, tools: list[dict[str, Any]]) -> dict[str, Any]:
    result = outcome.result
    message: dict[str, Any] = {"role": "assistant", "content": result.get("final_response") or "", "refusal": None}
    calls = client_calls(result)
    if calls:
        message.update(content=result.get("final_response") or None, tool_calls=calls)
    return {
        "id": "chatcmpl-" + secrets.token_hex(12),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(result), "logprobs": None}],
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
        out = b""
        for index, call in enumerate(client_calls(outcome.result)):
            out += self._chunk([{"index": 0, "delta": {"tool_calls": [{"index": index, **call}]}, "finish_reason": None}])
        out += self._chunk([{"index": 0, "delta": {}, "finish_reason": _finish(outcome.result)}],
                          hermes={"type": "done", "session_id": outcome.session_id})  # fmt: skip
        if self.include_usage:
            out += self._chunk([], usage=_usage(outcome.usage))
        return out + b"data: [DONE]\n\n"

    @staticmethod
    def error(payload: dict[str, Any]) -> bytes:
        return f"data: {json.dumps(payload)}\n\n".encode()
