"""What each compression kept: its handoff note, fidelity score and misses, one row per compression.

The row is keyed by the session the compression created; ``parent_session_id``
is the session it ended. Kept beside the messages so ``hermes sessions
handoff`` and ``sessions show --json`` can say how faithful a compaction was.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from typing import Any

__all__ = ["COMPACTION_FIELDS", "compaction_row", "decode_compaction", "find_compaction", "write_compaction"]

COMPACTION_FIELDS = (
    "session_id", "parent_session_id", "engine", "created_at", "fidelity", "missing", "handoff", "edited", "details",
)  # fmt: skip


def compaction_row(
    session_id: str,
    *,
    parent_session_id: str | None,
    engine: str,
    fidelity: float | None,
    missing: Sequence[str] = (),
    handoff: str | None = None,
    edited: bool = False,
    details: dict[str, Any] | None = None,
    created_at: float | None = None,
) -> tuple[Any, ...]:
    """The values of one record in :data:`COMPACTION_FIELDS` order; every backend stores these.

    ``created_at`` is now unless given (a copy between stores keeps the original time).
    """
    return (
        session_id, parent_session_id, engine, time.time() if created_at is None else float(created_at), fidelity,
        json.dumps(list(missing), ensure_ascii=False), handoff, 1 if edited else 0,
        json.dumps(details or {}, ensure_ascii=False, default=str),
    )  # fmt: skip


def write_compaction(conn: sqlite3.Connection, session_id: str, **record: Any) -> None:
    """Insert (or replace) the record of the compression that created ``session_id``."""
    conn.execute(
        f"INSERT OR REPLACE INTO compactions ({', '.join(COMPACTION_FIELDS)}) VALUES (?,?,?,?,?,?,?,?,?)",
        compaction_row(session_id, **record),
    )


def decode_compaction(row: Sequence[Any]) -> dict[str, Any]:
    """A stored row (in :data:`COMPACTION_FIELDS` order) as the dict ``compaction()`` returns."""
    data = dict(zip(COMPACTION_FIELDS, row))
    data["missing"] = json.loads(data["missing"] or "[]")
    data["details"] = json.loads(data["details"] or "{}")
    data["edited"] = bool(data["edited"])
    return data


def find_compaction(conn: sqlite3.Connection, session_id: str) -> dict[str, Any] | None:
    """The compression that created ``session_id``, else the one that ended it, else None."""
    cols = ", ".join(COMPACTION_FIELDS)
    row = conn.execute(f"SELECT {cols} FROM compactions WHERE session_id = ?", (session_id,)).fetchone()
    if row is None:
        row = conn.execute(
            f"SELECT {cols} FROM compactions WHERE parent_session_id = ? ORDER BY created_at DESC LIMIT 1", (session_id,)
        ).fetchone()
    return None if row is None else decode_compaction(row)
