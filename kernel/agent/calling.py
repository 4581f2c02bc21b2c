"""One model call with recovery: streaming, dropped streams, fallbacks and compression.

Retries with backoff and credential rotation happen inside the
:class:`~hermes.kernel.providers.client.ModelClient`. What is left for the
agent is what needs the conversation: compressing and retrying on context
overflow, switching to the next fallback provider, and keeping text that
already reached the user when a stream breaks.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..providers.base import ModelRequest, ModelResponse, StreamDelta, StreamItem
from ..providers.errors import ProviderError
from ..usage import CanonicalUsage

__all__ = ["POLL_SECONDS", "CallOutcome", "ModelCaller", "ModelRoute", "Interrupted", "call_with_stream", "interruptible"]

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


#: How often a waiting call looks at the interrupt flag: Ctrl-C is honoured within this.
POLL_SECONDS = 0.05


def _items(route: ModelRoute, request: ModelRequest) -> Iterator[StreamItem]:
    if request.stream:
        return iter(route.client.stream(request, lease=route.lease))
    return iter((route.client.complete(request, lease=route.lease),))  # type: ignore[attr-defined]


def _abort(route: ModelRoute) -> None:
    abort = getattr(route.client, "abort", None)
    if callable(abort):
        abort()  # closes the HTTP response under the abandoned reader


def interruptible(route: ModelRoute, request: ModelRequest,
                  is_interrupted: Callable[[], bool]) -> Iterator[StreamItem]:
    """The call's items, read in a helper thread so an interrupt never waits for the network.

    ``is_interrupted`` is asked every :data:`POLL_SECONDS` while waiting and
    before each next item, so an interrupt also stops a stream whose deltas
    are already queued. On an interrupt the connection is closed and the
    reader abandoned (it is a daemon and discards what still arrives), so no
    retry or backoff sleep of the client runs on the user's time. Raises
    :class:`Interrupted` ("" text; the caller adds what it collected).
    """
    items: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
    cancelled = threading.Event()

    def read() -> None:
        try:
            for item in _items(route, request):
                if cancelled.is_set():
                    return
                items.put(("item", item))
            items.put(("end", None))
        except BaseException as exc:  # handed to the caller's thread as is
            items.put(("error", exc))

    threading.Thread(target=read, name="hermes-model-call", daemon=True).start()
    while True:
        # Checked while waiting and after the caller handled each item (a delta it showed).
        if is_interrupted():
            cancelled.set()
            _abort(route)
            raise Interrupted("")
        try:
            kind, value = items.get(timeout=POLL_SECONDS)
        except queue.Empty:
            continue
        if kind == "end":
            return
        if kind == "error":
            raise value
        yield value


def call_with_stream(
    route: ModelRoute,
    request: ModelRequest,
    *,
    on_delta: Callable[[StreamDelta], None] | None,
    is_interrupted: Callable[[], bool],
) -> CallOutcome:
    """Make one call (streamed when ``request.stream``); deltas go to ``on_delta`` as they arrive.

    A stream that breaks after text arrived returns that text as a partial
    answer with ``finish_reason`` ``incomplete`` (never ``stop``): the user has
    already seen it, a retry would say it twice, and the loop asks the model to
    continue. An interrupt raises :class:`Interrupted` with the text so far,
    within :data:`POLL_SECONDS` even while the request is still waiting.
    """
    text: list[str] = []
    reasoning: list[str] = []
    try:
        for item in interruptible(route, request, is_interrupted):
            if isinstance(item, StreamDelta):
                if item.text:
                    text.append(item.text)
                if item.reasoning:
                    reasoning.append(item.reasoning)
                if on_delta is not None:
                    on_delta(item)
            else:
                return CallOutcome(item)
    except Interrupted:
        raise Interrupted("".join(text)) from None
    except ProviderError as error:
        if not text:
            raise
        log.warning("stream from %s broke after %d characters (%s); keeping the text", route.label, len("".join(text)), error.reason)
        message: dict[str, Any] = {"role": "assistant", "content": "".join(text)}
        if reasoning:
            message["reasoning"] = "".join(reasoning)
        response = ModelResponse(message=message, finish_reason="incomplete", usage=CanonicalUsage(request_count=1),
                                 model=route.model)
        return CallOutcome(response, partial=True, notes=[f"the stream broke mid-answer ({error.reason}); the text so far is kept"])
    raise ProviderError("format_error", f"the stream from {route.label} ended without a response", retryable=True)
