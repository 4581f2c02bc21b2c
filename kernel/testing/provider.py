"""An in-process provider that answers from a :class:`Script`: no HTTP, no SDK.

For unit tests of code above the provider layer (the agent loop, engines).
Faults raise the :class:`ProviderError` the real providers would raise for
the same fault, so recovery logic is exercised the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..providers.base import ModelProvider, ModelRequest, ModelResponse, StreamDelta, StreamItem
from ..providers.errors import ProviderError
from ..usage import CanonicalUsage
from ._wire import estimate_usage, split_text
from .script import Fault, Reply, Script, ScriptEntry, first_user_text

__all__ = ["FAULT_REASONS", "ScriptedProvider"]

#: The classified reason each fault produces through the real providers
#: (None: not an error; ``empty`` comes back as a response whose ``is_empty`` is true).
FAULT_REASONS: dict[str, str | None] = {
    "rate_limit": "rate_limit",
    "billing": "billing",
    "auth": "auth",
    "forbidden": "auth_permanent",
    "model_not_found": "model_not_found",
    "payload_too_large": "payload_too_large",
    "context_overflow": "context_overflow",
    "content_policy": "content_policy",
    "server_error": "server_error",
    "bad_gateway": "server_error",
    "unavailable": "overloaded",
    "overloaded": "overloaded",
    "hang": "timeout",
    "drop_stream": "server_error",
    "malformed_json": "format_error",
    "empty": None,
    "cut_stream": "stream_incomplete",
    "slow_stream": None,
    "thinking_signature": "thinking_signature",
    "image_too_large": "image_too_large",
    "image_rejected": "image_rejected",
    "multimodal_tool_content": "multimodal_tool_content",
    "invalid_encrypted_content": "invalid_encrypted_content",
    "long_context_tier": "long_context_tier",
    "provider_policy_blocked": "provider_policy_blocked",
    "upstream_rate_limit": "upstream_rate_limit",
    "unknown": "unknown",
}


class ScriptedProvider(ModelProvider):
    """Answers each request with the next script entry and records the request.

    ``ScriptedProvider(script=Script([...]))`` or pass entries: ``ScriptedProvider(Reply("hi"))``.
    """

    name = "scripted"

    def __init__(self, *entries: ScriptEntry, script: Script | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.script = script or Script()
        self.script.add(*entries)
        self.requests: list[ModelRequest] = []

    def _next(self, request: ModelRequest) -> Reply:
        self.requests.append(request)
        entry = self.script.next(first_user_text(request.messages))
        if isinstance(entry, Fault):
            if entry.kind == "slow_stream":
                return Reply(text=entry.message or "a slow answer", delay=entry.seconds)
            if FAULT_REASONS[entry.kind] is None:
                return Reply(text="", usage=None)
            raise self._fault_error(entry)
        return entry

    def _fault_error(self, fault: Fault) -> ProviderError:
        reason = FAULT_REASONS[fault.kind]
        limit = (fault.limit or 128000) if fault.kind == "context_overflow" else None
        status = None if fault.kind in ("hang", "drop_stream", "malformed_json", "empty", "cut_stream") else fault.http_status
        retryable = True if reason == "format_error" else None
        return ProviderError(reason, fault.message or f"scripted {fault.kind}", status=status,  # type: ignore[arg-type]
                             retry_after=fault.retry_after if fault.retry_after is not None else fault.reset_after,
                             context_limit=limit, provider=self.name, retryable=retryable)

    def _response(self, reply: Reply, request: ModelRequest) -> ModelResponse:
        calls = [
            {"id": c.id or f"call_scripted{len(self.requests):04d}{i:02d}", "type": "function",
             "function": {"name": c.name, "arguments": c.arguments_json}}
            for i, c in enumerate(reply.tool_calls)
        ]
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if calls:
            message["tool_calls"] = calls
        if reply.reasoning:
            message["reasoning"] = reply.reasoning
        used = estimate_usage(reply, {"messages": request.messages, "tools": request.tools})
        usage = CanonicalUsage(used.input_tokens, used.output_tokens, used.cache_read_tokens,
                               used.cache_write_tokens, used.reasoning_tokens, 1)
        return ModelResponse(message=message, finish_reason=reply.resolved_finish(), usage=usage,
                             model=request.model, reasoning=reply.reasoning or None,
                             reported_cost_usd=reply.cost_usd)

    def complete(self, request: ModelRequest) -> ModelResponse:
        return self._response(self._next(request), request)

    def stream(self, request: ModelRequest) -> Iterator[StreamItem]:
        reply = self._next(request)
        for piece in split_text(reply.reasoning):
            yield StreamDelta(reasoning=piece)
        for piece in split_text(reply.text):
            yield StreamDelta(text=piece)
        yield self._response(reply, request)
