"""The agent: a conversation loop of model calls and tool calls.

The outer loop runs model calls and tool batches until the model answers
without tools (or the iteration budget runs out, after one grace call
without tools). The inner loop (:meth:`Agent._call_model`) recovers a failed
call: compress and retry on context overflow, switch to the next fallback
provider, and keep streamed text when a connection drops. Nothing the
provider or the model does wrong raises out of :meth:`Agent.run_conversation`;
failures come back flagged in the result.

Every step is flushed to the session store as it completes, so a killed
process loses nothing that finished, and :func:`repair_history` makes the
conversation valid again on resume.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..budget import IterationBudget
from ..host import PluginHost
from ..prompt import PromptContext, build_system_prompt
from ..providers.base import ModelRequest, ModelResponse, StreamDelta
from ..providers.errors import ProviderError
from ..redact import redact_tool_results
from ..result_budget import ResultBudget
from ..tool_registry import ToolCall, ToolRegistry, ToolResult, plan_batches
from ..tools import TENANT_SERVICE, ToolContext
from ..usage import record_request
from .answers import ReplyRecovery
from .repairs import repair, sanitize_messages, stepped_window
from .calling import CallOutcome, Interrupted, ModelRoute, call_with_stream
from .turn_state import _TurnFailed, _TurnState, _carry_over_text, _wire_message, offered_schemas, split_client_calls
from .history import CLIENT_TOOLS, SKIPPED_RESULT, fence_memory_context
from .sessions import ensure_session, load_session
from .resuming import SessionWriter

__all__ = ["Agent", "AgentEvent", "EMPTY_ANSWER"]

log = logging.getLogger(__name__)

#: Kept for plugins that compared against it; the loop never stores or sends a placeholder.
EMPTY_ANSWER = "(empty)"
_GRACE = (
    "You have used every step this task may take. Do not call tools. Answer now with what you have: "
    "what is done, what is not, and what the user should do next."
)
_MAX_COMPRESSIONS = 3


@dataclass(frozen=True)
class AgentEvent:
    """Progress for whoever displays it: ``kind`` and details.

    Kinds: ``text`` / ``reasoning`` (streamed pieces), ``tool_start``,
    ``tool_end``, ``status`` (retries, fallbacks, compression, notes).
    """

    kind: str
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)


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
        on_event: Callable[[AgentEvent], None] | None = None,
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
        self.messages: list[dict[str, Any]] = []
        self.turn = 0
        self.reviews: list[Any] = []  # ReviewSchedule objects, asked after every turn
        # Tools the caller runs (an API client's): a call to one ends the turn with it (turn_state.py).
        self.client_tools: list[dict[str, Any]] = []
        self.offer_own_tools = True
        self.request_options: dict[str, Any] = {}  # passed through to every request (tool_choice, response_format)
        self._persisted = 0
        self._ended: str | None = None  # the session whose end was already recorded
        self._ephemeral = ""  # this turn's fenced recall, sent but never stored
        self._turn_index = -1
        self._interrupt = threading.Event()
        self.tool_context = ToolContext(  # its session_id is set with the agent's (_ensure_session, _load_session)
            home=home, config=config, cwd=self.cwd,
            services={"store": store, **(services or {})}, ask_user=ask_user, approve=approve,
            is_interrupted=self._interrupt.is_set,
        )  # fmt: skip
        self.tenant = tenant
        if engine is not None:
            host.register(engine)  # the active engine listens to the kernel hooks
        if session_id is not None:
            self._load_session(session_id)

    # --- sessions ---------------------------------------------------------------

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

    def _ensure_session(self) -> str:
        return ensure_session(self)

    def _build_prompt(self, session_id: str) -> str:
        return build_system_prompt(
            PromptContext(
                session_id=session_id,
                model=self.primary.model,
                provider=self.primary.client.name,
                tool_names=tuple(self.tools.names),
                soul_path=self.soul_path,
                system_message=self.system_message,
                memory_block=self.memory.system_prompt_block() if self.memory is not None else None,
                **(self.prompt_extras() if self.prompt_extras else {}),
                carry_over=_carry_over_text(self.tool_context.state, getattr(self.engine, "system_note", None)),
                cwd=self.cwd,
            )
        )

    def new_session(self, reason: str = "new") -> str:
        """End the current session (a real end) and start a fresh one."""
        old = self.session_id
        self.end_session(reason)
        self.session_id, self.system_prompt, self.messages, self._persisted, self.turn = None, None, [], 0, 0
        new = self._ensure_session()
        self.host.call("on_session_switch", old_session_id=old, new_session_id=new, reason=reason)
        return new

    def end_session(self, reason: str = "user_exit") -> None:
        """Mark the session ended and fire ``on_session_end``: once per real end, with ``reason``."""
        if self.session_id is None or self._ended == self.session_id:
            return
        self._ended = self.session_id
        if self.store is not None and self.store.get_session(self.session_id) is not None:
            self._flush()
            self.store.end_session(self.session_id, reason)
        self.host.call("on_session_end", session_id=self.session_id, messages=list(self.messages), reason=reason)

    def discard_lost_session(self) -> None:
        """The session was deleted from the store under this agent: end it (``deleted``) and start afresh."""
        self.end_session("deleted")
        self.session_id, self.system_prompt, self.messages, self._persisted, self.turn = None, None, [], 0, 0

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
        self._flush()
        self._load_session(session_id)
        self.host.call("on_session_switch", old_session_id=old, new_session_id=self.session_id, reason=reason)

    def _flush(self) -> None:
        if self.store is None or self.session_id is None:
            return  # nothing to write to (no store, or no session yet: then no messages either)
        pending = self.messages[self._persisted :]
        if pending:
            self.store.append_messages(self.session_id, pending)
            self._persisted = len(self.messages)

    def _append(self, *messages: dict[str, Any]) -> None:
        self.messages.extend(messages)
        self._flush()

    # --- control ----------------------------------------------------------------

    def interrupt(self) -> None:
        """Stop at the next safe point, sub-agents included (thread-safe; Ctrl-C calls it)."""
        self._interrupt.set()
        for child in list(self.children):
            child.interrupt()

    @property
    def interrupted(self) -> bool:
        return self._interrupt.is_set()

    def _emit(self, kind: str, text: str, **data: Any) -> None:
        if self.on_event is not None:
            try:
                self.on_event(AgentEvent(kind, text, data))
            except Exception:  # a display problem must not end the turn
                log.debug("event handler failed", exc_info=True)

    # --- the loop -----------------------------------------------------------------

    def run_conversation(self, message: str | None) -> dict[str, Any]:
        """Run one user turn to its end and report how it went.

        Returns ``final_response``, ``messages``, ``api_calls``, ``completed``, ``interrupted``,
        ``partial``, ``failed``, ``error``, ``session_id``, ``empty`` (no answer came) and
        ``client_tool_calls`` (the calls the turn stopped at). ``message=None`` continues the
        current turn after the caller appended its tool results.
        """
        self._interrupt.clear()
        session_id = self._ensure_session()
        if message is None:
            message = next((m.get("content") or "" for m in reversed(self.messages) if m.get("role") == "user"), "")
        else:
            self.turn += 1
            self.host.call("on_turn_start", session_id=session_id, turn=self.turn, message=message)
            recalled = self.host.call("prefetch", session_id=session_id, query=message)
            self._ephemeral = fence_memory_context(r for r in recalled if isinstance(r, str))
            self._turn_index = len(self.messages)
            self._append({"role": "user", "content": message})
        state = _TurnState()
        try:
            self._run_steps(state)
        except _TurnFailed as failure:
            state.failed = True
            state.error = str(failure.error)
            self._emit("status", f"failed: {failure.error}")
        except Interrupted as stop:  # raised only once the flag is set: marked interrupted below
            if stop.text:
                state.partial = True
                self._append({"role": "assistant", "content": stop.text, "finish_reason": "interrupted"})
                state.final = stop.text
        finally:
            self._flush()
        if self._interrupt.is_set():
            state.interrupted = True
        result = {
            "final_response": state.final,
            "messages": list(self.messages),
            "api_calls": state.api_calls,
            "completed": not (state.failed or state.interrupted or state.empty or state.incomplete),
            "incomplete": state.incomplete,
            "interrupted": state.interrupted,
            "partial": state.partial,
            "failed": state.failed,
            "error": state.error,
            "empty": state.empty,
            "budget_exhausted": state.budget_exhausted,
            "session_id": self.session_id,  # a compression during the turn moved it to a child
            "client_tool_calls": state.client_calls,
        }
        if self.memory is not None and result["completed"]:
            # Queued on the memory worker: never on the user's time, and never for
            # an interrupted or failed turn.
            self.memory.sync_turn(message, state.final, self.session_id, messages=self.messages)
            self.memory.queue_prefetch(message, self.session_id)
        for schedule in self.reviews:
            schedule.maybe_start(self, result)
        return result

    def _run_steps(self, state: _TurnState) -> None:
        recovery = ReplyRecovery(self.max_tokens)
        extra_next: list[dict[str, Any]] = []
        first = True
        while True:
            if self._interrupt.is_set():
                return  # run_conversation marks the turn interrupted
            self._maybe_compress(preflight=first)
            first = False
            grace = not self.budget.consume()
            state.budget_exhausted = state.budget_exhausted or grace
            extra = ([{"role": "user", "content": _GRACE}] if grace else []) + extra_next
            outcome = self._call_model(state, with_tools=not grace, extra=extra, max_tokens=recovery.max_tokens)
            response = outcome.response
            state.partial = state.partial or outcome.partial
            for note in outcome.notes:
                self._emit("status", note)
            message = self._assistant_message(response)
            if grace:
                message.pop("tool_calls", None)  # no tools were offered; never leave calls unanswered
            after_tools = bool(self.messages) and self.messages[-1].get("role") == "tool"
            step = recovery.assess(message, response.finish_reason, grace=grace, after_tools=after_tools)
            extra_next = step.extra
            if step.status:
                self._emit("status", step.status)
            if step.kind == "retry":
                continue
            if step.kind == "fallback":
                if self._next_fallback(state, "the model kept answering with nothing"):
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

    def _assistant_message(self, response: ModelResponse) -> dict[str, Any]:
        message = dict(response.message)
        message["role"] = "assistant"
        message["finish_reason"] = response.finish_reason
        if response.reasoning and not message.get("reasoning"):
            message["reasoning"] = response.reasoning
        return message

    def _request_messages(self, extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
        messages = [{"role": "system", "content": self.system_prompt or ""}]
        for index, message in enumerate(self.messages):
            wire = _wire_message(message)
            if index == self._turn_index and self._ephemeral:
                # Recalled context rides on this turn's user message, at request time only.
                wire["content"] = f"{self._ephemeral}\n\n{wire['content']}"
            messages.append(wire)
        return sanitize_messages(messages + extra)

    def _call_model(self, state: _TurnState, *, with_tools: bool, extra: list[dict[str, Any]],
                    max_tokens: int | None = None) -> CallOutcome:
        compressions = 0
        repaired: set[str] = set()
        route_index = state.route_index
        while True:
            route = self.routes[route_index]
            request = ModelRequest(
                model=route.model,
                messages=self._request_messages(extra),
                tools=offered_schemas(self.tools.schemas(), self.client_tools, self.offer_own_tools) if with_tools else [],
                max_tokens=max_tokens or self.max_tokens,
                temperature=self.temperature,
                stream=self.stream,
                extra_body={k: v for k, v in self.request_options.items()
                            if with_tools or k not in ("tool_choice", "parallel_tool_calls")},
            )  # fmt: skip
            if route.lease is not None and hasattr(route.lease, "renew_if_due"):
                route.lease.renew_if_due()  # a long session keeps its key
            try:
                outcome = self._invoke(route, request)
            except ProviderError as error:
                state.api_calls += 1
                self._log_request(route, f"error:{error.reason}")
                if error.should_repair and error.reason not in repaired:
                    fixed = repair(error.reason, self.messages)
                    if fixed is not None:
                        repaired.add(error.reason)
                        self.messages[:] = fixed
                        self._emit("status", f"the provider refused the request ({error.reason}); repaired it and retrying")
                        continue
                if error.should_compress and compressions < _MAX_COMPRESSIONS and self.engine is not None:
                    compressions += 1
                    limit = error.context_limit or stepped_window(error.reason, self.engine.context_length)
                    if limit and limit < self.engine.context_length:
                        # The provider stated (or the probe tiers suggest) the real window: use it from now on.
                        self.engine.update_model(route.model, limit)
                    self._emit("status", f"context too large ({error.reason}); compressing and retrying")
                    if self.compress():
                        continue
                    raise _TurnFailed(error) from None  # nothing left to shrink: retrying cannot help
                if error.should_fallback and self._next_fallback(state, str(error)):
                    route_index = state.route_index
                    continue
                raise _TurnFailed(error) from None
            state.api_calls += 1
            self._account(outcome.response)
            self._log_request(route, "incomplete" if outcome.partial else "ok", outcome.response)
            return outcome

    def _invoke(self, route: ModelRoute, request: ModelRequest) -> CallOutcome:
        def on_delta(delta: StreamDelta) -> None:
            if delta.text:
                self._emit("text", delta.text)
            if delta.reasoning:
                self._emit("reasoning", delta.reasoning)

        return call_with_stream(route, request, on_delta=on_delta, is_interrupted=self._interrupt.is_set)

    def _next_fallback(self, state: _TurnState, why: str) -> bool:
        current = state.route_index
        if current + 1 >= len(self.routes):
            return False
        state.route_index = current + 1
        self._emit("status", f"{self.routes[current].label} failed ({why}); falling back to {self.routes[current + 1].label}")
        return True

    def _account(self, response: ModelResponse) -> None:
        if self.engine is not None:
            self.engine.update_from_response(response.usage)
        if self.store is not None and self.session_id is not None:
            self.store.record_usage(self.session_id, response.usage, response.cost)

    def _log_request(self, route: ModelRoute, outcome: str, response: ModelResponse | None = None) -> None:
        home = self.tool_context.home
        if home is not None and hasattr(home, "logs_dir"):
            record_request(home.logs_dir / "requests.jsonl", session_id=self.session_id, provider=route.client.name,
                           model=route.model, outcome=outcome, usage=response.usage if response else None,
                           cost=response.cost if response else None)

    def _maybe_compress(self, *, preflight: bool) -> None:
        """Compress when the engine says so: a rough estimate before the first call, reported tokens after."""
        engine = self.engine
        if engine is None:
            return
        if engine.should_compress():
            self.compress()
        elif preflight:
            for _ in range(_MAX_COMPRESSIONS):  # a resumed session on a smaller model may need several
                if not engine.should_compress_preflight(self._request_messages([]), self.tools.schemas()):
                    return
                if not self.compress():
                    return

    def compress(self, focus_topic: str | None = None, *, manual: bool = False, review: bool = False) -> bool:
        """Compress through the context engine and continue in a child session (see :mod:`.compaction`).

        The old session ends with ``compression`` and keeps its messages; the
        child holds the compressed history and a rebuilt system prompt.
        Returns False, with the reason in ``compress_note``, when nothing changed.
        """
        if self.engine is None:
            raise _TurnFailed("no context engine is active, so the conversation cannot be compressed")
        from .compaction import compress_agent

        return compress_agent(self, focus_topic, manual=manual, review=review)

    # --- tools --------------------------------------------------------------------

    def _run_tools(self, calls: list[dict[str, Any]]) -> None:
        parsed = [ToolCall.from_message(c) for c in calls]
        results: list[ToolResult] = []
        for batch in plan_batches(parsed, self.tools, self.cwd):
            if self._interrupt.is_set():
                break
            for call in batch:
                self._emit("tool_start", call.name, call_id=call.id, arguments=call.arguments)
            done = self.tools.run(batch, self.tool_context)
            redact_tool_results(done, self.tool_context.config)  # before it is shown, stored, saved or sent
            for result in done:
                self._emit("tool_end", result.name, call_id=result.call_id, error=result.is_error,
                           duration=result.duration, output=result.content)  # fmt: skip
            results.extend(done)
        ran = {r.call_id for r in results}
        skipped = [ToolResult(c.id, c.name, SKIPPED_RESULT, is_error=True) for c in parsed if c.id not in ran]
        if self.result_budget is not None:
            self.result_budget.apply(results, self.tools)
        self._append(*(r.as_message() for r in results + skipped))
