"""The ``anthropic`` model provider: the Messages API through the official SDK, natively.

Canonical (OpenAI Chat) messages become Messages API requests: system
messages become top-level system blocks, ``tool_calls`` become ``tool_use``
blocks and ``tool`` messages ``tool_result`` blocks, consecutive same-role
messages are merged, and ``cache_control`` breakpoints go on the system prompt
and the latest messages so the prompt cache keeps hitting. Thinking blocks come
back as reasoning and are sent back, signed, on the next request.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from hermes.kernel import (
    ArgumentsError,
    ModelProvider,
    ModelRequest,
    ModelResponse,
    ProviderError,
    StreamDelta,
    StreamItem,
    classify_exception,
    decode_arguments,
    normalize_anthropic_usage,
)

__all__ = ["AnthropicProvider", "to_anthropic"]

_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls",
           "refusal": "content_filter", "pause_turn": "stop"}
_EPHEMERAL = {"type": "ephemeral"}
_LONG_CONTEXT_BETA = "context-1m-2025-08-07"
#: Anthropic allows four breakpoints: the system prompt and the three latest messages.
_MESSAGE_BREAKPOINTS = 3


def _text_blocks(content: Any) -> list[dict[str, Any]]:
    """Anthropic content blocks of canonical message content (text or parts)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks = []
    for part in content:
        kind = part.get("type")
        if kind == "text" and part.get("text"):
            blocks.append({"type": "text", "text": part["text"]})
        elif kind == "image_url":
            url = part["image_url"]["url"] if isinstance(part.get("image_url"), dict) else part.get("image_url", "")
            if url.startswith("data:") and ";base64," in url:
                media, data = url[5:].split(";base64,", 1)
                blocks.append({"type": "image", "source": {"type": "base64", "media_type": media, "data": data}})
            else:
                blocks.append({"type": "image", "source": {"type": "url", "url": url}})
        elif kind in ("image", "document", "tool_result", "text"):
            blocks.append(dict(part))  # already Anthropic-shaped
    return blocks


def _assistant_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    # Signed thinking must precede tool_use when a tool loop continues.
    for detail in message.get("reasoning_details") or []:
        if isinstance(detail, dict) and detail.get("type") in ("thinking", "redacted_thinking"):
            blocks.append(dict(detail))
    blocks += _text_blocks(message.get("content"))
    for call in message.get("tool_calls") or []:
        function = call.get("function", {})
        raw = function.get("arguments") or "{}"
        try:
            args = decode_arguments(raw) if isinstance(raw, str) else dict(raw)
        except ValueError:  # not JSON, too deep or too long
            args = {"_raw_arguments": raw}  # keep what the model wrote rather than fail the request
        if not isinstance(args, dict):
            args = {"value": args}
        blocks.append({"type": "tool_use", "id": call.get("id", ""), "name": function.get("name", ""), "input": args})
    return blocks


def _tool_result(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.get("tool_call_id", "")}
    if isinstance(content, list):
        block["content"] = _text_blocks(content)
    else:
        block["content"] = "" if content is None else str(content)
    return block


