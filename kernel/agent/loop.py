"""The agent: a conversation loop of model calls and tool calls, the story of a turn.

A turn opens its session, fires ``on_turn_start`` and ``prefetch``, then runs
model calls and tool batches until the model answers without tools (or the
iteration budget runs out, after one grace call without tools). Each piece
lives beside what it works on: recovery of a failed call in :mod:`.calling`,
compaction beside the engine in :mod:`.compaction`, the session rows in
:mod:`.sessions`, the messages and their flushing in :mod:`.transcript`, how
a reply is judged in :mod:`.answers`. Nothing the provider or the model does
wrong raises out of :meth:`Agent.run_conversation`; failures come back
flagged in the result.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..budget import IterationBudget
from ..hook_calls import CallHooks
from ..host import PluginHost
from ..providers.base import ModelResponse
from ..redact import redact_tool_results
from ..result_budget import ResultBudget
from ..tool_registry import ToolCall, ToolRegistry, ToolResult, plan_batches
from ..tools import TENANT_SERVICE, ToolContext
from .answers import ReplyRecovery
from .calling import Interrupted, ModelRoute, call_model, next_fallback
from .compaction import compress_agent, compress_if_due
from .events import EventHandler, emit
from .history import CLIENT_TOOLS, SKIPPED_RESULT, fence_memory_context
from .resuming import SessionWriter
from .sessions import ensure_session, load_session
from .transcript import Transcript
from .turn_state import TurnFailed, TurnState, split_client_calls

__all__ = ["Agent", "EMPTY_ANSWER"]

#: Kept for plugins that compared against it; the loop never stores or sends a placeholder.
EMPTY_ANSWER = "(empty)"
_GRACE = (
    "You have used every step this task may take. Do not call tools. Answer now with what you have: "
    "what is done, what is not, and what the user should do next."
)


class Agent:
    """One conversation with a model and tools, persisted step by step.

    :param routes: the primary model route first, then the fallbacks in order.
    :param store: a SessionStore (or None for an unpersisted agent).
    :param engine: the active context engine, or None (context overflow then fails).
    :param interactive: True in the REPL: ``ask_user`` and ``approve`` are used.
    :param tenant: whose sessions these are (None: no tenant's); see :mod:`.sessions`.
    :param writer: the writer lease of its session (a chat's; see :mod:`.resuming`); by default none.
    """

    #: Shows a compaction's note before the session rotates (set by the REPL); see :mod:`.compaction`.
    review_compression: Callable[[str, dict[str, Any] | None], tuple[str, str | None]] | None = None
    #: How the latest compression went, in one line (or why nothing changed).
    compress_note: str | None = None

    def __init__(
        self,
        *,
        routes: Sequence[ModelRoute],
        tools: ToolRegistry,
        host: PluginHost,
        store: Any = None,
        budget: IterationBudget | None = None,
        max_iterations: int = 90,
        results_dir: Path | None = None,
        engine: Any = None,
        source: str = "cli",
        session_id: str | None = None,
        parent_session_id: str | None = None,
        system_message: str | None = None,
        soul_path: Path | None = None,
        memory: Any = None,
        prompt_extras: Callable[[], dict[str, str | None]] | None = None,
        cwd: Path | None = None,
        stream: bool = True,
        max_tokens: int = 4096,
        temperature: float | None = None,
        on_event: EventHandler | None = None,
        ask_user: Callable[[str, list[str] | None], str] | None = None,
        approve: Callable[[str, str], bool] | None = None,
        services: dict[str, Any] | None = None,
        home: Any = None,
        config: Any = None,
        owns_store: bool = False,
        tenant: str | None = None,
        writer: SessionWriter | None = None,
    ) -> None:
        if not routes:
            raise ValueError("an agent needs at least one model route")
        self.routes = list(routes)
        self.tools = tools
        self.host = host
        self.store = store
        self.owns_store = owns_store
        self.writer = writer or SessionWriter()  # a chat's agent leases its session; others hold nothing
        self.budget = budget or IterationBudget(max_iterations)
        self.engine = engine
        self.source = source
        self.system_message = system_message
        self.soul_path = soul_path
        self.memory = memory
        self.prompt_extras = prompt_extras
        self.cwd = cwd or Path.cwd()
        self.stream = stream
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.on_event = on_event
        self.result_budget = ResultBudget(results_dir) if results_dir is not None else None
        self.session_id: str | None = session_id
        self.parent_session_id = parent_session_id
        self.children: set[Agent] = set()  # running sub-agents, interrupted with this one
        self.system_prompt: str | None = None
        self.transcript = Transcript(store)  # the messages, and how many of them the store holds
        self.turn = 0
        self.reviews: list[Any] = []  # ReviewSchedule objects, asked after every turn
        # Tools the caller runs (an API client's): a call to one ends the turn with it (turn_state.py).
        self.client_tools: list[dict[str, Any]] = []
        self.offer_own_tools = True
        self.request_options: dict[str, Any] = {}  # passed through to every request (tool_choice, response_format)
        self._ended: str | None = None  # the session whose end was already recorded
        self._interrupt = threading.Event()
        self.hooks = CallHooks.from_config(host, config)  # tool, model and approval hooks (hook_calls.py)
        self.tool_context = ToolContext(  # its session_id is set with the agent's (sessions.py)
            home=home, config=config, cwd=self.cwd,
            services={"store": store, **(services or {})}, ask_user=ask_user, approve=approve,
            is_interrupted=self._interrupt.is_set, hooks=self.hooks,
        )  # fmt: skip
        self.tenant = tenant
        if engine is not None:
            host.register(engine)  # the active engine listens to the kernel hooks
        if session_id is not None:
            self._load_session(session_id)

    # --- sessions ---------------------------------------------------------------

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The current session's messages (the transcript's); those not yet stored are stored at the next flush."""
        return self.transcript.messages

    @messages.setter
    def messages(self, messages: list[dict[str, Any]]) -> None:
        self.transcript.messages = messages

    @property
    def primary(self) -> ModelRoute:
        return self.routes[0]

    @property
    def tenant(self) -> str | None:
        """The tenant this agent works for: its sessions are created with it, and only its are resumed."""
        return self._tenant

    @tenant.setter
    def tenant(self, tenant: str | None) -> None:
        # Tools see the same tenant, always; without one the services hold none, as before tenants.
        self._tenant = tenant
        if tenant is None:
            self.tool_context.services.pop(TENANT_SERVICE, None)
        else:
            self.tool_context.services[TENANT_SERVICE] = tenant

    def _load_session(self, session_id: str) -> None:
        load_session(self, session_id)
        self._ended = None  # a resumed session can end again

    def new_session(self, reason: str = "new") -> str:
        """End the current session (a real end) and start a fresh one."""
        old = self.session_id
        self.end_session(reason)
        self._forget_session()
        new = ensure_session(self)
        self.host.call("on_session_switch", old_session_id=old, new_session_id=new, reason=reason)
        if reason in ("new", "reset"):
            self.host.call("on_session_reset", old_session_id=old, new_session_id=new)
        return new

    def end_session(self, reason: str = "user_exit") -> None:
        """Mark the session ended and fire ``on_session_end``: once per real end, with ``reason``."""
        if self.session_id is None or self._ended == self.session_id:
            return
        self._ended = self.session_id
        if self.store is not None and self.store.get_session(self.session_id) is not None:
            self.transcript.flush(self.session_id)
            self.store.end_session(self.session_id, reason)
        self.host.call("on_session_end", session_id=self.session_id, messages=list(self.messages), reason=reason)
        self.host.call("on_session_finalize", session_id=self.session_id, reason=reason)  # the store holds it all

    def discard_lost_session(self) -> None:
        """The session was deleted from the store under this agent: end it (``deleted``) and start afresh."""
        self.end_session("deleted")
        self._forget_session()

    def _forget_session(self) -> None:
        self.session_id, self.system_prompt, self.turn = None, None, 0
        self.transcript.reset([], persisted=0)

    def fork_settings(self) -> dict[str, Any]:
        """Constructor arguments a quiet copy of this agent shares (reviews, sub-agents)."""
        return {
            "soul_path": self.soul_path,
            "cwd": self.cwd,
            "stream": False,
            "max_tokens": self.max_tokens,
            "home": self.tool_context.home,
            "config": self.tool_context.config,
            "tenant": self.tenant,  # a sub-agent or a review works inside the same tenant
        }

    def close(self) -> None:
        """Release the key leases, stop listening to hooks (the engine), close the store if the agent opened it."""
        for lease in (*(route.lease for route in self.routes), self.writer):  # keys, and the session's writer lease
            if lease is not None and hasattr(lease, "release"):
                lease.release()
        if self.engine is not None:
            self.host.unregister(self.engine)
        if self.memory is not None:
            self.memory.shutdown()
        if self.owns_store and self.store is not None:
            self.store.close()

    def switch_to(self, session_id: str, reason: str = "resume") -> None:
        """Continue another stored session from here on."""
        old = self.session_id
        self.transcript.flush(old)
        self._load_session(session_id)
        self.host.call("on_session_switch", old_session_id=old, new_session_id=self.session_id, reason=reason)

    # --- control ----------------------------------------------------------------

    def interrupt(self) -> None:
        """Stop at the next safe point, sub-agents included (thread-safe; Ctrl-C calls it)."""
        self._interrupt.set()
        interrupt_sources = getattr(self.tools, "interrupt", None)
        if interrupt_sources is not None:  # a source still connecting (MCP start-up) stops holding the turn
            interrupt_sources()
        for child in list(self.children):
            child.interrupt()

    @property
    def interrupted(self) -> bool:
        return self._interrupt.is_set()

    # --- the turn -----------------------------------------------------------------

    def run_conversation(self, message: str | None) -> dict[str, Any]:
        """Run one user turn to its end and report how it went.

        Returns ``final_response``, ``messages``, ``api_calls``, ``completed``, ``interrupted``,
        ``partial``, ``failed``, ``error``, ``session_id``, ``empty`` (no answer came) and
        ``client_tool_calls`` (the calls the turn stopped at). ``message=None`` continues the
        current turn after the caller appended its tool results.
        """
        self._interrupt.clear()
        session_id = ensure_session(self)
        if message is None:
            message = next((m.get("content") or "" for m in reversed(self.messages) if m.get("role") == "user"), "")
        else:
            self.turn += 1
            self.host.call("on_turn_start", session_id=session_id, turn=self.turn, message=message)
            recalled = self.host.call("prefetch", session_id=session_id, query=message)
            self.transcript.start_turn(session_id, message, fence_memory_context(r for r in recalled if isinstance(r, str)))
        state = TurnState()
        try:
            self._run_steps(state)
        except TurnFailed as failure:
            state.failed = True
            state.error = str(failure.error)
            emit(self.on_event, "status", f"failed: {failure.error}")
        except Interrupted as stop:  # raised only once the flag is set: marked interrupted below
            if stop.text:
                state.partial = True
                self._append({"role": "assistant", "content": stop.text, "finish_reason": "interrupted"})
                state.final = stop.text
        finally:
            self.transcript.flush(self.session_id)
        if self._interrupt.is_set():
            state.interrupted = True
        result = state.report(self.messages, self.session_id)
        if self.memory is not None and result["completed"]:
            # Queued on the memory worker: never on the user's time, and never for
            # an interrupted or failed turn.
            self.memory.sync_turn(message, state.final, self.session_id, messages=self.messages)
            self.memory.queue_prefetch(message, self.session_id)
        for schedule in self.reviews:
            schedule.maybe_start(self, result)
        return result

    def _run_steps(self, state: TurnState) -> None:
        recovery = ReplyRecovery(self.max_tokens)
        extra_next: list[dict[str, Any]] = []
        first = True
        while True:
            if self._interrupt.is_set():
                return  # run_conversation marks the turn interrupted
            compress_if_due(self, preflight=first)
            first = False
            grace = not self.budget.consume()
            state.budget_exhausted = state.budget_exhausted or grace
            extra = ([{"role": "user", "content": _GRACE}] if grace else []) + extra_next
            outcome = call_model(self, state, with_tools=not grace, extra=extra, max_tokens=recovery.max_tokens)
            response = outcome.response
            state.partial = state.partial or outcome.partial
            for note in outcome.notes:
                emit(self.on_event, "status", note)
            message = _assistant_message(response)
            if grace:
                message.pop("tool_calls", None)  # no tools were offered; never leave calls unanswered
            after_tools = bool(self.messages) and self.messages[-1].get("role") == "tool"
            step = recovery.assess(message, response.finish_reason, grace=grace, after_tools=after_tools)
            extra_next = step.extra
            if step.status:
                emit(self.on_event, "status", step.status)
            if step.kind == "retry":
                continue
            if step.kind == "fallback":
                if next_fallback(self, state, "the model kept answering with nothing"):
                    continue
                state.empty = True  # no placeholder enters the history
                return
            if step.kind in ("fail", "grace_failed"):
                state.failed = True
                state.error = step.text if step.kind == "fail" else "the step budget ran out and the last call gave no answer"
                state.final = "" if step.kind == "fail" else step.text
                return
            calls = (message.get("tool_calls") or []) if step.kind == "tools" else []
            own, external = split_client_calls(calls, self.client_tools)
            if external:
                message["marker"] = CLIENT_TOOLS  # repair_history leaves these calls open for the client
            if step.append:
                self._append(message)
            if step.kind == "tools":
                if own:
                    self._run_tools(own)
                if external:  # the caller runs these; its results continue the turn
                    state.client_calls, state.final = external, message.get("content") or ""
                    return
            elif step.kind == "continue":
                self._append({"role": "user", "content": step.follow_up})
            else:  # answer or incomplete
                state.final = step.text
                state.incomplete = step.kind == "incomplete"
                return

    def _append(self, *messages: dict[str, Any]) -> None:
        self.transcript.append(self.session_id, *messages)  # stored at once: a crash loses nothing completed

    def compress(self, focus_topic: str | None = None, *, manual: bool = False, review: bool = False) -> bool:
        """Compress through the context engine and continue in a child session (see :mod:`.compaction`).

        The old session ends with ``compression`` and keeps its messages; the
        child holds the compressed history and a rebuilt system prompt.
        Returns False, with the reason in ``compress_note``, when nothing changed.
        """
        return compress_agent(self, focus_topic, manual=manual, review=review)

    # --- tools --------------------------------------------------------------------

    def _run_tools(self, calls: list[dict[str, Any]]) -> None:
        parsed = [ToolCall.from_message(c) for c in calls]
        results: list[ToolResult] = []
        for batch in plan_batches(parsed, self.tools, self.cwd):
            if self._interrupt.is_set():
                break
            for call in batch:
                emit(self.on_event, "tool_start", call.name, call_id=call.id, arguments=call.arguments)
            done = self.tools.run(batch, self.tool_context)
            redact_tool_results(done, self.tool_context.config)  # before it is shown, stored, saved or sent
            for result in done:
                emit(self.on_event, "tool_end", result.name, call_id=result.call_id, error=result.is_error,
                     duration=result.duration, output=result.content)  # fmt: skip
            results.extend(done)
        ran = {r.call_id for r in results}
        skipped = [ToolResult(c.id, c.name, SKIPPED_RESULT, is_error=True) for c in parsed if c.id not in ran]
        if self.result_budget is not None:
            self.result_budget.apply(results, self.tools)
        self._append(*(r.as_message() for r in results + skipped))


def _assistant_message(response: ModelResponse) -> dict[str, Any]:
    """The reply as the history keeps it: its finish reason and reasoning alongside."""
    message = dict(response.message)
    message["role"] = "assistant"
    message["finish_reason"] = response.finish_reason
    if response.reasoning and not message.get("reasoning"):
        message["reasoning"] = response.reasoning
    return message
