"""Following ``parent_session_id`` links: roots, ancestry and the live tip.

A conversation compressed many times is a chain of sessions; each link is a
child whose parent ended with ``compression``. Branches are children of a
parent that ended with ``branched``. Cycles cannot be created through the
store's API, but the walks are bounded anyway so a hand-edited file cannot
hang a search.
"""

from __future__ import annotations

import sqlite3

__all__ = ["MAX_DEPTH", "ancestry", "compression_ancestry", "compression_tip", "lineage_root"]

MAX_DEPTH = 10_000

_ANCESTRY_SQL = """
WITH RECURSIVE up(id, parent_session_id, end_reason, depth) AS (
    SELECT id, parent_session_id, end_reason, 0 FROM sessions WHERE id = ?
    UNION ALL
    SELECT s.id, s.parent_session_id, s.end_reason, up.depth + 1
    FROM sessions s JOIN up ON s.id = up.parent_session_id
    WHERE up.depth < ?
)
SELECT id, end_reason FROM up ORDER BY depth
"""


def ancestry(conn: sqlite3.Connection, session_id: str) -> list[tuple[str, str | None]]:
    """``(id, end_reason)`` from ``session_id`` up to its root; empty when it does not exist."""
    return [(row[0], row[1]) for row in conn.execute(_ANCESTRY_SQL, (session_id, MAX_DEPTH))]


def lineage_root(conn: sqlite3.Connection, session_id: str) -> str | None:
    """The first session of the lineage that ``session_id`` belongs to."""
    chain = ancestry(conn, session_id)
    return chain[-1][0] if chain else None


def compression_ancestry(conn: sqlite3.Connection, session_id: str) -> list[str]:
    """``session_id`` and the sessions it continues through compression, oldest first."""
    chain = ancestry(conn, session_id)
    ids = [chain[0][0]] if chain else []
    for link, end_reason in chain[1:]:
        if end_reason != "compression":
            break
        ids.append(link)
    return list(reversed(ids))


def compression_tip(conn: sqlite3.Connection, session_id: str) -> str:
    """The newest session continuing ``session_id`` through compression (itself if none)."""
    current = session_id
    for _ in range(MAX_DEPTH):
        row = conn.execute(
            "SELECT c.id FROM sessions p JOIN sessions c ON c.parent_session_id = p.id "
            "WHERE p.id = ? AND p.end_reason = 'compression' ORDER BY c.started_at DESC, c.id DESC LIMIT 1",
            (current,),
        ).fetchone()
        if row is None:
            return current
        current = row[0]
    return current
