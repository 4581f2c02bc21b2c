"""One model call with recovery: streaming, dropped streams, fallbacks and compression.

Retries with backoff and credential rotation happen inside the
:class:`~hermes.kernel.providers.client.ModelClient`. What is left for the
agent is what needs the conversation (:func:`call_model`): repairing a refused
request, compressing and retrying on context overflow, switching to the next
fallback provider, and keeping text that already reached the user when a
stream breaks (:func:`call_with_stream`).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..providers.base import ModelRequest, ModelResponse, StreamDelta, StreamItem
from ..providers.errors import ProviderError
from ..tools import ROUTE_SERVICE
from ..usage import CanonicalUsage, record_request
from .compaction import MAX_COMPRESSIONS
from .events import emit
from .repairs import repair, stepped_window
from .turn_state import TurnFailed, TurnState, request_tools

if TYPE_CHECKING:
    from .loop import Agent

__all__ = [
    "POLL_SECONDS", "CallOutcome", "ModelCaller", "ModelRoute", "Interrupted", "call_model", "call_with_stream",
    "interruptible", "next_fallback",
]  # fmt: skip

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


def call_model(agent: Agent, state: TurnState, *, with_tools: bool, extra: list[dict[str, Any]],
               max_tokens: int | None = None) -> CallOutcome:
    """One model call of ``agent``'s turn, recovered until it answers or cannot.

    A refused request is repaired once per reason, a context overflow is
    compressed (at most :data:`~.compaction.MAX_COMPRESSIONS` times) and
    retried, and a failing route falls back to the next; what cannot be
    recovered raises :class:`~.turn_state.TurnFailed`. Every attempt counts in
    ``state.api_calls`` and the request log.
    """
    compressions = 0
    repaired: set[str] = set()
    route_index = state.route_index
    while True:
        route = agent.routes[route_index]
        agent.tool_context.services[ROUTE_SERVICE] = route  # the tools this step asks for see its route
        request = ModelRequest(
            model=route.model,
            messages=agent.transcript.request_messages(agent.system_prompt, extra),
            tools=request_tools(agent, route, record=True) if with_tools else [],
            max_tokens=max_tokens or agent.max_tokens,
            temperature=agent.temperature,
            stream=agent.stream,
            extra_body={k: v for k, v in agent.request_options.items()
                        if with_tools or k not in ("tool_choice", "parallel_tool_calls")},
        )  # fmt: skip
        hooks = agent.hooks  # before_model_call's context rides on this request only; the api hooks on each attempt
        request.messages = hooks.model_context(agent.session_id, route.model, request.messages,
                                               (t.get("function", {}).get("name", "") for t in request.tools))
        request.observer = hooks.api_observer(agent.session_id, route.client.name)
        if route.lease is not None and hasattr(route.lease, "renew_if_due"):
            route.lease.renew_if_due()  # a long session keeps its key
        started = time.perf_counter()
        try:
            outcome = _invoke(agent, route, request)
        except ProviderError as error:
            state.api_calls += 1
            _log_request(agent, route, f"error:{error.reason}")
            if error.should_repair and error.reason not in repaired:
                fixed = repair(error.reason, agent.messages)
                if fixed is not None:
                    repaired.add(error.reason)
                    agent.messages[:] = fixed
                    emit(agent.on_event, "status", f"the provider refused the request ({error.reason}); repaired it and retrying")
                    continue
            if error.should_compress and compressions < MAX_COMPRESSIONS and agent.engine is not None:
                compressions += 1
                limit = error.context_limit or stepped_window(error.reason, agent.engine.context_length)
                if limit and limit < agent.engine.context_length:
                    # The provider stated (or the probe tiers suggest) the real window: use it from now on.
                    agent.engine.update_model(route.model, limit)
                emit(agent.on_event, "status", f"context too large ({error.reason}); compressing and retrying")
                if agent.compress():
                    continue
                raise TurnFailed(error) from None  # nothing left to shrink: retrying cannot help
            if error.should_fallback and next_fallback(agent, state, str(error)):
                route_index = state.route_index
                continue
            raise TurnFailed(error) from None
        state.api_calls += 1
        hooks.model_answered(agent.session_id, route.model, outcome.response, time.perf_counter() - started)
        _account(agent, outcome.response)
        _log_request(agent, route, "incomplete" if outcome.partial else "ok", outcome.response)
        return outcome


def next_fallback(agent: Agent, state: TurnState, why: str) -> bool:
    """Move the turn to the next fallback route, saying why; False when none is left."""
    current = state.route_index
    if current + 1 >= len(agent.routes):
        return False
    state.route_index = current + 1
    emit(agent.on_event, "status",
         f"{agent.routes[current].label} failed ({why}); falling back to {agent.routes[current + 1].label}")  # fmt: skip
    return True


def _invoke(agent: Agent, route: ModelRoute, request: ModelRequest) -> CallOutcome:
    def on_delta(delta: StreamDelta) -> None:
        if delta.text:
            emit(agent.on_event, "text", delta.text)
        if delta.reasoning:
            emit(agent.on_event, "reasoning", delta.reasoning)

    return call_with_stream(route, request, on_delta=on_delta, is_interrupted=lambda: agent.interrupted)


def _account(agent: Agent, response: ModelResponse) -> None:
    if agent.engine is not None:
        agent.engine.update_from_response(response.usage)
    if agent.store is not None and agent.session_id is not None:
        agent.store.record_usage(agent.session_id, response.usage, response.cost)


def _log_request(agent: Agent, route: ModelRoute, outcome: str, response: ModelResponse | None = None) -> None:
    home = agent.tool_context.home
    if home is not None and hasattr(home, "logs_dir"):
        search = agent.tools.search
        tools = None if search.last is None else {
            "offered": len(search.last.offered), "deferred": search.last.deferred, "tokens_saved": search.last.tokens_saved,
            "searches": search.stats.searches, "calls_after_search": search.stats.calls_after_search,
        }  # fmt: skip
        record_request(home.logs_dir / "requests.jsonl", session_id=agent.session_id, provider=route.client.name,
                       model=route.model, outcome=outcome, usage=response.usage if response else None,
                       cost=response.cost if response else None, tools=tools)  # fmt: skip
