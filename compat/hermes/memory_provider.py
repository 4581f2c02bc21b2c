"""Hermes Agent's memory-provider contract, for providers written for Hermes to subclass.

Written for hermes-kernel from the contract Hermes documents; a provider folder
imports it as ``agent.memory_provider.MemoryProvider`` (a stand-in installed by
:mod:`hermes.compat.hermes.standins` while the provider loads and runs).
:class:`~hermes.compat.hermes.adapter.HermesProviderAdapter` translates every
call between this contract and :class:`hermes.kernel.MemoryProvider`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

__all__ = ["AGENT_CONTEXTS", "MemoryProvider"]

#: Hermes's agent contexts; only ``primary`` should write.
AGENT_CONTEXTS = ("primary", "subagent", "cron", "flush")


class MemoryProvider(ABC):
    """A Hermes-format memory backend (every method but the abstract ones is optional)."""

    @property
    @abstractmethod
    def name(self) -> str:
        """Short identifier (``holographic``, ``honcho``, ...)."""

    @abstractmethod
    def is_available(self) -> bool:
        """Configured and importable; no network."""

    @abstractmethod
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Start for ``session_id``: ``hermes_home`` (a path string), ``platform``, ``agent_context``, ..."""

    @abstractmethod
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """Tool schemas ``{"name", "description", "parameters"}``; ``[]`` for none."""

    def system_prompt_block(self) -> str:
        """Static text for the system prompt; ``""`` for none."""
        return ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Recall for this turn's message; ``""`` for nothing."""
        return ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Start recalling for the next turn."""

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        """Store a completed turn; ``messages`` is the conversation as of that turn."""

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run one of this provider's tools; return a JSON string."""
        raise NotImplementedError(f"memory provider {self.name} has no tool {tool_name}")

    def shutdown(self) -> None:
        """Flush and close."""

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """A user turn starts (``kwargs`` may hold ``platform``, ``model``, ...)."""

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """The session really ended; ``messages`` is the whole conversation."""

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        """The agent moved to ``new_session_id`` (resume, branch, compression, or a reset)."""

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Before compression: text the summary should keep, or ``""``."""
        return ""

    def on_delegation(self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any) -> None:
        """A sub-agent finished ``task`` with ``result`` (its final answer)."""

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        """The built-in memory wrote an entry (``add``, ``replace``, ``remove``)."""

    def get_config_schema(self) -> list[dict[str, Any]]:
        """Setup fields: ``key``, ``description``, ``secret``, ``required``, ``default``, ``choices``, ``url``, ``env_var``."""
        return []

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        """Persist the non-secret setup values (secrets went to ``.env``)."""

    def backup_paths(self) -> list[str]:
        """State kept outside the home folder (absolute paths)."""
        return []
