"""Turns on a server: one worker thread per running turn, bounded, queued, serialised per session.

Admission happens on the event loop: a turn is refused with :class:`QueueFull`
when ``max_concurrent`` turns run and ``max_queue`` more wait. An admitted
turn waits for its conversation's lock (turns of one session never overlap),
then for a worker slot, then runs ``Agent.run_conversation`` in a thread. The
agent's events cross back to the loop through an ``asyncio.Queue``, so a
streaming response reads them as they happen.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any

from hermes.kernel.agent.titles import LocalTitle

from .profiles import Profile
from .settings import ServeSettings
from .tenants import Scope

__all__ = ["QueueFull", "ServerDraining", "Turn", "TurnRunner", "TurnSpec"]

log = logging.getLogger(__name__)


class QueueFull(Exception):
    """Every worker is busy and the queue is full; retry after ``retry_after`` seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"the server is busy; retry after {retry_after} s")
        self.retry_after = retry_after


class ServerDraining(Exception):
    """The server is shutting down and takes no new turns."""


@dataclass
class TurnSpec:
    """What one request asks: a message in a conversation of a profile.

    ``session_id`` continues a stored session (its compression tip);
    ``fork_from`` with ``fork_at`` first copies that session's first messages
    into a new one; ``new_id`` names a new session; ``history`` and ``system``
    seed a new session with what a stateless client sent.
    """

    profile: Profile
    message: str | None  # None: the client's tool results (``tool_results``) continue the turn
    session_id: str | None = None
    new_id: str | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    system: str | None = None
    continue_at: int | None = None  # the message count of the response continued from
    end_after: str | None = None  # end the session after the turn with this reason (stateless requests)
    key_name: str | None = None
    meter: Any = None  # the key's TurnMeter (limits.py): asked before every model call, settled at the end
    tool_results: list[dict[str, Any]] = field(default_factory=list)  # tool messages appended before the turn
    client_tools: list[dict[str, Any]] = field(default_factory=list)  # Chat tool schemas the client runs
    own_tools: bool = True  # offer the agent's tools too (serve.tools)
    options: dict[str, Any] = field(default_factory=dict)  # tool_choice, response_format, ... passed through
    branch_id: str | None = None  # the id a branch from ``continue_at`` gets (response ids name it up front)
    scope: Scope = field(default_factory=Scope)  # the tenant the turn acts for (tenants.py)

    @property
    def lock_key(self) -> str:
        return f"{self.profile.name}:{self.session_id or self.new_id or id(self)}"


@dataclass
class TurnOutcome:
    """The agent's result dict, this turn's token usage and cost, and the session it ended in."""

    result: dict[str, Any]
    usage: dict[str, int]
    cost_usd: float
    session_id: str
    message_count: int


_DONE = object()


class Turn:
    """One admitted turn: its events (``AgentEvent`` objects, then the outcome) and its interrupt."""

    def __init__(self, spec: TurnSpec, loop: asyncio.AbstractEventLoop) -> None:
        self.spec = spec
        self.events: asyncio.Queue[Any] = asyncio.Queue()
        self.outcome: TurnOutcome | None = None
        self.error: BaseException | None = None
        self.started = False
        self._loop = loop
        self._agent: Any = None
        self._interrupt = threading.Event()

    def interrupt(self) -> None:
        """Stop the turn at its next safe point (thread-safe); a queued turn never starts."""
        self._interrupt.set()
        agent = self._agent
        if agent is not None:
            agent.interrupt()

    @property
    def interrupted(self) -> bool:
        return self._interrupt.is_set()

    def _post(self, item: Any) -> None:
        self._loop.call_soon_threadsafe(self.events.put_nowait, item)

    def on_event(self, event: Any) -> None:
        # An interrupt that raced the start of run_conversation (which clears the
        # agent's flag) is re-applied at the first event.
        if self._interrupt.is_set() and self._agent is not None and not self._agent.interrupted:
            self._agent.interrupt()
        self._post(event)

    async def wait(self) -> TurnOutcome:
        """Drain the events and return the outcome (raises what the turn raised)."""
        while True:
            item = await self.events.get()
            if item is _DONE:
                break
        if self.error is not None:
            raise self.error
        assert self.outcome is not None
        return self.outcome


