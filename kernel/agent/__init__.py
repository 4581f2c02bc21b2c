"""The agent loop: model calls, tool calls, recovery, interrupts, persistence."""

from .calling import ModelRoute
from .events import AgentEvent
from .history import fence_memory_context, repair_history
from .loop import EMPTY_ANSWER, Agent

__all__ = ["EMPTY_ANSWER", "Agent", "AgentEvent", "ModelRoute", "fence_memory_context", "repair_history"]
