"""Writer leases on PostgreSQL: a session-level advisory lock, held on a connection of its own.

The lock lives as long as that connection, so it dies with the process (or its host), and it
covers every host sharing the database, which a lock file could not. The connection's
``application_name`` says who holds it, for the refusal's message. See
:mod:`hermes.kernel.store.writers` for what a claim means.
"""

from __future__ import annotations

import hashlib
import os
import socket
from typing import Any

from hermes.kernel import HermesError
from hermes.kernel.store import WriterClaim, holder_text
from hermes.kernel.store.opening import redact_url

from .connection import _reason

__all__ = ["LEASE_NAMESPACE", "claim_writer", "lease_key"]

#: The first key of every writer lease ("HERM"), so they never meet another program's advisory locks.
LEASE_NAMESPACE = 0x4845524D
_PREFIX = "hermes-writer"

_HOLDER = """
SELECT a.application_name, a.backend_start FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.classid = %s::bigint::oid AND l.objid = %s::bigint::oid
  AND l.objsubid = 2 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
"""


def lease_key(session_id: str) -> int:
    """The second (signed 32-bit) advisory key of ``session_id``'s lease."""
    return int.from_bytes(hashlib.sha256(session_id.encode("utf-8")).digest()[:4], "big", signed=True)


def claim_writer(url: str, session_id: str, connect_timeout: int = 10) -> WriterClaim:
    """Take ``session_id``'s lease on a new connection, or say who holds it."""
    import psycopg

    name = f"{_PREFIX} {os.getpid()} {socket.gethostname()}"[:63]
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=connect_timeout, application_name=name)
    except psycopg.Error as exc:
        raise HermesError(f"cannot take the writer lease of session {session_id} at {redact_url(url)}: {_reason(exc)}") from None
    try:
        key = lease_key(session_id)
        if conn.execute("SELECT pg_try_advisory_lock(%s, %s)", (LEASE_NAMESPACE, key)).fetchone()[0]:
            return WriterClaim(session_id, _release=conn.close)
        row = conn.execute(_HOLDER, (LEASE_NAMESPACE, key & 0xFFFFFFFF)).fetchone()
    except BaseException:
        conn.close()
        raise
    conn.close()
    return WriterClaim(session_id, holder=_describe(row))


def _describe(row: Any) -> str:
    if not row or not str(row[0] or "").startswith(_PREFIX + " "):
        return "another hermes process"  # it let go meanwhile, or is not telling who it is
    _, pid, *host = str(row[0]).split(" ")
    since = row[1].timestamp() if row[1] is not None else None
    return holder_text(pid, " ".join(host), since)
