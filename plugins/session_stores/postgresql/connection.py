"""PostgreSQL store helpers that work on one open connection: titles, inserts, lineage walks, deletes."""


from __future__ import annotations

from typing import Any

from hermes.kernel import HermesError
from hermes.kernel.store import (
    TitleInUseError,
)
from hermes.kernel.store.lineage import ancestry, compression_tip
from hermes.kernel.store.tenants import title_in_use

from .rows import _INSERT_MESSAGE

__all__ = ['_commit_without_waiting', '_reason', '_unique_error', '_check_title_free', '_insert_rows', '_ancestry', '_compression_tip', '_delete']


def _commit_without_waiting(conn: Any) -> None:
    # Every write is followed by the durability barrier (_FLUSH) unless store.synchronous is
    # OFF, so no commit on these connections needs to wait for the disk while it holds locks.
    conn.execute("SET synchronous_commit = off")


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


def _unique_error(exc: Any) -> HermesError:
    diag = getattr(exc, "diag", None)
    if diag is not None and getattr(diag, "constraint_name", None) == "idx_sessions_title":
        return TitleInUseError("that title is already used by another session")
    if diag is not None and getattr(diag, "constraint_name", None) == "sessions_pkey":
        return HermesError("a session with that id already exists")
    return HermesError(f"the session store refused a duplicate: {_reason(exc)}")


def _check_title_free(conn: Any, title: str, session_id: str, tenant: str | None) -> None:
    row = conn.execute("SELECT id, tenant FROM sessions WHERE title = %s AND id != %s", (title, session_id)).fetchone()
    if row is not None:
        raise title_in_use(title, row[0], row[1], tenant)


def _insert_rows(conn: Any, rows: list[tuple[Any, ...]], first_seq: int) -> list[int]:
    if len(rows) == 1:
        return [conn.execute(_INSERT_MESSAGE, (first_seq, *rows[0])).fetchone()[0]]
    ids: list[int] = []
    if rows:
        with conn.cursor() as cur:
            cur.executemany(_INSERT_MESSAGE, [(first_seq + i, *row) for i, row in enumerate(rows)], returning=True)
            while True:
                ids.append(cur.fetchone()[0])
                if not cur.nextset():
                    break
    return ids


def _ancestry(conn: Any, session_id: str) -> list[tuple[str, str | None]]:
    return ancestry(conn, session_id, mark="%s")


def _compression_tip(conn: Any, session_id: str) -> str:
    return compression_tip(conn, session_id, mark="%s")


def _delete(conn: Any, session_id: str) -> bool:
    parent = conn.execute("SELECT parent_session_id FROM sessions WHERE id = %s FOR UPDATE", (session_id,)).fetchone()
    if parent is None:
        return False
    # Children keep a connected lineage: they hang from the deleted session's parent.
    conn.execute("UPDATE sessions SET parent_session_id = %s WHERE parent_session_id = %s", (parent[0], session_id))
    conn.execute("DELETE FROM compactions WHERE session_id = %s", (session_id,))
    conn.execute("DELETE FROM sessions WHERE id = %s", (session_id,))  # messages go by ON DELETE CASCADE
    return True
