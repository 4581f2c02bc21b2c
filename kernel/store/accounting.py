"""Per-session usage: tokens by bucket, API calls, compressions and cost.

Each provider response adds a :class:`~hermes.kernel.usage.CanonicalUsage` and
its :class:`~hermes.kernel.usage.CostResult` to the session row in one small
``UPDATE``. The total's cost status is the least certain of its parts:
``unknown`` > ``estimated`` > ``actual`` > ``included``. An unknown part makes
the total unknown; the known parts are still summed (a lower bound), so
``hermes usage`` can say "at least $X".
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from ..usage import CanonicalUsage, CostResult

__all__ = [
    "SessionUsage",
    "TOKEN_BUCKETS",
    "USAGE_COLUMNS",
    "combine_cost_status",
    "read_usage",
    "summarize_usage",
    "usage_update",
]

TOKEN_BUCKETS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")
#: The session columns :func:`summarize_usage` reads, in its order.
USAGE_COLUMNS = (*TOKEN_BUCKETS, "api_call_count", "compression_count", "estimated_cost_usd", "cost_status")
_CERTAINTY = {"included": 0, "actual": 1, "estimated": 2, "unknown": 3}


def combine_cost_status(current: str | None, new: str | None) -> str | None:
    """The status of a sum whose parts have statuses ``current`` and ``new`` (None: no part yet)."""
    if current is None:
        return new
    if new is None:
        return current
    return max(current, new, key=lambda s: _CERTAINTY.get(s, 3))


def usage_update(
    conn: sqlite3.Connection, session_id: str, usage: CanonicalUsage, cost: CostResult | None, now: float
) -> int:
    """Add one response's usage to ``session_id`` (inside the caller's write transaction)."""
    row = conn.execute("SELECT cost_status FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if row is None:
        return 0
    status = combine_cost_status(row[0], cost.status if cost is not None else "unknown")
    amount = cost.amount_usd if cost is not None and cost.amount_usd is not None else 0.0
    # A response that reports no request count is still one API call.
    calls = usage.request_count or 1
    sets = ", ".join(f"{b} = {b} + ?" for b in TOKEN_BUCKETS)
    cur = conn.execute(
        f"UPDATE sessions SET {sets}, api_call_count = api_call_count + ?, "
        "estimated_cost_usd = estimated_cost_usd + ?, cost_status = ?, updated_at = ? WHERE id = ?",
        [*(getattr(usage, b) for b in TOKEN_BUCKETS), calls, amount, status, now, session_id],
    )
    return cur.rowcount


@dataclass(frozen=True)
class SessionUsage:
    """Accumulated usage of one session, or of all sessions when ``session_id`` is None."""

    session_id: str | None
    usage: CanonicalUsage
    api_calls: int
    compressions: int
    sessions: int
    known_cost_usd: float
    cost_status: str | None

    @property
    def cost(self) -> CostResult | None:
        """The total as a CostResult (None before any API call); ``unknown`` carries no amount."""
        if self.cost_status is None:
            return None
        if self.cost_status == "unknown":
            return CostResult(None, "unknown")
        return CostResult(round(self.known_cost_usd, 10), self.cost_status)  # type: ignore[arg-type]

    def as_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "sessions": self.sessions,
            "tokens": self.usage.as_dict() | {"total_tokens": self.usage.total_tokens},
            "api_calls": self.api_calls,
            "compressions": self.compressions,
            "cost_usd": self.cost.amount_usd if self.cost is not None else 0.0,
            "known_cost_usd": round(self.known_cost_usd, 10),
            "cost_status": self.cost_status,
        }


def read_usage(conn: sqlite3.Connection, session_id: str | None = None) -> SessionUsage | None:
    """Usage of one session (None if it does not exist) or the sum over all sessions."""
    cols = ", ".join(USAGE_COLUMNS)
    if session_id is not None:
        rows = conn.execute(f"SELECT {cols} FROM sessions WHERE id = ?", (session_id,)).fetchall()
        if not rows:
            return None
    else:
        rows = conn.execute(f"SELECT {cols} FROM sessions").fetchall()
    return summarize_usage(session_id, rows)


def summarize_usage(session_id: str | None, rows: list[Any]) -> SessionUsage:
    """The SessionUsage of session rows holding :data:`USAGE_COLUMNS` (any backend)."""
    total = CanonicalUsage()
    calls = compressions = 0
    amount = 0.0
    status: str | None = None
    n = len(TOKEN_BUCKETS)
    for row in rows:
        total = total + CanonicalUsage(*row[:n], request_count=row[n])
        calls += row[n]
        compressions += row[n + 1]
        amount += row[n + 2] or 0.0
        if row[n] or row[n + 3] is not None:  # sessions without API calls say nothing about cost
            status = combine_cost_status(status, row[n + 3])
    return SessionUsage(session_id, total, calls, compressions, len(rows), amount, status)
