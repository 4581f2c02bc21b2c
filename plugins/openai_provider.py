"""The ``openai`` model provider: Chat Completions through the official SDK.

Works against api.openai.com and any OpenAI-compatible server (vLLM,
llama.cpp's server, Ollama, OpenRouter) through ``base_url``. The SDK is
imported when the first request is made, never at import time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes.kernel import (
    ModelProvider,
    ModelRequest,
    ModelResponse,
    ProviderError,
    StreamDelta,
    StreamItem,
    classify_exception,
    normalize_openai_usage,
)

__all__ = ["OpenAIProvider"]

_MESSAGE_KEYS = ("role", "content", "name", "tool_calls", "tool_call_id")


def _wire_message(message: dict[str, Any]) -> dict[str, Any]:
    # Canonical messages may carry reasoning fields other providers produced;
    # strict OpenAI-compatible servers reject keys they do not know.
    return {k: message[k] for k in _MESSAGE_KEYS if k in message}


def _reasoning_of(obj: Any) -> str:
    # vLLM and DeepSeek say reasoning_content, OpenRouter says reasoning.
    for name in ("reasoning_content", "reasoning"):
        value = getattr(obj, name, None)
        if value is None:
            extra = getattr(obj, "model_extra", None) or {}
            value = extra.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


def _reported_cost(usage: Any) -> float | None:
    extra = getattr(usage, "model_extra", None) or {}
    cost = extra.get("cost")
    return float(cost) if isinstance(cost, (int, float)) else None


class OpenAIProvider(ModelProvider):
    """Chat Completions, streaming and not, tool calls included."""

    env_key = "OPENAI_API_KEY"
    env_base_url = "OPENAI_BASE_URL"
    default_model = "gpt-5-mini"
    max_tools = 128  # the Chat Completions API refuses a longer `tools` array
    name = "openai"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._client: Any = None

    def _sdk(self) -> Any:
        if self._client is None:
            import openai

            key = self.api_key
            if not key:
                if not self.base_url:
                    raise ProviderError(
                        "auth", "no API key; run `hermes auth add openai` or set OPENAI_API_KEY", provider=self.name
                    )
                key = "no-key-required"  # local servers (llama.cpp, Ollama) ignore it
            self._client = openai.OpenAI(api_key=key, base_url=self.base_url, timeout=self.timeout, max_retries=0)
        return self._client

    def _params(self, request: ModelRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": request.model,
            "messages": [_wire_message(m) for m in request.messages],
        }
        # api.openai.com wants max_completion_tokens (reasoning models reject
        # max_tokens); compatible servers mostly know only max_tokens.
        field = self.options.get("max_tokens_field") or ("max_tokens" if self.base_url else "max_completion_tokens")
        params[field] = request.max_tokens
        if request.tools:
            params["tools"] = request.tools
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.extra_body:
            params["extra_body"] = request.extra_body
        return params

    def classify(self, exc: BaseException) -> ProviderError:
        return classify_exception(exc, provider=self.name)

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def complete(self, request: ModelRequest) -> ModelResponse:
        try:
            result = self._sdk().chat.completions.create(**self._params(request))
            if not result.choices:
                raise ProviderError("format_error", "the response has no choices", provider=self.name, retryable=True)
            choice = result.choices[0]
            message = choice.message
            calls = [
                {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments or ""}}
                for c in (message.tool_calls or [])
                if getattr(c, "function", None) is not None
            ]
            return self._build(
                message.content or "", calls, _reasoning_of(message), choice.finish_reason or "stop",
                result.usage, result.model, result.id,
            )
        except ProviderError:
            raise
        except Exception as exc:
            raise self.classify(exc) from None

    def stream(self, request: ModelRequest) -> Iterator[StreamItem]:
        params = self._params(request)
        params["stream"] = True
        params["stream_options"] = {"include_usage": True}
        text: list[str] = []
        reasoning: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        finish: str | None = None
        usage, model, response_id = None, request.model, None
        try:
            chunks = self._sdk().chat.completions.create(**params)
            for chunk in chunks:
                model, response_id = chunk.model or model, chunk.id or response_id
                if chunk.usage is not None:
                    usage = chunk.usage
                for choice in chunk.choices:
                    delta = choice.delta
                    if choice.finish_reason:
                        finish = choice.finish_reason
                    if delta is None:
                        continue
                    thought = _reasoning_of(delta)
                    if thought:
                        reasoning.append(thought)
                        yield StreamDelta(reasoning=thought)
                    if delta.content:
                        text.append(delta.content)
                        yield StreamDelta(text=delta.content)
                    for part in delta.tool_calls or []:
                        slot = calls.setdefault(part.index, {"id": "", "name": "", "arguments": []})
                        if part.id:
                            slot["id"] = part.id
                        if part.function is not None:
                            if part.function.name:
                                slot["name"] += part.function.name
                            if part.function.arguments:
                                slot["arguments"].append(part.function.arguments)
        except ProviderError:
            raise
        except Exception as exc:
            raise self.classify(exc) from None
        if finish is None:
            # The body ended cleanly but the answer did not: never call it "stop".
            raise ProviderError("stream_incomplete", "the stream ended before the model finished its answer",
                                provider=self.name)
        tool_calls = [
            {"id": s["id"], "type": "function", "function": {"name": s["name"], "arguments": "".join(s["arguments"])}}
            for _, s in sorted(calls.items())
        ]
        yield self._build("".join(text), tool_calls, "".join(reasoning), finish, usage, model, response_id)

    def _build(
        self,
        text: str,
        tool_calls: list[dict[str, Any]],
        reasoning: str,
        finish: str,
        usage: Any,
        model: str,
        response_id: str | None,
    ) -> ModelResponse:
        # An empty completion is returned, not raised: the agent loop knows whether to
        # nudge, retry or fall back (ModelResponse.is_empty).
        if not text and not tool_calls and finish == "content_filter":
            raise ProviderError("content_policy", "the reply was withheld by the content filter", provider=self.name)
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if tool_calls:
            message["tool_calls"] = tool_calls
        if reasoning:
            message["reasoning"] = reasoning
        return ModelResponse(
            message=message,
            finish_reason=finish,
            usage=normalize_openai_usage(usage),
            model=model,
            reasoning=reasoning or None,
            response_id=response_id,
            reported_cost_usd=_reported_cost(usage),
        )

