"""The conversation as the agent holds it: its messages, how many the store holds, and the wire view.

Every step is flushed as it completes, so a killed process loses nothing
that finished. A turn's recalled memory rides on that turn's user message at
request time only: it is in the wire view, never in ``messages`` or the store.
"""

from __future__ import annotations

from typing import Any

from .repairs import sanitize_messages
from .turn_state import wire_message

__all__ = ["Transcript"]


class Transcript:
    """The messages of the current session and what of them is stored (``persisted``).

    :param store: a SessionStore, or None for an unpersisted agent.
    """

    def __init__(self, store: Any = None) -> None:
        self.store = store
        self.messages: list[dict[str, Any]] = []
        self.persisted = 0  # messages[:persisted] are in the store
        self.turn_index = -1  # this turn's user message, which carries the recalled context
        self.recalled = ""  # this turn's fenced recall, sent but never stored

    def reset(self, messages: list[dict[str, Any]], *, persisted: int) -> None:
        """Hold ``messages`` from now on, the first ``persisted`` of them already stored."""
        self.messages, self.persisted = messages, persisted

    def flush(self, session_id: str | None) -> None:
        """Store the messages not stored yet (nothing without a store, or before a session exists)."""
        if self.store is None or session_id is None:
            return
        pending = self.messages[self.persisted :]
        if pending:
            self.store.append_messages(session_id, pending)
            self.persisted = len(self.messages)

    def append(self, session_id: str | None, *messages: dict[str, Any]) -> None:
        self.messages.extend(messages)
        self.flush(session_id)

    def start_turn(self, session_id: str | None, message: str, recalled: str) -> None:
        """Append the user's ``message``; ``recalled`` rides on it in every request of the turn."""
        self.recalled = recalled
        self.turn_index = len(self.messages)
        self.append(session_id, {"role": "user", "content": message})

    def follow_last_turn(self) -> None:
        """After the history was replaced (a compaction), the recall rides on its last user message."""
        self.turn_index = max((i for i, m in enumerate(self.messages) if m.get("role") == "user"), default=-1)

    def request_messages(self, system_prompt: str | None, extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """What a request sends: the system prompt, the history in wire form with the recall, then ``extra``."""
        messages = [{"role": "system", "content": system_prompt or ""}]
        for index, message in enumerate(self.messages):
            wire = wire_message(message)
            if index == self.turn_index and self.recalled:
                wire["content"] = f"{self.recalled}\n\n{wire['content']}"
            messages.append(wire)
        return sanitize_messages(messages + extra)
