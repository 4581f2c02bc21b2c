"""Loading a stored session to continue it, as its only writer.

A chat's agent holds a :class:`SessionWriter`: a writer lease on the session it appends to
(:meth:`SessionStore.claim_writer`), moved along when the agent starts, resumes, branches or
compresses into another session, and released when the agent closes. :func:`load_for_writing`
claims a session *before* its history is repaired or anything is appended to it. When another
process holds it (a second REPL on the same session), nothing is written to it: the agent warns
in one line and continues in a branch holding a copy of the history so far, so the two chats
never interleave their turns in one session.

Agents without leases (``hermes serve``, which serialises turns per session itself; sub-agents;
tests) get a writer that claims nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .history import repair_history

__all__ = ["LoadedSession", "SessionWriter", "load_for_writing"]


class SessionWriter:
    """The writer lease of an agent's current session; ``store=None`` claims nothing."""

    def __init__(self, store: Any = None) -> None:
        self.store = store
        self.claim: Any = None  # the granted WriterClaim of the current session
        self.refused: Any = None  # the last refused claim: its ``holder`` names who writes that session

    def hold(self, session_id: str) -> bool:
        """Claim ``session_id`` (and let go of the previous session); False when another process writes it."""
        if self.store is None or (self.claim is not None and self.claim.session_id == session_id):
            return True
        claim = self.store.claim_writer(session_id)
        if not claim.granted:
            self.refused = claim
            return False
        self.release()
        self.claim = claim
        return True

    def release(self) -> None:
        if self.claim is not None:
            self.claim.release()
            self.claim = None


@dataclass
class LoadedSession:
    """A session ready to continue: its row, its repaired history and how much of it is stored."""

    session: dict[str, Any]
    messages: list[dict[str, Any]]
    persisted: int  # messages[:persisted] are in the store; the rest is flushed by the agent


def load_for_writing(store: Any, session_id: str, writer: SessionWriter, warn: Callable[[str], None]) -> LoadedSession:
    """``session_id`` (its compression tip) claimed for writing, else a new branch of it, repaired."""
    conversation = store.resume(session_id)
    resolved = conversation.session["id"]
    if not writer.hold(resolved):
        holder = getattr(writer.refused, "holder", None) or "another process"
        child = store.branch(resolved)
        writer.hold(child)  # a new id: nobody else can hold it
        warn(f"session {resolved} is open for writing in {holder}; continuing in a new branch {child}, "
             "so the two chats never interleave in one session")  # fmt: skip
        conversation = store.resume(child)
    stored = conversation.messages
    messages = repair_history(stored)
    # Results the repair appended (a crash between a model answer and its tools) are
    # persisted by the agent's flush; a repair inside the history stays in memory.
    appended_only = messages[: len(stored)] == stored
    return LoadedSession(conversation.session, messages, len(stored) if appended_only else len(messages))
