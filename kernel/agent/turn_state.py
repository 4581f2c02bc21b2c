"""What one turn of the loop carries besides the agent: its running state, and the small pure helpers
the loop applies to messages (wire form, carry-over text, calls the client runs)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..providers.errors import ProviderError
from ..tools import CARRY_OVER_KEY
from .history import defuse_fences, fence_carry_over

if TYPE_CHECKING:
    from .calling import ModelRoute
    from .loop import Agent

__all__ = [
    "TurnFailed", "TurnState", "carry_over_text", "offered_schemas", "request_tools", "split_client_calls", "wire_message",
]  # fmt: skip


class TurnFailed(Exception):
    """A turn that cannot go on: the provider's classified error, or the reason."""

    def __init__(self, error: ProviderError | str) -> None:
        super().__init__(str(error))
        self.error = error


def split_client_calls(calls: list[dict[str, Any]], client_tools: list[dict[str, Any]]) -> tuple[list, list]:
    """``(own, external)``: the calls the agent runs, and those of tools its caller runs (an API client's)."""
    theirs = {t["function"]["name"] for t in client_tools}
    external = [c for c in calls if (c.get("function") or {}).get("name") in theirs]
    return [c for c in calls if c not in external], external


def offered_schemas(own: list[dict[str, Any]], client_tools: list[dict[str, Any]], offer_own: bool) -> list[dict[str, Any]]:
    """The tools a request offers: the agent's (unless the client's take the name, or none asked) then the client's."""
    theirs = {t["function"]["name"] for t in client_tools}
    mine = [s for s in own if s["function"]["name"] not in theirs] if offer_own else []
    return mine + list(client_tools)


def request_tools(agent: Agent, route: ModelRoute | None = None, *, record: bool = False) -> list[dict[str, Any]]:
    """The tool schemas a request of ``agent`` on ``route`` carries (deferred and capped, see tool_search).

    ``record`` counts it as a sent request; without it this is an estimate (compaction's).
    """
    route = route or agent.primary
    limit = getattr(route.client, "max_tools", None)
    limit = limit if isinstance(limit, int) and limit > 0 else None
    if limit is not None and agent.client_tools:
        limit = max(1, limit - len(agent.client_tools))  # the caller's tools count against the same limit
    own = agent.tools.offer(
        agent.tool_context.config, context_length=getattr(agent.engine, "context_length", None), max_tools=limit,
        history=agent.messages, record=record, provider=route.label,
    ) if agent.offer_own_tools else []  # fmt: skip
    return offered_schemas(own, agent.client_tools, agent.offer_own_tools)


@dataclass
class TurnState:
    """How the turn is going: what the loop and the call's recovery record as they go."""

    api_calls: int = 0
    final: str = ""
    failed: bool = False
    interrupted: bool = False
    partial: bool = False
    empty: bool = False
    error: str | None = None
    route_index: int = 0
    budget_exhausted: bool = False
    incomplete: bool = False
    client_calls: list[dict[str, Any]] = field(default_factory=list)

    def report(self, messages: list[dict[str, Any]], session_id: str | None) -> dict[str, Any]:
        """The result :meth:`~.loop.Agent.run_conversation` returns for this turn."""
        return {
            "final_response": self.final,
            "messages": list(messages),
            "api_calls": self.api_calls,
            "completed": not (self.failed or self.interrupted or self.empty or self.incomplete),
            "incomplete": self.incomplete,
            "interrupted": self.interrupted,
            "partial": self.partial,
            "failed": self.failed,
            "error": self.error,
            "empty": self.empty,
            "budget_exhausted": self.budget_exhausted,
            "session_id": session_id,  # a compression during the turn moved it to a child
            "client_tool_calls": self.client_calls,
        }


def carry_over_text(state: dict[str, Any], engine_note: str | None = None) -> str | None:
    """What survives a compaction into the rebuilt prompt: the engine's note and tools' notes (the todo list)."""
    notes = state.get(CARRY_OVER_KEY) or {}
    parts = [engine_note.strip()] if engine_note and engine_note.strip() else []
    parts += [f"## {heading}\n{text.strip()}" for heading, text in notes.items() if text and text.strip()]
    return fence_carry_over("\n\n".join(parts))


_WIRE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "tool_name", "reasoning")


def wire_message(message: dict[str, Any]) -> dict[str, Any]:
    """A stored message as providers take it: bookkeeping fields dropped, imitated fences defused."""
    wire = {k: message[k] for k in _WIRE_KEYS if message.get(k) is not None or k == "content"}
    if wire["role"] in ("user", "tool"):
        wire["content"] = defuse_fences(wire["content"])
    return wire
