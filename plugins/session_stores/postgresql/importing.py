"""PostgreSQL's half of ``import_sessions``: the statements behind the kernel's shared import rules.

The rules (skip, conflict, renumber a taken title) are
:func:`hermes.kernel.store.importing.import_batch`; this module only says how
to ask and write them on a psycopg connection inside one transaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes.kernel.store.session_store import SESSION_COLUMNS
from hermes.kernel.store.titles import base_title, escape_like, next_title_among

__all__ = ["PostgresImportTarget", "next_numbered_title"]

_SESSION_COLS = ", ".join(SESSION_COLUMNS)
_INSERT_SESSION = f"INSERT INTO sessions ({_SESSION_COLS}) VALUES ({', '.join(['%s'] * len(SESSION_COLUMNS))})"


def next_numbered_title(conn: Any, title: str) -> str:
    """The next free ``<base> #N`` in the lineage of ``title`` (PostgreSQL's form of
    :func:`hermes.kernel.store.titles.next_numbered_title`; the numbering is the kernel's)."""
    base = base_title(title)
    existing = conn.execute(
        "SELECT title FROM sessions WHERE title = %s OR title LIKE %s ESCAPE '\\'", (base, escape_like(base) + " #%")
    ).fetchall()
    return next_title_among(title, [r[0] for r in existing])


class PostgresImportTarget:
    """:class:`hermes.kernel.store.importing.ImportTarget` on a psycopg connection in a transaction.

    ``insert_message`` inserts ``(seq, *message_row)``; messages are numbered from 1, as appends number them.
    """

    def __init__(self, conn: Any, insert_message: str) -> None:
        self.conn = conn
        self.insert_message = insert_message

    def message_count(self, session_id: str) -> int | None:
        if self.conn.execute("SELECT 1 FROM sessions WHERE id = %s", (session_id,)).fetchone() is None:
            return None
        return int(self.conn.execute("SELECT count(*) FROM messages WHERE session_id = %s", (session_id,)).fetchone()[0])

    def title_taken(self, title: str) -> bool:
        return self.conn.execute("SELECT 1 FROM sessions WHERE title = %s", (title,)).fetchone() is not None

    def next_numbered_title(self, title: str) -> str:
        return next_numbered_title(self.conn, title)

    def insert(self, values: Mapping[str, Any], rows: Sequence[tuple[Any, ...]]) -> None:
        self.conn.execute(_INSERT_SESSION, [values[c] for c in SESSION_COLUMNS])
        if rows:
            with self.conn.cursor() as cur:
                cur.executemany(self.insert_message, [(n, *row) for n, row in enumerate(rows, start=1)])