_WIRE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "tool_name", "reasoning")


def _wire(message: dict[str, Any]) -> dict[str, Any]:
    return {k: message[k] for k in _WIRE_KEYS if message.get(k) is not None or k == "content"}


def _usage_of(store: Any, session_id: str) -> tuple[dict[str, int], float]:
    usage = store.usage(session_id)
    data = usage.usage.as_dict()
    tokens = {k: int(data.get(k) or 0) for k in ("input_tokens", "output_tokens", "cache_read_tokens",
                                                  "cache_write_tokens", "reasoning_tokens")}  # fmt: skip
    return tokens, float(usage.known_cost_usd or 0.0)


class TurnRunner:
    """Admission, per-session serialisation and worker threads for every turn of one server."""

    def __init__(self, settings: ServeSettings) -> None:
        self.settings = settings
        self.draining = False
        self.drain_interrupted = 0  # running turns the drain interrupted
        self._pending = 0
        self._slots: asyncio.Semaphore | None = None
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}
        self._running: set[Turn] = set()
        self._threads: set[threading.Thread] = set()
        self._durations: list[float] = []
        self.touched: dict[str, tuple[Profile, str, Scope]] = {}  # open sessions this process served
        self.idle_limit = max(16, 2 * settings.max_concurrent)
        self._idle: OrderedDict[tuple[str, str, Scope], tuple[Any, int]] = OrderedDict()
        self._idle_lock = threading.Lock()

    @property
    def pending(self) -> int:
        return self._pending

    def _retry_after(self) -> int:
        recent = self._durations[-50:]
        typical = sum(recent) / len(recent) if recent else 1.0
        waves = (self._pending - self.settings.max_concurrent + 1) / self.settings.max_concurrent
        return max(1, math.ceil(typical * max(waves, 1.0)))

    def admit(self, spec: TurnSpec) -> Turn:
        """Start ``spec`` (on the running loop) or raise QueueFull / ServerDraining at once."""
        if self.draining:
            raise ServerDraining("the server is shutting down")
        if self._pending >= self.settings.max_concurrent + self.settings.max_queue:
            raise QueueFull(self._retry_after())
        loop = asyncio.get_running_loop()
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.settings.max_concurrent)
        self._pending += 1
        turn = Turn(spec, loop)
        asyncio.ensure_future(self._drive(turn))
        return turn

    async def _drive(self, turn: Turn) -> None:
        key = turn.spec.lock_key
        lock, users = self._locks.get(key) or (asyncio.Lock(), 0)
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                assert self._slots is not None
                async with self._slots:
                    if turn.interrupted:  # the client left while the turn waited: nothing ran
                        turn.error = asyncio.CancelledError("the client disconnected before the turn started")
                        turn._post(_DONE)
                        return
                    turn.started = True
                    self._running.add(turn)
                    started = time.monotonic()
                    done = asyncio.get_running_loop().create_future()
                    thread = threading.Thread(target=self._work, args=(turn, done), name="hermes-serve-turn", daemon=True)
                    self._threads.add(thread)
                    thread.start()
                    try:
                        await asyncio.shield(done)
                    finally:
                        self._running.discard(turn)
                        self._durations.append(time.monotonic() - started)
                        del self._durations[:-200]
        finally:
            self._pending -= 1
            lock, users = self._locks[key]
            if users <= 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)

    def _work(self, turn: Turn, done: asyncio.Future[None]) -> None:
        """The worker thread: build the agent, run the turn, hand back the outcome, then clean up."""
        spec = turn.spec
        agent = None
        try:
            agent = self._take_idle(spec)
            if agent is None:
                agent = spec.profile.build_agent(self.settings, session_id=spec.session_id, on_event=turn.on_event,
                                                 scope=spec.scope)  # fmt: skip
            else:
                agent.on_event = turn.on_event
            if spec.continue_at is not None and (agent.session_id != spec.session_id or len(agent.messages) != spec.continue_at):
                # The conversation moved on (or was compressed) after the response the client
                # continues from: branch a new session from that point instead.
                history = [_wire(m) for m in agent.store.get_messages(spec.session_id)[: spec.continue_at]]
                _close(agent)
                agent = spec.profile.build_agent(self.settings, session_id=None, on_event=turn.on_event, scope=spec.scope)
                agent.parent_session_id = spec.session_id
                spec = replace(spec, session_id=None, continue_at=None, history=history, system=None, new_id=spec.branch_id)
            turn._agent = agent
            _bind_meter(agent, spec.meter)
            agent.client_tools, agent.offer_own_tools, agent.request_options = spec.client_tools, spec.own_tools, spec.options
            # API sessions are titled from their first user message (LocalTitle), never by a model call per request,
            # whatever sessions.auto_title says: a client cannot name its sessions otherwise.
            agent.reviews[:] = [r for r in agent.reviews if getattr(r, "name", None) != "title"]
            agent.reviews.append(LocalTitle())
            seeded = False
            if spec.new_id and agent.store.get_session(spec.new_id) is not None:
                # A request for the same new conversation ran first (it held the lock): continue it.
                agent.switch_to(spec.new_id)
            elif spec.session_id is None:
                if spec.new_id:
                    agent.session_id = spec.new_id  # the new session is created under this id
                if spec.system:
                    agent.system_message = spec.system
                if spec.history or spec.tool_results:
                    from hermes.kernel.agent.history import repair_history

                    # A client's history may pair tool calls and results badly; providers reject that.
                    agent.messages = repair_history(spec.history + spec.tool_results)  # persisted with the first flush
                    seeded = True
            store = agent.store
            before_id = agent.session_id
            before = _usage_of(store, before_id) if before_id and store.get_session(before_id) else ({}, 0.0)
            if not seeded:
                _add_results(agent, spec)
            if turn.interrupted:
                agent.interrupt()
            result = agent.run_conversation(spec.message)
            session_id = result["session_id"]
            tokens, cost = _usage_of(store, session_id)
            if before_id and before_id != session_id:  # compressed into a child: count the parent's share too
                old_tokens, old_cost = _usage_of(store, before_id)
                tokens = {k: v + old_tokens.get(k, 0) for k, v in tokens.items()}
                cost += old_cost
            tokens = {k: v - before[0].get(k, 0) for k, v in tokens.items()}
            turn.outcome = TurnOutcome(result, tokens, max(cost - before[1], 0.0), session_id, len(agent.messages))
            keep = not spec.end_after and not result.get("failed")
            if spec.end_after:
                reason = spec.end_after
                if result.get("interrupted"):
                    reason = "server_shutdown" if self.draining else "client_disconnect"
                agent.end_session(reason)
            else:
                if before_id and before_id != session_id:
                    self.touched.pop(before_id, None)  # compressed: the parent already ended
                self.touched[session_id] = (spec.profile, session_id, spec.scope)
            if keep:
                stored = agent.store.get_session(session_id)
                self._keep_idle(spec, session_id, agent, int(stored["message_count"]) if stored else -1)
                agent = None
        except BaseException as exc:  # noqa: BLE001 - handed to the request, which answers with it
            log.warning("turn failed: %s", exc, exc_info=log.isEnabledFor(logging.DEBUG))
            turn.error = exc
        finally:
            if spec.meter is not None:  # however the turn ended (a client that hung up too), before anyone hears of it
                spec.meter.settle(turn.outcome.cost_usd if turn.outcome is not None else 0.0)
            # The slot is freed (done) before the request learns the outcome (_DONE): posted the
            # other way round, a client that sent its next request at once could find the
            # server still full and get a 429, had this thread paused between the two.
            turn._loop.call_soon_threadsafe(lambda: done.done() or done.set_result(None))
            turn._post(_DONE)
            if agent is not None:
                _close(agent)
            self._threads.discard(threading.current_thread())

    # --- idle agents ---------------------------------------------------------------
    # The agent of a server-side session stays built between its turns: the next turn
    # skips building providers, engine, tools and memory. It is used again only while
    # the store still holds exactly what it left (another process may have moved the
    # conversation on); otherwise the turn builds afresh from the store.

    def _take_idle(self, spec: TurnSpec) -> Any:
        if spec.session_id is None:
            return None
        with self._idle_lock:
            entry = self._idle.pop((spec.profile.name, spec.session_id, spec.scope), None)
        if entry is None:
            return None
        agent, count = entry
        row = agent.store.get_session(spec.session_id)
        if row is None or row.get("end_reason") == "compression" or int(row["message_count"]) != count:
            _close(agent)
            return None
        return agent

    def _keep_idle(self, spec: TurnSpec, session_id: str, agent: Any, count: int) -> None:
        # Keyed by scope too: an agent built with one tenant's home never serves another's turn.
        key = (spec.profile.name, session_id, spec.scope)
        with self._idle_lock:
            self._idle[key] = (agent, count)
            self._idle.move_to_end(key)
            evicted = []
            while len(self._idle) > self.idle_limit:
                evicted.append(self._idle.popitem(last=False)[1][0])
        for old in evicted:
            _close(old)

    def close_idle(self) -> list[tuple[str, Any]]:
        """Hand over every idle agent (profile name, agent) and forget them."""
        with self._idle_lock:
            agents = [(key[0], agent) for key, (agent, _) in self._idle.items()]
            self._idle.clear()
        return agents

    def interrupt_all(self) -> int:
        """Interrupt every running or queued turn; returns how many were running."""
        running = list(self._running)
        for turn in running:
            if not turn.interrupted:
                self.drain_interrupted += self.draining  # counted once, for the drain line
            turn.interrupt()
        return len(running)

    def join_threads(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for thread in list(self._threads):
            thread.join(max(0.0, deadline - time.monotonic()))

    def end_touched(self, reason: str) -> list[str]:
        """End the open sessions this process served with ``reason`` (hooks fire); returns their ids."""
        ended = []
        idle = {agent.session_id: agent for _, agent in self.close_idle()}
        for profile, session_id, scope in list(self.touched.values()):
            agent = idle.pop(session_id, None)
            try:
                if agent is None:
                    agent = profile.build_agent(self.settings, session_id=session_id, on_event=lambda event: None,
                                                scope=scope)  # fmt: skip
            except Exception as exc:  # noqa: BLE001 - one broken session must not stop the others ending
                log.warning("could not end session %s: %s", session_id, exc)
                continue
            try:
                session = agent.store.get_session(agent.session_id)
                if session is not None and session.get("ended_at") is None:
                    agent.end_session(reason)
                    ended.append(agent.session_id)
            finally:
                _close(agent)
        for agent in idle.values():
            _close(agent)
        self.touched.clear()
        return ended


def _bind_meter(agent: Any, meter: Any) -> None:
    slot = agent.tool_context.services.get("serve.meter")
    if slot is not None:
        slot.meter, slot.interrupted = meter, lambda: agent.interrupted


def _add_results(agent: Any, spec: TurnSpec) -> None:
    """Append the client's tool results to a stored session; a new user message first closes calls left open."""
    from hermes.kernel.agent.history import repair_history

    if spec.tool_results:
        agent.messages.extend(spec.tool_results)  # persisted with the turn's first flush
    elif agent.messages and spec.message is not None:
        closed = repair_history([*agent.messages, {"role": "user", "content": ""}])[:-1]
        if len(closed) > len(agent.messages) and closed[: len(agent.messages)] == agent.messages:
            agent.messages[:] = closed  # the client moved on without the results: skipped ones are stored


def _close(agent: Any) -> None:
    """Let the agent's background reviews finish, then close it (never raises)."""
    try:
        for schedule in agent.reviews:
            schedule.wait(120.0)
        agent.close()
    except Exception:
        log.warning("closing an agent failed", exc_info=True)
