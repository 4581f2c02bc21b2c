"""Following ``parent_session_id`` links: roots, ancestry and the live tip.

A conversation compressed many times is a chain of sessions; each link is a
child whose parent ended with ``compression``. Branches are children of a
parent that ended with ``branched``. Cycles cannot be created through the
store's API, but the walks are bounded anyway so a hand-edited file cannot
hang a search.

The walks run on any DB-API connection whose ``execute`` returns a cursor
(``sqlite3``, psycopg): ``mark`` is the driver's parameter marker, so every
backend storing the same ``sessions`` rows walks them with this one SQL.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_DEPTH", "ancestry", "compression_ancestry", "compression_tip", "lineage_root"]

MAX_DEPTH = 10_000

_ANCESTRY_SQL = """
WITH RECURSIVE up(id, parent_session_id, end_reason, depth) AS (
    SELECT id, parent_session_id, end_reason, 0 FROM sessions WHERE id = {mark}
    UNION ALL
    SELECT s.id, s.parent_session_id, s.end_reason, up.depth + 1
    FROM sessions s JOIN up ON s.id = up.parent_session_id
    WHERE up.depth < {mark}
)
SELECT id, end_reason FROM up ORDER BY depth
"""


_TIP_SQL = (
    "SELECT c.id FROM sessions p JOIN sessions c ON c.parent_session_id = p.id "
    "WHERE p.id = {mark} AND p.end_reason = 'compression' ORDER BY c.started_at DESC, c.id DESC LIMIT 1"
)


def ancestry(conn: Any, session_id: str, *, mark: str = "?") -> list[tuple[str, str | None]]:
    """``(id, end_reason)`` from ``session_id`` up to its root; empty when it does not exist."""
    sql = _ANCESTRY_SQL.format(mark=mark)
    return [(row[0], row[1]) for row in conn.execute(sql, (session_id, MAX_DEPTH))]


def lineage_root(conn: Any, session_id: str) -> str | None:
    """The first session of the lineage that ``session_id`` belongs to."""
    chain = ancestry(conn, session_id)
    return chain[-1][0] if chain else None


def compression_ancestry(conn: Any, session_id: str) -> list[str]:
    """``session_id`` and the sessions it continues through compression, oldest first."""
    chain = ancestry(conn, session_id)
    ids = [chain[0][0]] if chain else []
    for link, end_reason in chain[1:]:
        if end_reason != "compression":
            break
        ids.append(link)
    return list(reversed(ids))


def compression_tip(conn: Any, session_id: str, *, mark: str = "?") -> str:
    """The newest session continuing ``session_id`` through compression (itself if none)."""
    sql = _TIP_SQL.format(mark=mark)
    current = session_id
    for _ in range(MAX_DEPTH):
        row = conn.execute(sql, (current,)).fetchone()
        if row is None:
            return current
        current = row[0]
    return current
