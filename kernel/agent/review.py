"""Background reviews: a quiet fork of the agent that maintains memory or skills.

One mechanism serves both: after a user turn, each :class:`ReviewSchedule`
decides whether its review is due; a due review runs in a daemon thread as a
fresh :class:`Agent` that sees a copy of the conversation plus the review
prompt, may use only the review's tools, has a small iteration budget,
persists nothing and fires no hooks. It never blocks the user; when it
changed something, one status line says so.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..host import PluginHost
from ..tool_registry import ToolCall, ToolRegistry
from .events import emit

if TYPE_CHECKING:
    from .loop import Agent

__all__ = ["ReviewSchedule", "run_review", "every_n_turns", "after_tool_iterations"]

log = logging.getLogger(__name__)


@dataclass
class ReviewSchedule:
    """When a review is due, what it is told, and what it may use.

    ``due(agent, turn_result)`` is asked after every completed user turn;
    ``is_change(call)`` tells which successful tool calls changed something.
    """

    name: str
    prompt: str
    tools: Callable[[], ToolRegistry]
    due: Callable[[Agent, dict[str, Any]], bool]
    is_change: Callable[[ToolCall], bool]
    max_iterations: int = 8
    threads: list[threading.Thread] = field(default_factory=list)

    def maybe_start(self, agent: Agent, result: dict[str, Any]) -> threading.Thread | None:
        if not result.get("completed") or not self.due(agent, result):
            return None
        thread = threading.Thread(target=self._run, args=(agent,), name=f"hermes-review-{self.name}", daemon=True)
        self.threads.append(thread)
        thread.start()
        return thread

    def _run(self, agent: Agent) -> None:
        try:
            changes = run_review(agent, self)
        except Exception:  # a review must never disturb the conversation
            log.warning("%s review failed", self.name, exc_info=True)
            return
        if changes:
            emit(agent.on_event, "status", f"{self.name} review: {len(changes)} change(s) ({', '.join(changes)})")

    def wait(self, timeout: float) -> None:
        """Let running reviews finish (one-shot mode, before the process exits)."""
        for thread in self.threads:
            thread.join(timeout)


def run_review(parent: Agent, schedule: ReviewSchedule) -> list[str]:
    """Run one review synchronously; the names of the tools that changed something."""
    from .loop import Agent

    changes: list[str] = []
    calls: dict[str, ToolCall] = {}

    def watch(event: Any) -> None:
        if event.kind == "tool_start":
            calls[event.data["call_id"]] = ToolCall(event.data["call_id"], event.text, event.data.get("arguments", ""))
        elif event.kind == "tool_end" and not event.data.get("error"):
            call = calls.get(event.data["call_id"])
            if call is not None and schedule.is_change(call):
                changes.append(call.name)

    reviewer = Agent(
        **parent.fork_settings(),
        routes=parent.routes,
        tools=schedule.tools(),
        host=PluginHost(load_plugins=""),  # quiet: no listeners, no hooks
        max_iterations=schedule.max_iterations,
        source="review",
        on_event=watch,
    )
    reviewer.system_prompt = parent.system_prompt  # the same frozen prefix keeps the provider cache warm
    reviewer.session_id = f"{parent.session_id}-review-{schedule.name}"
    reviewer.tool_context.session_id = parent.session_id
    copied = [dict(m) for m in parent.messages]
    reviewer.transcript.reset(copied, persisted=len(copied))  # the parent's messages are never stored again
    reviewer.run_conversation(schedule.prompt)
    return changes


def every_n_turns(interval: int) -> Callable[[Agent, dict[str, Any]], bool]:
    """Due after every ``interval``-th user turn of the agent."""

    def due(agent: Agent, result: dict[str, Any]) -> bool:
        return interval > 0 and agent.turn > 0 and agent.turn % interval == 0

    return due


def after_tool_iterations(interval: int, maintenance_tools: frozenset[str]) -> Callable[[Agent, dict[str, Any]], bool]:
    """Due once ``interval`` tool-using model steps passed without a call to ``maintenance_tools``."""
    counted = {"steps": 0, "seen": 0}

    def due(agent: Agent, result: dict[str, Any]) -> bool:
        messages = agent.messages
        start = min(counted["seen"], len(messages))
        counted["seen"] = len(messages)
        for message in messages[start:]:
            calls = message.get("tool_calls") or []
            if message.get("role") != "assistant" or not calls:
                continue
            if any((c.get("function") or {}).get("name") in maintenance_tools for c in calls):
                counted["steps"] = 0
            else:
                counted["steps"] += 1
        if interval > 0 and counted["steps"] >= interval:
            counted["steps"] = 0
            return True
        return False

    return due
