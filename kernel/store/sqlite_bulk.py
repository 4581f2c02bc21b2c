"""The SQLite store's removal and bulk copy: deleting and pruning sessions, and whole-session imports.

A mixin of :class:`~.session_store.SQLiteSessionStore`, built only on its
``_read`` and ``_write`` transactions, so the store module keeps to opening,
sessions, messages, lineage and search.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from .contract import ImportResult
from .errors import SessionNotFoundError
from .importing import SQLiteImportTarget, import_batch
from .pruning import prune_in_batches
from .rows import _INSERT_MESSAGE, SESSION_COLUMNS, _message_row

__all__ = ["RemovalAndCopy"]

T = TypeVar("T")


class RemovalAndCopy:
    """Deleting, pruning and bulk copying over the host store's transactions."""

    _read: Callable[..., Any]
    _write: Callable[..., Any]

    # -- removal and export ------------------------------------------------------

    @staticmethod
    def _delete(conn: sqlite3.Connection, session_id: str) -> bool:
        parent = conn.execute("SELECT parent_session_id FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if parent is None:
            return False
        # Children keep a connected lineage: they hang from the deleted session's parent.
        conn.execute("UPDATE sessions SET parent_session_id = ? WHERE parent_session_id = ?", (parent[0], session_id))
        conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
        conn.execute("DELETE FROM compactions WHERE session_id = ?", (session_id,))
        conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
        return True

    def delete_session(self, session_id: str) -> None:
        """Delete a session and its messages (its children re-link to its parent)."""

        def delete(conn: sqlite3.Connection) -> None:
            if not self._delete(conn, session_id):
                raise SessionNotFoundError(session_id)

        self._write(delete)

    def prune(self, older_than_days: float, *, now: float | None = None) -> list[str]:
        """Delete ended sessions idle for more than ``older_than_days`` (see :mod:`.pruning`); returns their ids."""
        return prune_in_batches(self._write, self._delete, older_than_days, now=now)

    # -- bulk copy -----------------------------------------------------------------

    def session_ids(self, *, after: str | None = None, limit: int = 500) -> list[str]:
        rows = self._read(
            lambda c: c.execute(
                "SELECT id FROM sessions WHERE id > ? ORDER BY id LIMIT ?", (after or "", limit)
            ).fetchall()
        )
        return [r[0] for r in rows]

    def counts(self) -> dict[str, int]:
        def read(conn: sqlite3.Connection) -> dict[str, int]:
            sessions = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
            messages = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
            return {"sessions": sessions, "messages": messages}

        return self._read(read)

    def import_sessions(
        self, batch: Sequence[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]]
    ) -> ImportResult:
        """Copy whole sessions in one transaction (see :meth:`SessionStore.import_sessions`, :mod:`.importing`)."""
        now = time.time()
        prepared = [(dict(session), [_message_row(session["id"], m, now) for m in messages]) for session, messages in batch]
        # The result is built inside the transaction: a busy retry starts it afresh.
        return self._write(
            lambda conn: import_batch(SQLiteImportTarget(conn, SESSION_COLUMNS, _INSERT_MESSAGE), prepared, SESSION_COLUMNS)
        )
