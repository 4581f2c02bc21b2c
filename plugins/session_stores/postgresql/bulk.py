"""The PostgreSQL store's removal and bulk copy, a mixin built only on its ``_read`` and ``_write`` transactions."""


from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hermes.kernel.store import (
    ImportResult,
    SessionNotFoundError,
)
from hermes.kernel.store.importing import import_batch
from hermes.kernel.store.pruning import prune_in_batches
from hermes.kernel.store.rows import SESSION_COLUMNS

from .importing import PostgresImportTarget
from .rows import _INSERT_COLS, _INSERT_VALUES, _row, _text
from .connection import _delete

__all__ = ["RemovalAndCopy"]


class RemovalAndCopy:
    """Deleting, pruning and bulk copying over the host store's transactions."""

    _read: Callable[..., Any]
    _write: Callable[..., Any]

    # -- removal and bulk copy -----------------------------------------------------

    def delete_session(self, session_id: str) -> None:
        def delete(conn: Any) -> None:
            if not _delete(conn, session_id):
                raise SessionNotFoundError(session_id)

        self._write(delete)

    def prune(self, older_than_days: float, *, now: float | None = None) -> list[str]:
        return prune_in_batches(self._write, _delete, older_than_days, now=now, mark="%s")

    def session_ids(self, *, after: str | None = None, limit: int = 500) -> list[str]:
        rows = self._read(
            lambda c: c.execute("SELECT id FROM sessions WHERE id > %s ORDER BY id LIMIT %s", (after or "", limit)).fetchall()
        )
        return [r[0] for r in rows]

    def counts(self) -> dict[str, int]:
        def read(conn: Any) -> dict[str, int]:
            sessions = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
            messages = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
            return {"sessions": sessions, "messages": messages}

        return self._read(read)

    def import_sessions(self, batch: Sequence[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]]) -> ImportResult:
        now = time.time()
        prepared = [(dict(session), [_row(session["id"], m, now) for m in messages]) for session, messages in batch]
        insert = f"INSERT INTO messages (seq, {_INSERT_COLS}) VALUES ({_INSERT_VALUES})"
        # A title another host took meanwhile fails the unique index: the retry renumbers it.
        return self._write(
            lambda conn: import_batch(PostgresImportTarget(conn, insert), prepared, SESSION_COLUMNS, _text), retry_unique=True
        )
