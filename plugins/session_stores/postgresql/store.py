"""``PostgresSessionStore``: the session store on a PostgreSQL server, shared by many hosts.

psycopg 3 with a connection pool (``store.pool_size`` per process). Every
write is one short transaction; the ones that read before they write lock
the rows they depend on (``FOR UPDATE``), so two hosts appending to one
session queue on its row and number their messages without gaps. Commits
do not wait for the disk while they hold those locks; a barrier after each
write does, unless ``store.synchronous`` is OFF (see ``_FLUSH``). A unique
title taken meanwhile by another host is retried (numbered titles) or
reported (titles the user chose). Every statement is parameterised.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from hermes.kernel import HermesError
from hermes.kernel.store import (
    Conversation,
    HealthCheck,
    SearchHit,
    SessionNotFoundError,
    SessionStore,
    SessionUsage,
    WriterClaim,
    new_session_id,
    sanitize_title,
)
from hermes.kernel.store.accounting import TOKEN_BUCKETS, USAGE_COLUMNS, combine_cost_status, summarize_usage
from hermes.kernel.store.compactions import compaction_row, decode_compaction
from hermes.kernel.store.opening import redact_url
from hermes.kernel.store.session_store import (
    CHAT_COLUMNS,
    SESSION_COLUMNS,
    SYNCHRONOUS_MODES,
    chat_rows,
    decode_message,
)
from hermes.kernel.store.rows import page_offset
from hermes.kernel.store.titles import escape_like

from . import schema
from .importing import next_numbered_title
from .bulk import RemovalAndCopy
from .connection import _commit_without_waiting, _reason, _unique_error, _check_title_free, _insert_rows, _ancestry, _compression_tip
from .rows import _APPEND, _APPEND_ONE, _ATTEMPTS, _COMPACTION_COLS, _COPY_COLS, _FLUSH, _MESSAGE_COLS, _SESSION_COLS, _UPSERT_COMPACTION, _row, _text
from .search import search as _search
from .writers import claim_writer

__all__ = ["PostgresSessionStore"]

log = logging.getLogger(__name__)
# The pool reports reconnection attempts itself; without a configured handler
# they would reach the terminal as multi-line warnings. Configured logging still gets them.
logging.getLogger("psycopg.pool").addHandler(logging.NullHandler())
T = TypeVar("T")

class PostgresSessionStore(RemovalAndCopy, SessionStore):
    """Sessions, messages, lineage, titles, usage and search in a PostgreSQL database."""

    backend_name = "postgresql"

    def __init__(
        self, url: str, *, pool_size: int = 4, connect_timeout: float = 10.0, synchronous: str = "NORMAL"
    ) -> None:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise HermesError(
                "the postgresql session store needs psycopg; install it with "
                "`pip install 'hermes-kernel[postgresql]'`"
            ) from None
        self.url = url
        synchronous = synchronous.upper()
        if synchronous not in SYNCHRONOUS_MODES:
            raise ValueError(f"synchronous must be one of {', '.join(SYNCHRONOUS_MODES)}, not {synchronous!r}")
        self.synchronous = synchronous
        timeout = self.connect_timeout = max(1, int(connect_timeout))
        # One plain connection first: a wrong URL fails at once with the server's
        # reason (the pool would retry in the background), and migrations run on it.
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=timeout) as conn:
                schema.apply_migrations(conn)
                level = conn.execute("SHOW synchronous_commit").fetchone()[0]
        except Exception as exc:
            raise HermesError(f"cannot use the session store at {redact_url(url)}: {_reason(exc)}") from None
        # The level the barrier commits at: the database's own, unless that is off (then on).
        self._flush_level: str | None = None if synchronous == "OFF" else ("on" if level == "off" else level)
        self.pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max(1, int(pool_size)),
            # Search plans its full-text statements for their own values (prepare=False in search.py);
            # everything else is a look-up by key, whose cached generic plan saves replanning.
            kwargs={"autocommit": True, "connect_timeout": timeout},
            configure=_commit_without_waiting,
            open=False,
            name="hermes-store",
        )
        try:
            self.pool.open(wait=True, timeout=connect_timeout)
        except Exception as exc:
            self.pool.close()
            raise HermesError(f"cannot use the session store at {redact_url(url)}: {_reason(exc)}") from None

    @classmethod
    def from_config(cls, *, url: str | None, home: Any, options: Mapping[str, Any]) -> PostgresSessionStore:
        if not url:
            raise HermesError(
                "store.backend is postgresql but no URL is set; "
                "set HERMES_STORE_URL=postgresql://user@host/db or `hermes config set store.url ...`"
            )
        try:
            pool_size = int(options.get("pool_size") or 4)
        except (TypeError, ValueError):
            raise HermesError("store.pool_size must be a whole number of connections, such as 4") from None
        synchronous = str(options.get("synchronous") or "NORMAL").upper()
        if synchronous not in SYNCHRONOUS_MODES:
            raise HermesError(
                f"store.synchronous must be one of {', '.join(SYNCHRONOUS_MODES)}, not {synchronous!r}; "
                "fix it with `hermes config set store.synchronous NORMAL`"
            )
        return cls(url, pool_size=pool_size, synchronous=synchronous)

    def close(self) -> None:
        self.pool.close()

    def describe(self) -> str:
        return f"postgresql {redact_url(self.url)}"

    def health(self) -> list[HealthCheck]:
        checks = [HealthCheck("store", True, self.describe())]
        try:
            with self.pool.connection(timeout=10) as conn:
                version = conn.execute("SHOW server_version").fetchone()[0]
                checks.append(HealthCheck("connectivity", True, f"PostgreSQL {version}"))
                pending = schema.pending_migrations(conn)
                checks.append(HealthCheck("migrations", not pending, "up to date" if not pending else f"pending: {', '.join(pending)}"))
                ext = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'pg_trgm'").fetchone()
                checks.append(HealthCheck("pg_trgm", ext is not None, f"version {ext[0]}" if ext else "extension missing: run CREATE EXTENSION pg_trgm as a superuser"))
        except Exception as exc:
            checks.append(HealthCheck("connectivity", False, _reason(exc)))
        return checks

    # -- plumbing ------------------------------------------------------------------

    def _write(self, fn: Callable[[Any], T], *, retry_unique: bool = False) -> T:
        """Run ``fn(conn)`` in one transaction, then wait for it to reach the disk (unless
        ``store.synchronous`` is OFF)."""

        def run(conn: Any) -> T:
            with conn.transaction():
                result = fn(conn)
            if self._flush_level is not None:
                conn.execute(_FLUSH, (self._flush_level,))
            return result

        return self._retrying(run, retry_unique=retry_unique)

    def _write_statement(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """Run one statement as its own transaction and return its rows, durable unless
        ``store.synchronous`` is OFF, in one round trip."""

        def run(conn: Any) -> list[tuple[Any, ...]]:
            if self._flush_level is None:
                return conn.execute(sql, params).fetchall()
            # Pipelined: the commit releases the statement's locks without waiting for the
            # disk and the barrier's flush follows at once, so one flush covers both.
            try:
                with conn.pipeline():
                    conn.execute("BEGIN")
                    cursor = conn.execute(sql, params)
                    conn.execute("COMMIT")
                    conn.execute(_FLUSH, (self._flush_level,))
            except Exception:
                conn.rollback()  # an error leaves the explicit transaction open and aborted
                raise
            return cursor.fetchall()

        return self._retrying(run)

    def _retrying(self, run: Callable[[Any], T], *, retry_unique: bool = False) -> T:
        """``run(conn)`` on a pooled connection; retry serialization failures and deadlocks."""
        from psycopg import errors

        for attempt in range(_ATTEMPTS):
            try:
                with self.pool.connection() as conn:
                    return run(conn)
            except (errors.SerializationFailure, errors.DeadlockDetected):
                pass
            except errors.UniqueViolation as exc:
                if not retry_unique or attempt == _ATTEMPTS - 1:
                    raise _unique_error(exc) from None
            time.sleep(random.uniform(0.005, 0.05) * (attempt + 1))
        raise HermesError("the session database kept aborting this write; try again")

    def _read(self, fn: Callable[[Any], T]) -> T:
        with self.pool.connection() as conn, conn.transaction():
            return fn(conn)

    # -- sessions ------------------------------------------------------------------

    def create_session(
        self,
        *,
        source: str = "cli",
        model: str | None = None,
        system_prompt: str | None = None,
        parent_session_id: str | None = None,
        title: str | None = None,
        session_id: str | None = None,
        tenant: str | None = None,
    ) -> str:
        sid = session_id or new_session_id()
        clean = sanitize_title(title)

        def insert(conn: Any) -> None:
            if clean is not None:
                _check_title_free(conn, clean, sid, tenant)
            now = time.time()
            conn.execute(
                "INSERT INTO sessions (id, source, model, system_prompt, parent_session_id, started_at, title, updated_at, "
                "tenant) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (sid, source, _text(model), _text(system_prompt), parent_session_id, now, clean, now, _text(tenant)),
            )

        self._write(insert)
        return sid

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        row = self._read(lambda c: c.execute(f"SELECT {_SESSION_COLS} FROM sessions WHERE id = %s", (session_id,)).fetchone())
        return dict(zip(SESSION_COLUMNS, row)) if row else None

    def resolve_session_id(self, text: str) -> str:
        if self.get_session(text) is not None:
            return text
        rows = self._read(
            lambda c: c.execute(
                "SELECT id FROM sessions WHERE id LIKE %s ESCAPE '\\' ORDER BY id LIMIT 2", (escape_like(text) + "%",)
            ).fetchall()
        )
        if len(rows) == 1 and text:
            return rows[0][0]
        if len(rows) > 1 and text:
            raise HermesError(f"session id prefix {text!r} is ambiguous; give more characters")
        raise SessionNotFoundError(text)

    def list_sessions(
        self, *, source: str | None = None, limit: int | None = 50, tenant: str | None = None, offset: int = 0
    ) -> list[dict[str, Any]]:
        where = [(c, v) for c, v in (("source", source or None), ("tenant", tenant)) if v is not None]
        sql = f"SELECT {_SESSION_COLS} FROM sessions" + (" WHERE " + " AND ".join(f"{c} = %s" for c, _ in where) if where else "")
        # LIMIT NULL is no limit.
        sql += " ORDER BY started_at DESC, id DESC LIMIT %s OFFSET %s"
        params: list[Any] = [_text(v) for _, v in where] + [limit, page_offset(offset)]
        rows = self._read(lambda c: c.execute(sql, params).fetchall())
        return [dict(zip(SESSION_COLUMNS, row)) for row in rows]

    def end_session(self, session_id: str, reason: str) -> None:
        def update(conn: Any) -> None:
            now = time.time()
            cur = conn.execute(
                # A resumed session that ends again gets its new end time.
                "UPDATE sessions SET ended_at = %s, end_reason = %s, updated_at = %s WHERE id = %s",
                (now, reason, now, session_id),
            )
            if cur.rowcount == 0:
                raise SessionNotFoundError(session_id)

        self._write(update)

    def set_title(self, session_id: str, title: str | None) -> str | None:
        clean = sanitize_title(title)

        def update(conn: Any) -> None:
            if clean is not None:
                owner = conn.execute("SELECT tenant FROM sessions WHERE id = %s", (session_id,)).fetchone()
                _check_title_free(conn, clean, session_id, owner[0] if owner else None)
            if conn.execute("UPDATE sessions SET title = %s WHERE id = %s", (clean, session_id)).rowcount == 0:
                raise SessionNotFoundError(session_id)

        self._write(update)
        return clean

    # -- messages ------------------------------------------------------------------

    def append_messages(self, session_id: str, messages: Iterable[Mapping[str, Any]]) -> list[int]:
        now = time.time()
        messages = list(messages)
        if not messages:
            return []
        rows = [_row(session_id, m, now) for m in messages]
        tool_calls = sum(len(m.get("tool_calls") or ()) for m in messages)
        if len(rows) == 1:
            sql, params = _APPEND_ONE, [1, tool_calls, now, session_id, *rows[0]]
        else:
            columns = [list(c) for c in zip(*(row[1:] for row in rows))]
            sql, params = _APPEND, [len(rows), tool_calls, now, session_id, len(rows), session_id, *columns]

        done = self._write_statement(sql, params)
        if not done:
            raise SessionNotFoundError(session_id)
        return [i for i, _seq in sorted(done, key=lambda r: r[1])]

    def get_messages(self, session_id: str) -> list[dict[str, Any]]:
        rows = self._read(
            lambda c: c.execute(f"SELECT {_MESSAGE_COLS} FROM messages WHERE session_id = %s ORDER BY seq", (session_id,)).fetchall()
        )
        return [decode_message(row) for row in rows]

    writer_leases = True

    def claim_writer(self, session_id: str) -> WriterClaim:
        """An advisory lock on a connection of its own: it covers every host (see :mod:`.writers`)."""
        return claim_writer(self.url, session_id, self.connect_timeout)

    # -- lineage -------------------------------------------------------------------

    def lineage_root(self, session_id: str) -> str | None:
        chain = self._read(lambda c: _ancestry(c, session_id))
        return chain[-1][0] if chain else None

    def lineage(self, session_id: str) -> dict[str, Any]:
        def read(conn: Any) -> dict[str, Any]:
            chain = _ancestry(conn, session_id)
            if not chain:
                raise SessionNotFoundError(session_id)
            children = conn.execute(
                "SELECT id, title, started_at FROM sessions WHERE parent_session_id = %s ORDER BY started_at, id",
                (session_id,),
            ).fetchall()
            return {
                "root_session_id": chain[-1][0],
                "ancestors": [{"id": i, "end_reason": r} for i, r in chain[1:]],
                "children": [{"id": i, "title": t, "started_at": s} for i, t, s in children],
            }

        return self._read(read)

    def _child(
        self, parent_id: str, reason: str, *, title: str | None, copy_messages: bool, source: str | None,
        system_prompt: str | None, messages: list[Mapping[str, Any]] | None, child_id: str | None = None,
    ) -> str:  # fmt: skip
        child_id = child_id or new_session_id()
        now = time.time()
        rows = [_row(child_id, m, now) for m in messages or []]
        clean = sanitize_title(title)

        def create(conn: Any) -> None:
            parent = conn.execute(
                "SELECT source, model, system_prompt, title, tenant FROM sessions WHERE id = %s FOR UPDATE", (parent_id,)
            ).fetchone()
            if parent is None:
                raise SessionNotFoundError(parent_id)
            p_source, model, p_prompt, p_title, tenant = parent
            new_title = clean
            if clean is not None:
                _check_title_free(conn, clean, child_id, tenant)
            elif p_title:
                new_title = next_numbered_title(conn, p_title)
            conn.execute(
                # A session that ended by compression keeps that reason: resume follows it to its child.
                "UPDATE sessions SET ended_at = coalesce(ended_at, %s), updated_at = %s, "
                "end_reason = CASE WHEN end_reason = 'compression' THEN end_reason ELSE %s END, "
                "compression_count = compression_count + %s WHERE id = %s",
                (now, now, reason, 1 if reason == "compression" else 0, parent_id),
            )
            conn.execute(  # the parent's tenant: a lineage never leaves its tenant
                "INSERT INTO sessions (id, source, model, system_prompt, parent_session_id, started_at, title, updated_at, "
                "tenant) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (child_id, source or p_source, model, _text(system_prompt) if system_prompt is not None else p_prompt,
                 parent_id, now, new_title, now, tenant),
            )  # fmt: skip
            copied = 0
            if copy_messages:
                copied = conn.execute(
                    f"INSERT INTO messages (session_id, seq, {_COPY_COLS}) SELECT %s, seq, {_COPY_COLS} FROM messages "
                    "WHERE session_id = %s ORDER BY seq",
                    (child_id, parent_id),
                ).rowcount
            _insert_rows(conn, rows, copied + 1)
            conn.execute(
                "UPDATE sessions SET message_count = %s, tool_call_count = (SELECT coalesce(sum(CASE WHEN "
                "json_typeof(tool_calls::json) = 'array' THEN json_array_length(tool_calls::json) ELSE 0 END), 0) "
                "FROM messages WHERE session_id = %s AND tool_calls IS NOT NULL) WHERE id = %s",
                (copied + len(rows), child_id, child_id),
            )

        # A numbered title another host took meanwhile: the retry picks the next number.
        self._write(create, retry_unique=clean is None)
        return child_id

    def branch(self, session_id: str, *, title: str | None = None, source: str | None = None) -> str:
        # A session that ended by compression is branched from its chain's tip (the live history).
        session_id = self._read(lambda c: _compression_tip(c, session_id))
        return self._child(
            session_id, "branched", title=title, copy_messages=True, source=source, system_prompt=None, messages=None
        )

    def compression_child(
        self,
        session_id: str,
        messages: Iterable[Mapping[str, Any]] = (),
        *,
        system_prompt: str | None = None,
        title: str | None = None,
        child_id: str | None = None,
    ) -> str:
        return self._child(
            session_id, "compression", title=title, copy_messages=False, source=None,
            system_prompt=system_prompt, messages=list(messages), child_id=child_id,
        )  # fmt: skip

    def record_compaction(self, session_id: str, **record: Any) -> None:
        row = tuple(_text(v) for v in compaction_row(session_id, **record))
        self._write(lambda conn: conn.execute(_UPSERT_COMPACTION, row))

    def compaction(self, session_id: str) -> dict[str, Any] | None:
        def read(conn: Any) -> Any:
            row = conn.execute(f"SELECT {_COMPACTION_COLS} FROM compactions WHERE session_id = %s", (session_id,)).fetchone()
            if row is None:
                row = conn.execute(
                    f"SELECT {_COMPACTION_COLS} FROM compactions WHERE parent_session_id = %s "
                    "ORDER BY created_at DESC LIMIT 1",
                    (session_id,),
                ).fetchone()
            return row

        row = self._read(read)
        return None if row is None else decode_compaction(row)

    def resume(self, session_id: str, *, follow_compression: bool = True) -> Conversation:
        def read(conn: Any) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
            row = conn.execute(f"SELECT {_SESSION_COLS} FROM sessions WHERE id = %s", (session_id,)).fetchone()
            if row is None:
                raise SessionNotFoundError(session_id)
            session = dict(zip(SESSION_COLUMNS, row))
            if follow_compression and session["end_reason"] == "compression":
                tip = _compression_tip(conn, session_id)
                session = dict(zip(SESSION_COLUMNS, conn.execute(f"SELECT {_SESSION_COLS} FROM sessions WHERE id = %s", (tip,)).fetchone()))
            rows = conn.execute(
                f"SELECT {', '.join(CHAT_COLUMNS)} FROM messages WHERE session_id = %s ORDER BY seq",
                (session["id"],),
            ).fetchall()
            return session, rows

        session, rows = self._read(read)
        return Conversation(session, chat_rows(rows))

    def compression_ancestry(self, session_id: str) -> list[str]:
        chain = self._read(lambda c: _ancestry(c, session_id))
        ids = [chain[0][0]] if chain else []
        for link, end_reason in chain[1:]:
            if end_reason != "compression":
                break
            ids.append(link)
        return list(reversed(ids))

    # -- usage ---------------------------------------------------------------------

    def record_usage(self, session_id: str, usage: Any, cost: Any = None) -> None:
        now = time.time()

        def update(conn: Any) -> None:
            row = conn.execute("SELECT cost_status FROM sessions WHERE id = %s FOR UPDATE", (session_id,)).fetchone()
            if row is None:
                raise SessionNotFoundError(session_id)
            status = combine_cost_status(row[0], cost.status if cost is not None else "unknown")
            amount = cost.amount_usd if cost is not None and cost.amount_usd is not None else 0.0
            sets = ", ".join(f"{b} = {b} + %s" for b in TOKEN_BUCKETS)
            conn.execute(
                f"UPDATE sessions SET {sets}, api_call_count = api_call_count + %s, "
                "estimated_cost_usd = estimated_cost_usd + %s, cost_status = %s, updated_at = %s WHERE id = %s",
                [*(getattr(usage, b) for b in TOKEN_BUCKETS), usage.request_count or 1, amount, status, now, session_id],
            )

        self._write(update)

    def usage(self, session_id: str | None = None) -> SessionUsage:
        cols = ", ".join(USAGE_COLUMNS)
        if session_id is not None:
            rows = self._read(lambda c: c.execute(f"SELECT {cols} FROM sessions WHERE id = %s", (session_id,)).fetchall())
            if not rows:
                raise SessionNotFoundError(session_id)
        else:
            rows = self._read(lambda c: c.execute(f"SELECT {cols} FROM sessions").fetchall())
        return summarize_usage(session_id, rows)

    # -- search --------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        sort: Any = "rank",
        source: str | None = None,
        role: str | None = None,
        session_id: str | None = None,
        context: bool = True,
        tenant: str | None = None,
        deadline: float | None = None,
    ) -> list[SearchHit]:
        # No transaction: the hits and their details come from one statement (one snapshot),
        # and BEGIN and COMMIT would cost two more round trips.
        with self.pool.connection() as conn:
            return _search(
                conn, query, limit=limit, sort=sort, source=source, role=role, session_id=session_id, context=context,
                tenant=_text(tenant), deadline=deadline,
            )  # fmt: skip
