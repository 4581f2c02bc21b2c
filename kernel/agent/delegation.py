"""Sub-agents: run delegated tasks in fresh context windows, alone or in parallel.

Each child is a new :class:`Agent` with its own session (``source =
subagent``, ``parent_session_id`` set), none of the parent's history beyond
the context it is given, a restricted tool set and a budget drawn from the
parent's, so a parent and its children together never exceed the parent's
limit. Only a short report comes back.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..host import PluginHost
from ..tool_registry import ToolRegistry
from .calling import ModelRoute
from .events import AgentEvent, emit
from .sessions import ensure_session

if TYPE_CHECKING:
    from .loop import Agent

__all__ = ["BLOCKED_TOOLS", "DelegationTask", "Delegator", "SUBAGENT_PROMPT"]

log = logging.getLogger(__name__)

#: Never offered to a child: recursion (beyond the depth limit), asking the user,
#: writing memory, and talking to the user directly.
BLOCKED_TOOLS = frozenset({"delegate_task", "clarify", "memory", "send_message"})

SUBAGENT_PROMPT = (
    "You are a sub-agent working on one task delegated by another agent. You cannot ask the user "
    "anything; work with what you are given. When done, answer with a short report for the agent "
    "that delegated: what you found or did, and anything it must know. Be concise."
)


@dataclass(frozen=True)
class DelegationTask:
    """One task for a sub-agent."""

    goal: str
    context: str | None = None
    toolsets: tuple[str, ...] | None = None

    def prompt(self) -> str:
        if not self.context:
            return self.goal
        return f"{self.goal}\n\nContext from the delegating agent:\n{self.context}"


class Delegator:
    """Spawns children for a parent agent (the ``delegate_task`` tool's service).

    :param routes_for_child: a fresh model route per child (its own credential lease).
    :param tools_for: the child's tools for the requested toolsets (None: the parent's).
    """

    def __init__(
        self,
        parent: Agent,
        *,
        routes_for_child: Callable[[], list[ModelRoute]],
        tools_for: Callable[[Sequence[str] | None], ToolRegistry],
        max_concurrent: int = 3,
        max_iterations: int = 50,
        timeout: float = 600.0,
        depth: int = 0,
        max_depth: int = 1,
    ) -> None:
        self.parent = parent
        self.routes_for_child = routes_for_child
        self.tools_for = tools_for
        self.max_concurrent = max(1, max_concurrent)
        self.max_iterations = max_iterations
        self.timeout = timeout
        self.depth = depth
        self.max_depth = max_depth

    def _child_tools(self, toolsets: Sequence[str] | None) -> ToolRegistry:
        tools = self.tools_for(toolsets)
        can_delegate = self.depth + 1 < self.max_depth
        return ToolRegistry(
            t for t in tools if t.name not in BLOCKED_TOOLS or (t.name == "delegate_task" and can_delegate)
        )

    def _make_child(self, task: DelegationTask, on_event: Callable[[AgentEvent], None]) -> Agent:
        from .loop import Agent

        parent = self.parent
        child = Agent(
            **parent.fork_settings(),
            routes=self.routes_for_child(),
            tools=self._child_tools(task.toolsets),
            host=PluginHost(load_plugins=""),  # children write no memory and fire no user hooks
            store=parent.store,
            budget=parent.budget.child(self.max_iterations),
            results_dir=parent.result_budget.results_dir if parent.result_budget else None,
            source="subagent",
            engine=_child_engine(parent.engine),  # a long child task compresses instead of overflowing
            parent_session_id=parent.session_id,
            system_message=SUBAGENT_PROMPT,
            on_event=on_event,
        )
        if self.depth + 1 < self.max_depth:
            child.tool_context.services["delegator"] = Delegator(
                child, routes_for_child=self.routes_for_child, tools_for=self.tools_for,
                max_concurrent=self.max_concurrent, max_iterations=self.max_iterations, timeout=self.timeout,
                depth=self.depth + 1, max_depth=self.max_depth,
            )  # fmt: skip
        return child

    def run(self, tasks: Sequence[DelegationTask | Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Run ``tasks`` (in parallel up to the limit); one result per task, in input order.

        A task is a :class:`DelegationTask` or a mapping with ``goal``, ``context``, ``toolsets``.
        """
        tasks = [
            t if isinstance(t, DelegationTask)
            else DelegationTask(str(t["goal"]), t.get("context"), tuple(t["toolsets"]) if t.get("toolsets") else None)
            for t in tasks
        ]  # fmt: skip
        if not tasks:
            return []
        total = len(tasks)
        pool = ThreadPoolExecutor(max_workers=min(self.max_concurrent, total), thread_name_prefix="hermes-child")
        slots: list[dict[str, Any]] = [{} for _ in tasks]
        futures: list[Future[dict[str, Any]]] = []
        for index, task in enumerate(tasks):
            futures.append(pool.submit(self._run_one, index, total, task, slots[index]))
        results = []
        for index, (task, future) in enumerate(zip(tasks, futures)):
            try:
                result = self._await(future, slots[index])
            except TimeoutError:
                child = slots[index].get("agent")
                if child is not None:
                    child.interrupt()  # it stops at its next safe point; siblings carry on
                result = self._entry(task, "failed", f"timed out after {self.timeout:g} s", slots[index])
            except Exception as exc:  # a child that raises fails alone
                log.warning("sub-agent for %r raised %s", task.goal, exc, exc_info=True)
                result = self._entry(task, "failed", f"{type(exc).__name__}: {exc}", slots[index])
            results.append(result)
            emit(self.parent.on_event, "status", f"[{index + 1}/{total}] {result['status']} in {result['duration']:.1f}s: {_short(task.goal)}")
            self.parent.host.call(
                "on_subagent_stop", parent_session_id=self.parent.session_id or "", session_id=result["session_id"] or "",
                task=task.goal, status=result["status"], summary=result["summary"],
            )  # fmt: skip
            self.parent.host.call(
                "on_delegation", parent_session_id=self.parent.session_id or "", task=task.goal, result=result
            )
        pool.shutdown(wait=False, cancel_futures=True)
        return results

    def _await(self, future: Future[dict[str, Any]], slot: dict[str, Any]) -> dict[str, Any]:
        """The child's result, or TimeoutError once it has run longer than ``timeout``.

        The clock starts when the child starts, not while it waits for a free worker.
        """
        while True:
            try:
                return future.result(timeout=0.2)
            except TimeoutError:
                started = slot.get("started")
                if started is not None and time.monotonic() - started > self.timeout:
                    raise

    def _run_one(self, index: int, total: int, task: DelegationTask, slot: dict[str, Any]) -> dict[str, Any]:
        slot["started"] = time.monotonic()
        slot["trace"] = trace = []

        def on_event(event: AgentEvent) -> None:
            if event.kind == "tool_start":
                trace.append(event.text)

        if self.parent.interrupted:
            return self._entry(task, "interrupted", "the parent was interrupted before this task started", slot)
        child = self._make_child(task, on_event)
        slot["agent"] = child
        self.parent.children.add(child)
        outcome: dict[str, Any] = {}
        try:
            # The parent's listeners hear of the child only here and at its stop (run): the child's
            # own host carries none of the parent's plugins, so its calls fire none of their hooks.
            self.parent.host.call("on_subagent_start", parent_session_id=self.parent.session_id or "",
                                  session_id=ensure_session(child), task=task.goal)  # fmt: skip
            outcome = child.run_conversation(task.prompt())
        finally:
            self.parent.children.discard(child)
            # The child's session ends with the child, once, saying how it went.
            reason = "interrupted" if outcome.get("interrupted") else ("subagent_done" if outcome.get("completed") else "failed")
            try:
                child.end_session(reason)
            except Exception as exc:  # an end that cannot be recorded never hides the task's outcome
                log.warning("sub-agent session %s could not be ended: %s", child.session_id, exc)
            child.close()
        if outcome.get("interrupted"):
            status = "interrupted"
        elif outcome.get("failed") or outcome.get("empty"):
            status = "failed"
        elif outcome.get("budget_exhausted"):
            status = "budget_exhausted"
        else:
            status = "completed"
        summary = outcome.get("final_response") or outcome.get("error") or ""
        return self._entry(task, status, summary, slot, session_id=outcome.get("session_id"))

    def _entry(self, task: DelegationTask, status: str, summary: str, slot: dict[str, Any], session_id: str | None = None) -> dict[str, Any]:
        child = slot.get("agent")
        session_id = session_id or (child.session_id if child is not None else None)
        tokens: dict[str, int] = {}
        cost: dict[str, Any] | None = None
        store = self.parent.store
        if store is not None and session_id and store.get_session(session_id) is not None:
            usage = store.usage(session_id)
            tokens = usage.usage.as_dict()
            cost = usage.cost.as_dict() if usage.cost is not None else None
        started = slot.get("started")
        return {
            "goal": task.goal,
            "status": status,
            "summary": summary,
            "tools": list(slot.get("trace") or [])[:50],
            "tokens": tokens,
            "cost": cost,
            "duration": round(time.monotonic() - started, 3) if started else 0.0,
            "session_id": session_id,
        }


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"



def _child_engine(engine: Any) -> Any:
    """A new engine of the parent's kind and settings, with its own state (None without one)."""
    if engine is None:
        return None
    try:
        return type(engine)(
            context_length=engine.context_length, config=engine.config, summarizer=engine.summarizer, model=engine.model
        )
    except Exception:  # a third-party engine with another constructor: the child runs without one
        log.warning("could not give the sub-agent a %s context engine", getattr(engine, "name", "?"), exc_info=True)
        return None
