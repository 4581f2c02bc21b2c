"""The memory-provider contract: what a ``hermes.memory_providers`` driver implements.

The builtin provider (MEMORY.md / USER.md) is always active; ``memory.provider``
adds at most one external provider. The kernel's memory manager calls the
plain methods (``prefetch``, ``sync_turn``, tools, ...) and registers each
provider with the plugin host, so the ``@hookimpl`` lifecycle methods below
receive the kernel hooks: override one to listen.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from .hookspecs import hookimpl

__all__ = ["AGENT_CONTEXTS", "MemoryProvider"]

#: What kind of agent a provider serves: non-primary agents should skip writes.
AGENT_CONTEXTS = ("primary", "subagent", "review")


class MemoryProvider(ABC):
    """A memory backend.

    :meth:`initialize` is always given ``hermes_home`` (a
    :class:`~hermes.kernel.HermesHome`), ``platform`` (``cli``, ...),
    ``agent_context`` (one of :data:`AGENT_CONTEXTS`), ``config`` and
    ``notify_memory_write(action, target, content)`` (fires the
    ``on_memory_write`` hook for a write the provider committed).
    """

    #: The provider's name (its entry-point name).
    name: str = ""
    #: Config keys the provider reads (``ConfigKey`` entries); ``hermes config set`` checks them.
    config_keys: ClassVar[Sequence[Any]] = ()

    @abstractmethod
    def is_available(self) -> bool:
        """Configured and importable; never a network call."""

    @abstractmethod
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Prepare for ``session_id`` (see the class docstring for ``kwargs``)."""

    def system_prompt_block(self) -> str | None:
        """Text for the system prompt, frozen at session start; None for nothing."""
        return None

    def prefetch(self, query: str, session_id: str) -> str | None:
        """Recall for this turn's user message; the kernel fences it. None for nothing."""
        return None

    def queue_prefetch(self, query: str, session_id: str) -> None:
        """Start recalling for the next turn in the background (optional)."""

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        session_id: str,
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        """Store a completed turn (runs on the memory worker, never on the user's time).

        ``messages`` is the conversation as of the end of that turn (tool calls
        and results included); an override may leave the parameter out.
        """

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """Tools the provider offers the model (OpenAI Chat schemas)."""
        return []

    def handle_tool_call(self, name: str, args: dict[str, Any]) -> str:
        """Run one of the provider's tools and return its result text."""
        raise NotImplementedError(f"memory provider {self.name!r} has no tool {name!r}")

    def shutdown(self) -> None:
        """Flush and release resources."""

    def describe(self, hermes_home: Any, config: Any) -> dict[str, Any]:
        """What ``hermes memory status`` shows: a ``summary`` line and any details; read-only."""
        return {}

    def get_config_schema(self) -> list[dict[str, Any]]:
        """Settings for setup: ``[{"key", "description", "secret", "default"}, ...]``."""
        return []

    def save_config(self, values: dict[str, Any]) -> None:
        """Persist settings gathered by setup."""

    # --- kernel hooks (override to listen) ------------------------------------------

    @hookimpl
    def on_turn_start(self, session_id: str, turn: int, message: str) -> None:
        """Before the first model call of a user turn."""

    @hookimpl
    def on_pre_compress(self, session_id: str, messages: list[dict[str, Any]]) -> str | None:
        """Before compression; return facts the summary must keep."""
        return None

    @hookimpl
    def on_session_switch(self, old_session_id: str | None, new_session_id: str, reason: str) -> None:
        """The active session changed (compression, branch, resume, new, reset)."""

    @hookimpl
    def on_session_end(self, session_id: str, messages: list[dict[str, Any]], reason: str) -> None:
        """The session really ended."""

    @hookimpl
    def on_memory_write(self, action: str, target: str, content: str) -> None:
        """The builtin memory committed a write; mirror it if useful."""

    @hookimpl
    def on_delegation(self, parent_session_id: str, task: str, result: dict[str, Any]) -> None:
        """A sub-agent finished a delegated task."""
