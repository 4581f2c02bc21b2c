"""``prune``'s rules, shared by every backend: which sessions are idle enough, deleted in small batches.

A backend passes its write transaction, its delete of one session and its
driver's parameter marker; the selection and the batching live here once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..errors import HermesError

__all__ = ["PRUNE_ACTIVE_WITHIN_S", "PRUNE_BATCH", "prune_in_batches"]

#: ``prune`` never deletes a session active within this many seconds.
PRUNE_ACTIVE_WITHIN_S = 3600.0
#: Sessions deleted per write transaction, so other writers are never held up for long.
PRUNE_BATCH = 20

_IDLE_SQL = (
    "SELECT id FROM sessions WHERE ended_at IS NOT NULL "
    "AND coalesce(updated_at, ended_at, started_at) < {mark} LIMIT {batch}"
)


def prune_in_batches(
    write: Callable[[Callable[[Any], list[str]]], list[str]],
    delete: Callable[[Any, str], bool],
    older_than_days: float,
    *,
    now: float | None = None,
    mark: str = "?",
) -> list[str]:
    """Delete ended sessions idle for more than ``older_than_days``; returns their ids.

    An open session (a chat may be using it) and one active within the last
    :data:`PRUNE_ACTIVE_WITHIN_S` are never deleted.
    """
    if older_than_days < 0:
        raise HermesError("--older-than must be zero or more days")
    now = now if now is not None else time.time()
    cutoff = min(now - older_than_days * 86400, now - PRUNE_ACTIVE_WITHIN_S)
    sql = _IDLE_SQL.format(mark=mark, batch=PRUNE_BATCH)

    def batch(conn: Any) -> list[str]:
        ids = [row[0] for row in conn.execute(sql, (cutoff,))]
        return [sid for sid in ids if delete(conn, sid)]

    deleted: list[str] = []
    while True:
        done = write(batch)
        deleted += done
        if not done:
            return deleted