def to_anthropic(
    messages: list[dict[str, Any]], *, cache: bool = True
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(system_blocks, messages)`` for the Messages API from canonical messages."""
    system: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "system":
            system += _text_blocks(message.get("content"))
            continue
        if role == "tool":
            wire_role, blocks = "user", [_tool_result(message)]
        elif role == "assistant":
            wire_role, blocks = "assistant", _assistant_blocks(message)
        else:
            wire_role, blocks = "user", _text_blocks(message.get("content"))
        if not blocks:
            continue
        if out and out[-1]["role"] == wire_role:
            # The API wants strictly alternating roles: parallel tool results and
            # a user message right after them share one user turn.
            previous = out[-1]["content"]
            if wire_role == "user" and blocks[0]["type"] == "tool_result":
                # tool_result blocks must come first in their user turn
                lead = [b for b in previous if b["type"] == "tool_result"]
                rest = [b for b in previous if b["type"] != "tool_result"]
                out[-1]["content"] = lead + blocks + rest
            else:
                previous.extend(blocks)
        else:
            out.append({"role": wire_role, "content": blocks})
    if cache:
        _add_cache_breakpoints(system, out)
    return system, out


def _add_cache_breakpoints(system: list[dict[str, Any]], messages: list[dict[str, Any]]) -> None:
    if system:
        system[-1] = {**system[-1], "cache_control": _EPHEMERAL}
    for message in messages[-_MESSAGE_BREAKPOINTS:]:
        last = message["content"][-1]
        if last.get("type") in ("thinking", "redacted_thinking"):
            continue  # thinking blocks cannot carry cache_control
        message["content"][-1] = {**last, "cache_control": _EPHEMERAL}


def _tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    converted = []
    for tool in tools:
        function = tool.get("function", tool)
        converted.append({
            "name": function["name"],
            "description": function.get("description", ""),
            "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
        })
    return converted


class AnthropicProvider(ModelProvider):
    """Messages API, streaming and not, with prompt caching and thinking."""

    env_key = "ANTHROPIC_API_KEY"
    env_base_url = "ANTHROPIC_BASE_URL"
    default_model = "claude-sonnet-4-5"
    max_tools = 10_000  # the most tools Anthropic's tool-search documentation allows in one request
    name = "anthropic"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._client: Any = None

    def _sdk(self) -> Any:
        if self._client is None:
            if not self.api_key:
                raise ProviderError(
                    "auth", "no API key; run `hermes auth add anthropic` or set ANTHROPIC_API_KEY", provider=self.name
                )
            import anthropic

            self._client = anthropic.Anthropic(
                api_key=self.api_key, base_url=self.base_url, timeout=self.timeout, max_retries=0
            )
        return self._client

    def _params(self, request: ModelRequest) -> dict[str, Any]:
        system, messages = to_anthropic(request.messages, cache=bool(self.options.get("prompt_caching", True)))
        model = request.model
        headers: dict[str, str] = {}
        for suffix in ("[1m]", "-1m"):
            if model.lower().endswith(suffix):
                # The 1M-token tier is the same model with a beta flag (the window catalog knows the size).
                model, headers["anthropic-beta"] = model[: -len(suffix)], _LONG_CONTEXT_BETA
                break
        params: dict[str, Any] = {"model": model, "max_tokens": request.max_tokens, "messages": messages}
        if headers:
            params["extra_headers"] = headers
        if system:
            params["system"] = system
        if request.tools:
            params["tools"] = _tools(request.tools)
        extra = dict(request.extra_body)
        if request.temperature is not None:
            extra.setdefault("temperature", request.temperature)
        if extra:
            params["extra_body"] = extra
        return params

    def classify(self, exc: BaseException) -> ProviderError:
        return classify_exception(exc, provider=self.name)

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def complete(self, request: ModelRequest) -> ModelResponse:
        try:
            result = self._sdk().messages.create(**self._params(request))
            blocks = [block.model_dump() for block in result.content]
            return self._build(blocks, result.stop_reason, result.usage, result.model, result.id)
        except ProviderError:
            raise
        except Exception as exc:
            raise self.classify(exc) from None

    def stream(self, request: ModelRequest) -> Iterator[StreamItem]:
        params = self._params(request)
        params["stream"] = True
        blocks: dict[int, dict[str, Any]] = {}
        partial_json: dict[int, list[str]] = {}
        usage: dict[str, Any] = {}
        stop, model, response_id = None, request.model, None
        ended = False
        try:
            for event in self._sdk().messages.create(**params):
                kind = event.type
                if kind == "message_start":
                    model, response_id = event.message.model, event.message.id
                    usage.update(event.message.usage.model_dump(exclude_none=True))
                elif kind == "content_block_start":
                    blocks[event.index] = event.content_block.model_dump()
                elif kind == "content_block_delta":
                    block, delta = blocks.setdefault(event.index, {"type": "text", "text": ""}), event.delta
                    if delta.type == "text_delta":
                        block["text"] = block.get("text", "") + delta.text
                        yield StreamDelta(text=delta.text)
                    elif delta.type == "thinking_delta":
                        block["thinking"] = block.get("thinking", "") + delta.thinking
                        yield StreamDelta(reasoning=delta.thinking)
                    elif delta.type == "signature_delta":
                        block["signature"] = block.get("signature", "") + delta.signature
                    elif delta.type == "input_json_delta":
                        partial_json.setdefault(event.index, []).append(delta.partial_json)
                elif kind == "message_delta":
                    stop = event.delta.stop_reason or stop
                    usage.update(event.usage.model_dump(exclude_none=True))
                elif kind == "message_stop":
                    ended = True
        except ProviderError:
            raise
        except Exception as exc:
            raise self.classify(exc) from None
        if not ended or stop is None:
            # No stop reason or no message_stop: the answer was cut off, whatever the text says.
            raise ProviderError("stream_incomplete", "the stream ended before the model finished its answer",
                                provider=self.name)
        for index, parts in partial_json.items():
            raw = "".join(parts)
            try:
                blocks[index]["input"] = decode_arguments(raw)
            except ArgumentsError as exc:
                if exc.reason == "json":
                    raise ProviderError("format_error", "a streamed tool call has invalid JSON arguments",
                                        provider=self.name, retryable=True) from None
                blocks[index]["raw_input"] = raw  # too deep or too long: the registry answers the call
        yield self._build([blocks[i] for i in sorted(blocks)], stop, usage, model, response_id)

    def _build(self, blocks: list[dict[str, Any]], stop: str | None, usage: Any, model: str,
               response_id: str | None) -> ModelResponse:
        text, reasoning, details, calls = [], [], [], []
        for block in blocks:
            kind = block.get("type")
            if kind == "text":
                text.append(block.get("text", ""))
            elif kind == "thinking":
                reasoning.append(block.get("thinking", ""))
                details.append({"type": "thinking", "thinking": block.get("thinking", ""),
                                "signature": block.get("signature", "")})
            elif kind == "redacted_thinking":
                details.append({"type": "redacted_thinking", "data": block.get("data", "")})
            elif kind == "tool_use":
                calls.append({"id": block.get("id", ""), "type": "function",
                              "function": {"name": block.get("name", ""),
                                           "arguments": block.get("raw_input") or json.dumps(block.get("input") or {})}})
        finish = _FINISH.get(stop or "end_turn", "stop")
        content = "".join(text)
        # An empty completion is returned, not raised (ModelResponse.is_empty): the loop decides.
        if not content and not calls and finish == "content_filter":
            raise ProviderError("content_policy", "the model refused to answer", provider=self.name)
        message: dict[str, Any] = {"role": "assistant", "content": content or None}
        if calls:
            message["tool_calls"] = calls
        thought = "".join(reasoning)
        if thought:
            message["reasoning"] = thought
        if details:
            message["reasoning_details"] = details
        # Anthropic counts thinking inside output_tokens without a separate figure.
        return ModelResponse(
            message=message,
            finish_reason=finish,
            usage=normalize_anthropic_usage(usage),
            model=model,
            reasoning=thought or None,
            response_id=response_id,
        )
