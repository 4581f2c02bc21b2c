"""One model call, unit by unit: the reader thread, interrupts, broken streams, a stream with no response.

The clients here are small fakes of ``ModelClient`` (no SDK, no HTTP) so each
case is exact and fast; test_streamed_calls.py drives the same code through
the agent loop over the fake server.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from hermes.kernel.agent.calling import POLL_SECONDS, CallOutcome, Interrupted, ModelRoute, call_with_stream, interruptible
from hermes.kernel.providers.base import ModelRequest, ModelResponse, StreamDelta
from hermes.kernel.providers.errors import ProviderError
from hermes.kernel.usage import CanonicalUsage

RESPONSE = ModelResponse({"role": "assistant", "content": "done"}, "stop", CanonicalUsage(1, 1, request_count=1), model="m")


class Client:
    """Yields ``items`` (an exception among them is raised there) after ``wait`` seconds; records each call."""

    name = "fake"

    def __init__(self, *items: Any, wait: float = 0.0, hold_until_abort: bool = False) -> None:
        self.items = items
        self.wait = wait
        self.hold_until_abort = hold_until_abort
        self.calls: list[tuple[str, Any, str, bool]] = []
        self.aborted = threading.Event()

    def _record(self, method: str, lease: Any) -> None:
        me = threading.current_thread()
        self.calls.append((method, lease, me.name, me.daemon))

    def _items(self) -> Iterator[Any]:
        if self.hold_until_abort:
            self.aborted.wait(5)  # a request the network never answers, until the connection is closed
        elif self.wait:
            time.sleep(self.wait)
        for item in self.items:
            if isinstance(item, BaseException):
                raise item
            yield item

    def stream(self, request: ModelRequest, *, lease: Any = None) -> Iterator[Any]:
        self._record("stream", lease)
        return self._items()

    def complete(self, request: ModelRequest, *, lease: Any = None) -> Any:
        self._record("complete", lease)
        return next(self._items())

    def abort(self) -> None:
        self.aborted.set()


def request(stream: bool = True) -> ModelRequest:
    return ModelRequest(model="m", messages=[{"role": "user", "content": "hi"}], stream=stream)


def never() -> bool:
    return False


@pytest.mark.parametrize("stream", [True, False])
def test_the_call_runs_in_a_named_daemon_reader_with_the_routes_lease(stream: bool) -> None:
    lease = object()
    client = Client(RESPONSE)
    outcome = call_with_stream(ModelRoute(client, "m", lease), request(stream), on_delta=None, is_interrupted=never)
    assert outcome.response is RESPONSE and not outcome.partial and outcome.notes == []
    # A daemon: an abandoned reader (after an interrupt) never keeps the process alive at exit.
    assert client.calls == [("stream" if stream else "complete", lease, "hermes-model-call", True)]


def test_deltas_reach_on_delta_in_order_then_the_response_returns() -> None:
    deltas = [StreamDelta(reasoning="think"), StreamDelta(text="Hel"), StreamDelta(text="lo")]
    seen: list[StreamDelta] = []
    outcome = call_with_stream(ModelRoute(Client(*deltas, RESPONSE), "m"), request(), on_delta=seen.append,
                               is_interrupted=never)  # fmt: skip
    assert seen == deltas and outcome.response is RESPONSE and not outcome.partial


def test_a_slow_answer_is_waited_for_past_many_polls() -> None:
    client = Client(StreamDelta(text="late"), RESPONSE, wait=POLL_SECONDS * 4)
    outcome = call_with_stream(ModelRoute(client, "m"), request(), on_delta=None, is_interrupted=never)
    assert outcome.response is RESPONSE and not client.aborted.is_set()


@pytest.mark.parametrize("deltas", [[], [StreamDelta(text="no end")]])
def test_a_stream_that_ends_without_a_response_is_a_retryable_format_error(deltas: list[StreamDelta]) -> None:
    with pytest.raises(ProviderError) as caught:
        call_with_stream(ModelRoute(Client(*deltas), "m"), request(), on_delta=None, is_interrupted=never)
    error = caught.value
    assert (error.reason, error.message, error.retryable) == ("format_error", "the stream from fake:m ended without a response", True)


def test_an_error_before_any_text_is_raised_as_it_is() -> None:
    failure = ProviderError("server_error", "bad gateway", status=502)
    with pytest.raises(ProviderError) as caught:
        call_with_stream(ModelRoute(Client(StreamDelta(reasoning="only thinking"), failure), "m"), request(),
                         on_delta=None, is_interrupted=never)  # fmt: skip
    assert caught.value is failure


@pytest.mark.parametrize("reasoning", [["step one, ", "step two"], []])
def test_a_stream_broken_after_text_keeps_the_text_as_an_incomplete_answer(reasoning: list[str], caplog) -> None:
    items = [*(StreamDelta(reasoning=r) for r in reasoning), StreamDelta(text="Hello "), StreamDelta(text="world"),
             ProviderError("server_error", "connection reset")]  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="hermes.kernel.agent.calling"):
        outcome = call_with_stream(ModelRoute(Client(*items), "model-x"), request(), on_delta=None, is_interrupted=never)
    assert isinstance(outcome, CallOutcome) and outcome.partial is True
    assert outcome.notes == ["the stream broke mid-answer (server_error); the text so far is kept"]
    expected = {"role": "assistant", "content": "Hello world"}
    if reasoning:
        expected["reasoning"] = "step one, step two"
    response = outcome.response
    assert response.message == expected
    assert (response.finish_reason, response.model, response.usage) == ("incomplete", "model-x", CanonicalUsage(request_count=1))
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", "stream from fake:model-x broke after 11 characters (server_error); keeping the text")]


def test_an_interrupt_while_the_request_waits_closes_the_connection() -> None:
    asked: list[bool] = []

    def interrupted_at_the_second_look() -> bool:
        asked.append(True)
        return len(asked) >= 2  # the first look is before the wait: only the wait's timeout looks again

    client = Client(RESPONSE, hold_until_abort=True)
    with pytest.raises(Interrupted) as caught:
        call_with_stream(ModelRoute(client, "m"), request(), on_delta=None, is_interrupted=interrupted_at_the_second_look)
    assert caught.value.text == "" and str(caught.value) == "interrupted"
    assert client.aborted.is_set() and len(asked) == 2


def test_an_interrupt_after_a_delta_stops_before_the_queued_rest() -> None:
    # Every item is queued at once: only the check after each delta stops the stream.
    client = Client(StreamDelta(text="one "), StreamDelta(text="two "), StreamDelta(text="three"), RESPONSE)
    seen: list[str] = []
    with pytest.raises(Interrupted) as caught:
        call_with_stream(ModelRoute(client, "m"), request(), on_delta=lambda d: seen.append(d.text),
                         is_interrupted=lambda: len(seen) >= 2)  # fmt: skip
    assert seen == ["one ", "two "] and caught.value.text == "one two " and client.aborted.is_set()


def test_interruptible_alone_raises_with_no_text() -> None:
    client = Client(StreamDelta(text="kept by the caller"), RESPONSE, hold_until_abort=True)
    with pytest.raises(Interrupted) as caught:
        list(interruptible(ModelRoute(client, "m"), request(), lambda: True))
    assert caught.value.text == "" and client.aborted.is_set()


def test_a_client_without_abort_is_interrupted_all_the_same() -> None:
    class NoAbort:
        name = "plain"

        def stream(self, request: ModelRequest, *, lease: Any = None) -> Iterator[Any]:
            yield StreamDelta(text="partial")
            yield RESPONSE

    seen: list[str] = []
    with pytest.raises(Interrupted) as caught:
        call_with_stream(ModelRoute(NoAbort(), "m"), request(), on_delta=lambda d: seen.append(d.text),
                         is_interrupted=lambda: bool(seen))  # fmt: skip
    assert caught.value.text == "partial"
