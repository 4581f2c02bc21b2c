"""One model call with recovery: streaming, dropped streams, fallbacks and compression.

Retries with backoff and credential rotation happen inside the
:class:`~hermes.kernel.providers.client.ModelClient`. What is left for the
agent is what needs the conversation: compressing and retrying on context
overflow, switching to the next fallback provider, and keeping text that
already reached the user when a stream breaks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..providers.base import ModelRequest, ModelResponse, StreamDelta
from ..providers.errors import ProviderError
from ..usage import CanonicalUsage

__all__ = ["CallOutcome", "ModelCaller", "ModelRoute", "Interrupted", "call_with_stream"]

log = logging.getLogger(__name__)


class ModelCaller(Protocol):
    """What the loop needs of a model client (``ModelClient`` satisfies it)."""

    name: str

    def stream(self, request: ModelRequest, *, lease: Any = None) -> Any: ...


@dataclass
class ModelRoute:
    """A client and the model to ask through it (the primary or a fallback)."""

    client: ModelCaller
    model: str
    lease: Any = None

    @property
    def label(self) -> str:
        return f"{self.client.name}:{self.model}"


class Interrupted(Exception):
    """The user interrupted while the model was answering; carries the text so far."""

    def __init__(self, text: str) -> None:
        super().__init__("interrupted")
        self.text = text


@dataclass
class CallOutcome:
    """A response, plus whether it was cut short by a broken stream."""

    response: ModelResponse
    partial: bool = False
    notes: list[str] = field(default_factory=list)


def call_with_stream(
    route: ModelRoute,
    request: ModelRequest,
    *,
    on_delta: Callable[[StreamDelta], None] | None,
    is_interrupted: Callable[[], bool],
) -> CallOutcome:
    """Stream one request; deltas go to ``on_delta`` as they arrive.

    A stream that breaks after text arrived returns that text as a partial
    answer instead of failing: the user has already seen it, and a retry
    would say it twice. An interrupt raises :class:`Interrupted` with the text
    so far.
    """
    text: list[str] = []
    reasoning: list[str] = []
    try:
        for item in route.client.stream(request, lease=route.lease):
            if isinstance(item, StreamDelta):
                if item.text:
                    text.append(item.text)
                if item.reasoning:
                    reasoning.append(item.reasoning)
                if on_delta is not None:
                    on_delta(item)
                if is_interrupted():
                    raise Interrupted("".join(text))
            else:
                return CallOutcome(item)
    except ProviderError as error:
        if not text:
            raise
        log.warning("stream from %s broke after %d characters (%s); keeping the text", route.label, len("".join(text)), error.reason)
        message: dict[str, Any] = {"role": "assistant", "content": "".join(text)}
        if reasoning:
            message["reasoning"] = "".join(reasoning)
        response = ModelResponse(message=message, finish_reason="stop", usage=CanonicalUsage(request_count=1), model=route.model)
        return CallOutcome(response, partial=True, notes=[f"the connection dropped ({error.reason}); the answer may be incomplete"])
    raise ProviderError("format_error", f"the stream from {route.label} ended without a response", retryable=True)
