"""Bulk import of whole sessions (``SessionStore.import_sessions``): the rules, and SQLite's half.

The rules are the same on every backend, so they live once in
:func:`import_batch`; a backend supplies its SQL through :class:`ImportTarget`
(bound to its open transaction). For each session:

* already present with as many messages: skipped (this is what makes a copy idempotent);
* present with a different number of messages: a conflict, left as it is;
* absent, but its title is used by another session: imported with the next
  ``#N`` title of that lineage (:func:`.titles.next_title_among`), and reported
  in :attr:`ImportResult.renamed`. Running the import again skips it by id, so a
  title is renumbered once, never twice.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from ..errors import HermesError
from .contract import ImportResult
from .titles import next_numbered_title

__all__ = ["COUNTER_COLUMNS", "ImportTarget", "SQLiteImportTarget", "import_batch", "import_values"]

#: Session columns that are counters: a source row without them (or with NULL) imports 0.
COUNTER_COLUMNS = (
    "tool_call_count", "api_call_count", "compression_count", "input_tokens", "output_tokens",
    "cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "estimated_cost_usd",
)  # fmt: skip
# How many times a renumbered title may turn out taken too (only when a long base was cut to
# fit the suffix: the cut base is a lineage of its own) before the import gives up.
_RENUMBER_TRIES = 10


class ImportTarget(Protocol):
    """One backend's statements for :func:`import_batch`, inside one open write transaction."""

    def message_count(self, session_id: str) -> int | None:
        """How many messages ``session_id`` has in the target; None when it is not there."""

    def title_taken(self, title: str) -> bool:
        """Whether any session in the target has ``title``."""

    def next_numbered_title(self, title: str) -> str:
        """The next free ``<base> #N`` of ``title``'s lineage in the target."""

    def insert(self, values: Mapping[str, Any], rows: Sequence[tuple[Any, ...]]) -> None:
        """Insert one session row (``values``, keyed by ``SESSION_COLUMNS``) and its message rows."""


def import_values(
    session: Mapping[str, Any], message_count: int, columns: Sequence[str], convert: Callable[[Any], Any] = lambda v: v
) -> dict[str, Any]:
    """The row to insert for ``session``: every column in ``columns``, counters 0 when unset, the message count it
    really has. ``convert`` adapts each value to the backend (PostgreSQL's text cannot hold NUL)."""
    values = {c: convert(session.get(c)) for c in columns}
    for column in COUNTER_COLUMNS:
        values[column] = values.get(column) or 0
    values["message_count"] = message_count
    return values


def import_batch(
    target: ImportTarget,
    prepared: Sequence[tuple[dict[str, Any], Sequence[tuple[Any, ...]]]],
    columns: Sequence[str],
    convert: Callable[[Any], Any] = lambda v: v,
) -> ImportResult:
    """Apply the import rules (module docstring) to ``(session row, message rows)`` pairs."""
    result = ImportResult([], [], [])
    for session, rows in prepared:
        sid = session["id"]
        have = target.message_count(sid)
        if have is not None:
            (result.skipped if have == len(rows) else result.conflicts).append(sid)
            continue
        values = import_values(session, len(rows), columns, convert)
        title = values.get("title")
        if title is not None and target.title_taken(title):
            values["title"] = _free_title(target, title)
            result.renamed[sid] = values["title"]
        target.insert(values, rows)
        result.imported.append(sid)
    return result


def _free_title(target: ImportTarget, title: str) -> str:
    candidate = title
    for _ in range(_RENUMBER_TRIES):
        candidate = target.next_numbered_title(candidate)
        if not target.title_taken(candidate):
            return candidate
    raise HermesError(f"no free numbered title for {title!r} in the target; rename that session and run it again")


class SQLiteImportTarget:
    """:class:`ImportTarget` on a SQLite connection inside ``BEGIN IMMEDIATE``."""

    def __init__(self, conn: sqlite3.Connection, columns: Sequence[str], insert_message: str) -> None:
        self.conn = conn
        self.columns = tuple(columns)
        self.insert_message = insert_message
        self.insert_session = f"INSERT INTO sessions ({', '.join(columns)}) VALUES ({','.join('?' * len(columns))})"

    def message_count(self, session_id: str) -> int | None:
        if self.conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
            return None
        # The rows themselves, not the message_count column: that is what a copy compares.
        return int(self.conn.execute("SELECT count(*) FROM messages WHERE session_id = ?", (session_id,)).fetchone()[0])

    def title_taken(self, title: str) -> bool:
        return self.conn.execute("SELECT 1 FROM sessions WHERE title = ?", (title,)).fetchone() is not None

    def next_numbered_title(self, title: str) -> str:
        return next_numbered_title(self.conn, title)

    def insert(self, values: Mapping[str, Any], rows: Sequence[tuple[Any, ...]]) -> None:
        self.conn.execute(self.insert_session, [values[c] for c in self.columns])
        self.conn.executemany(self.insert_message, rows)
