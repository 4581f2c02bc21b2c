"""SessionStore: sessions, messages, lineage, titles and usage in ``HERMES_HOME/state.db``.

One store object owns one connection. Every write is one small transaction
through :meth:`SessionStore._write` (flock, ``BEGIN IMMEDIATE``, jittered
retries); the agent loop calls :meth:`append_messages` after every step so a
crash loses nothing that completed. Search, lineage walks, accounting and
export live in their own modules; this class ties them to the connection.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from ..errors import HermesError
from ..usage import CanonicalUsage, CostResult
from . import compactions as _compactions
from . import lineage as _lineage
from .accounting import SessionUsage, read_usage, usage_update
from .concurrency import (
    CHECKPOINT_EVERY,
    WAL_SAFETY_NET_PAGES,
    Checkpointer,
    ReaderPool,
    WriteLock,
    checkpoint,
    connect,
    connect_readonly,
    with_retries,
)
from .contract import Conversation, HealthCheck, SessionStore
from .errors import SessionNotFoundError, TitleInUseError
from .foreign import refuse_foreign
from .rows import (
    _INSERT_MESSAGE,
    _MESSAGE_COLUMNS,
    CHAT_COLUMNS,
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    _chat_rows,
    _decode_message,
    _message_row,
    chat_rows,
    decode_message,
    message_row,
    new_session_id,
    page_offset,
)
from .schema import apply_migrations, is_up_to_date, migrations
from .sqlite_bulk import RemovalAndCopy
from .search import SearchHit, SortOrder, search_messages
from .substring_index import SubstringIndexer, finish_index, has_lag, index_batch, lag
from .tenants import title_in_use
from .titles import next_numbered_title, sanitize_title
from .writers import FileWriterLeases, WriterClaim

__all__ = [
    "CHAT_COLUMNS",
    "MESSAGE_COLUMNS",
    "SESSION_COLUMNS",
    "Conversation",
    "SQLiteSessionStore",
    "SYNCHRONOUS_MODES",
    "SessionNotFoundError",
    "SessionStore",
    "TitleInUseError",
    "chat_rows",
    "decode_message",
    "message_row",
    "new_session_id",
]

log = logging.getLogger(__name__)
T = TypeVar("T")

#: ``store.synchronous`` values: what a commit survives (see docs/session-stores.md).
SYNCHRONOUS_MODES = ("OFF", "NORMAL", "FULL", "EXTRA")

def _sqlite_path(url: str) -> Path:
    """``sqlite:///relative``, ``sqlite:////absolute`` (SQLAlchemy's form) or a plain path."""
    if url.startswith("sqlite:///"):
        return Path(url[len("sqlite:///") :]).expanduser()
    if url.startswith("sqlite:"):
        raise HermesError(f"store.url {url!r} is not a SQLite URL; write sqlite:///relative/path or sqlite:////abs/path")
    return Path(url).expanduser()


def _database(conn: sqlite3.Connection) -> Any:
    from sqlite_utils import Database

    return Database(conn, execute_plugins=False)


class SQLiteSessionStore(RemovalAndCopy, SessionStore):
    """The session database of one HERMES_HOME (or any path, for tests and tools).

    ``trigram=False`` creates a new database without the trigram index (search
    then falls back to LIKE for substrings); it does not drop an existing one.
    ``readonly=True`` opens an existing file for reading only (a read-only
    HERMES_HOME): no migrations, and every write fails.
    """

    def __init__(
        self,
        path: Path | str,
        *,
        trigram: bool = True,
        synchronous: str = "NORMAL",
        checkpoint_every: int = CHECKPOINT_EVERY,
        readonly: bool = False,
    ) -> None:
        self.path = Path(path)
        if self.path.exists() and not self.path.is_file():
            raise HermesError(f"{self.path} is a folder, not a database file; `hermes doctor --fix` moves it "
                              "aside (nothing is deleted) and a new store is created")  # fmt: skip
        self.readonly = readonly
        self.checkpoint_every = checkpoint_every
        self._lock = WriteLock(self.path)
        self._mutex = threading.RLock()  # one connection, possibly several tool threads
        self._writes = 0
        self._checkpointer = Checkpointer(self.path, synchronous=synchronous)
        self._indexer: SubstringIndexer | None = None
        if readonly:
            self.conn = connect_readonly(self.path)
            try:
                refuse_foreign(self.conn, self.path)
            except BaseException:
                self.conn.close()
                raise
            self._readers = ReaderPool(self.path, readonly=True)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.conn = connect(self.path, synchronous=synchronous)
        self._readers = ReaderPool(self.path, synchronous=synchronous)
        if checkpoint_every:
            # Our own checkpoints replace SQLite's automatic one (every 1,000 WAL pages),
            # which runs inside COMMIT, that is while this writer holds the write lock.
            # It stays as a safety net for big bulk imports, 10x further out.
            self.conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_SAFETY_NET_PAGES}")
        try:
            self._open(trigram)
        except BaseException:
            self.conn.close()
            self._lock.close()
            raise
        self._indexer = SubstringIndexer(self._index_batch, lag=self._index_lag)
        if has_lag(self.conn):  # a writer that died before its batch: index its messages now
            self._indexer.request()

    backend_name = "sqlite"

    @classmethod
    def from_config(cls, *, url: str | None, home: Any, options: Mapping[str, Any]) -> SQLiteSessionStore:
        """``url`` is a path or ``sqlite:///path`` (None: ``home.state_db``)."""
        synchronous = str(options.get("synchronous") or "NORMAL").upper()
        if synchronous not in SYNCHRONOUS_MODES:
            raise HermesError(
                f"store.synchronous must be one of {', '.join(SYNCHRONOUS_MODES)}, not {synchronous!r}; "
                "fix it with `hermes config set store.synchronous NORMAL`"
            )
        path = _sqlite_path(url) if url else home.state_db
        return cls(path, synchronous=synchronous, readonly=bool(options.get("readonly")))

    def describe(self) -> str:
        return f"sqlite {self.path.resolve()}"

    def health(self) -> list[HealthCheck]:
        pending = [p.name for p in migrations().pending(_database(self.conn))]
        return [
            HealthCheck("store", True, self.describe()),
            HealthCheck("migrations", not pending, "up to date" if not pending else f"pending: {', '.join(pending)}"),
        ]

    def _open(self, trigram: bool) -> None:
        def setup() -> None:
            refuse_foreign(self.conn, self.path)  # before anything writes: not the journal mode, not a lock file
            with self._lock.held():
                # Switching to WAL needs the write lock once; afterwards it is a no-op read.
                if self.conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    self.conn.execute("PRAGMA journal_mode = WAL")
                apply_migrations(self.conn, trigram=trigram)

        def needs_setup() -> bool:  # noqa: E306
            # A read, without the lock: the common case (an up-to-date file) never waits, nor loads sqlite_utils.
            wal = self.conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"
            return not wal or not is_up_to_date(self.conn)

        if with_retries(needs_setup):
            with_retries(setup)

    # -- plumbing --------------------------------------------------------------

    def close(self) -> None:
        """Index what is waiting for the substring index, checkpoint (PASSIVE) and close."""
        if self._indexer is not None:
            self._indexer.close()  # outside the mutex: its batch may be waiting for it
        with self._mutex:
            if self.conn is None:
                return
            if self._indexer is not None:
                finish_index(self.conn, self._write)
            self._checkpointer.close()
            self._checkpoint()
            self.conn.close()
            self.conn = None  # type: ignore[assignment]
            self._readers.close()
            self._lock.close()

    def _checkpoint(self) -> None:
        """Every :data:`CHECKPOINT_EVERY` writes on the checkpoint thread; on close, here."""
        if self._checkpointer.open:
            self._checkpointer.request()
        else:
            checkpoint(self.conn)

    def _index_batch(self) -> bool:
        """One batch of the substring index (on the indexer's thread); True when more wait."""
        return self.conn is not None and index_batch(self._read, self._write)

    def _index_lag(self) -> int:
        return 0 if self.conn is None else self._read(lag)

    def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in one ``BEGIN IMMEDIATE`` transaction under the write lock, retrying when busy."""

        def attempt() -> T:
            with self._lock.held():
                self.conn.execute("BEGIN IMMEDIATE")
                try:
                    result = fn(self.conn)
                    self.conn.execute("COMMIT")
                except BaseException:
                    if self.conn.in_transaction:
                        self.conn.execute("ROLLBACK")
                    raise
            return result

        with self._mutex:
            result = with_retries(attempt)
            if self._indexer is not None:
                self._indexer.request()
            self._writes += 1
            if self.checkpoint_every and self._writes % self.checkpoint_every == 0:
                self._checkpoint()
            return result

    def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` on this thread's reader connection, in one read transaction (one snapshot)."""
        if self.conn is None:
            raise HermesError("the session store is closed")
        conn = self._readers.get()

        def attempt() -> T:
            conn.execute("BEGIN")
            try:
                return fn(conn)
            finally:
                conn.execute("COMMIT")

        return with_retries(attempt)

    # -- sessions --------------------------------------------------------------

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
        """Open a new session (of ``tenant``, None: of none) and return its id."""
        sid = session_id or new_session_id()
        clean = sanitize_title(title)

        def insert(conn: sqlite3.Connection) -> None:
            if clean is not None:
                self._check_title_free(conn, clean, sid, tenant)
            now = time.time()
            conn.execute(
                "INSERT INTO sessions (id, source, model, system_prompt, parent_session_id, started_at, "
                "title, updated_at, tenant) VALUES (?,?,?,?,?,?,?,?,?)",
                (sid, source, model, system_prompt, parent_session_id, now, clean, now, tenant),
            )

        self._write(insert)
        return sid

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """The session row as a dict, or None."""
        cols = ", ".join(SESSION_COLUMNS)
        row = self._read(lambda c: c.execute(f"SELECT {cols} FROM sessions WHERE id = ?", (session_id,)).fetchone())
        return dict(zip(SESSION_COLUMNS, row)) if row else None

    def resolve_session_id(self, text: str) -> str:
        """An exact id, or a prefix that matches exactly one session."""
        if self.get_session(text) is not None:
            return text
        from .titles import escape_like

        rows = self._read(
            lambda c: c.execute(
                "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' ORDER BY id LIMIT 2", (escape_like(text) + "%",)
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
        """Sessions (of ``tenant`` only, when given), newest first; ``offset`` skips that many (paging)."""
        cols = ", ".join(SESSION_COLUMNS)
        where = [(c, v) for c, v in (("source", source or None), ("tenant", tenant)) if v is not None]
        sql = f"SELECT {cols} FROM sessions" + (" WHERE " + " AND ".join(f"{c} = ?" for c, _ in where) if where else "")
        # LIMIT -1: no limit, which SQLite needs to take an OFFSET.
        sql += " ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?"
        params: list[Any] = [v for _, v in where] + [-1 if limit is None else limit, page_offset(offset)]
        rows = self._read(lambda c: c.execute(sql, params).fetchall())
        return [dict(zip(SESSION_COLUMNS, row)) for row in rows]

    def end_session(self, session_id: str, reason: str) -> None:
        """Mark a session ended with ``reason`` (user_exit, new, compression, branched, timeout, ...)."""

        def update(conn: sqlite3.Connection) -> None:
            now = time.time()
            # A resumed session that ends again gets its new end time.
            cur = conn.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = ?, updated_at = ? WHERE id = ?",
                (now, reason, now, session_id),
            )
            if cur.rowcount == 0:
                raise SessionNotFoundError(session_id)

        self._write(update)

    # -- titles ----------------------------------------------------------------

    @staticmethod
    def _check_title_free(conn: sqlite3.Connection, title: str, session_id: str, tenant: str | None) -> None:
        row = conn.execute("SELECT id, tenant FROM sessions WHERE title = ? AND id != ?", (title, session_id)).fetchone()
        if row is not None:
            raise title_in_use(title, row[0], row[1], tenant)

    def set_title(self, session_id: str, title: str | None) -> str | None:
        """Set (or clear, with None/blank) the title; returns the sanitised title."""
        clean = sanitize_title(title)

        def update(conn: sqlite3.Connection) -> None:
            if clean is not None:
                owner = conn.execute("SELECT tenant FROM sessions WHERE id = ?", (session_id,)).fetchone()
                self._check_title_free(conn, clean, session_id, owner[0] if owner else None)
            cur = conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (clean, session_id))
            if cur.rowcount == 0:
                raise SessionNotFoundError(session_id)

        self._write(update)
        return clean

    # -- messages --------------------------------------------------------------

    def append_messages(self, session_id: str, messages: Iterable[Mapping[str, Any]]) -> list[int]:
        """Append messages in one transaction (all or none); returns their ids."""
        now = time.time()
        messages = list(messages)
        # Encoding (and image stripping) happens before the lock is taken.
        rows = [_message_row(session_id, m, now) for m in messages]
        tool_calls = sum(len(m.get("tool_calls") or ()) for m in messages)
        return self._write(lambda conn: self._insert_messages(conn, session_id, rows, tool_calls, now))

    @staticmethod
    def _insert_messages(
        conn: sqlite3.Connection, session_id: str, rows: list[tuple[Any, ...]], tool_calls: int, now: float
    ) -> list[int]:
        cur = conn.execute(
            "UPDATE sessions SET message_count = message_count + ?, tool_call_count = tool_call_count + ?, "
            "updated_at = ? WHERE id = ?",
            (len(rows), tool_calls, now, session_id),
        )
        if cur.rowcount == 0:
            raise SessionNotFoundError(session_id)
        return [conn.execute(_INSERT_MESSAGE, row).lastrowid for row in rows]  # type: ignore[misc]

    def get_messages(self, session_id: str) -> list[dict[str, Any]]:
        """Every message of a session, oldest first, content decoded exactly."""
        cols = ", ".join(_MESSAGE_COLUMNS)
        rows = self._read(
            lambda c: c.execute(f"SELECT {cols} FROM messages WHERE session_id = ? ORDER BY id", (session_id,)).fetchall()
        )
        return [_decode_message(row) for row in rows]

    writer_leases = True

    def claim_writer(self, session_id: str) -> WriterClaim:
        """A ``flock``-ed file in ``<state.db>.writers/`` (see :class:`~.writers.FileWriterLeases`)."""
        if self.readonly:  # it never writes, so it never needs the session to itself
            return WriterClaim(session_id, enforced=False)
        return FileWriterLeases(Path(str(self.path) + ".writers")).claim(session_id)

    # -- lineage ---------------------------------------------------------------

    def lineage_root(self, session_id: str) -> str | None:
        """The first session of the lineage ``session_id`` belongs to."""
        return self._read(lambda c: _lineage.lineage_root(c, session_id))

    def lineage(self, session_id: str) -> dict[str, Any]:
        """Ancestors (nearest first, with end reasons) and direct children of a session."""
        self.require_session(session_id)

        def read(conn: sqlite3.Connection) -> dict[str, Any]:
            chain = _lineage.ancestry(conn, session_id)
            children = conn.execute(
                "SELECT id, title, started_at FROM sessions WHERE parent_session_id = ? ORDER BY started_at, id",
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
        rows = [_message_row(child_id, m, now) for m in messages or []]

        def create(conn: sqlite3.Connection) -> None:
            parent = conn.execute(
                "SELECT source, model, system_prompt, title, tenant FROM sessions WHERE id = ?", (parent_id,)
            ).fetchone()
            if parent is None:
                raise SessionNotFoundError(parent_id)
            p_source, model, p_prompt, p_title, tenant = parent
            clean = sanitize_title(title)
            if clean is not None:
                self._check_title_free(conn, clean, child_id, tenant)
            elif p_title:
                clean = next_numbered_title(conn, p_title)
            # A session that ended by compression keeps that reason: resume follows it to its child.
            conn.execute(
                "UPDATE sessions SET ended_at = coalesce(ended_at, ?), updated_at = ?, "
                "end_reason = CASE WHEN end_reason = 'compression' THEN end_reason ELSE ? END, "
                "compression_count = compression_count + ? WHERE id = ?",
                (now, now, reason, 1 if reason == "compression" else 0, parent_id),
            )
            # The child is the parent's tenant's: a lineage never leaves its tenant.
            conn.execute(
                "INSERT INTO sessions (id, source, model, system_prompt, parent_session_id, started_at, "
                "title, updated_at, tenant) VALUES (?,?,?,?,?,?,?,?,?)",
                (child_id, source or p_source, model, system_prompt if system_prompt is not None else p_prompt,
                 parent_id, now, clean, now, tenant),
            )  # fmt: skip
            if copy_messages:
                cols = ", ".join(c for c in (*_MESSAGE_COLUMNS, "tool_args") if c not in ("id", "session_id"))
                conn.execute(
                    f"INSERT INTO messages (session_id, {cols}) SELECT ?, {cols} FROM messages "
                    "WHERE session_id = ? ORDER BY id",
                    (child_id, parent_id),
                )
            for row in rows:
                conn.execute(_INSERT_MESSAGE, row)
            conn.execute(
                "UPDATE sessions SET message_count = (SELECT count(*) FROM messages WHERE session_id = ?), "
                "tool_call_count = (SELECT coalesce(sum(json_array_length(tool_calls)), 0) FROM messages "
                "WHERE session_id = ? AND json_valid(tool_calls)) WHERE id = ?",
                (child_id, child_id, child_id),
            )

        self._write(create)
        return child_id

    def branch(self, session_id: str, *, title: str | None = None, source: str | None = None) -> str:
        """A child with the history copied; the parent ends with ``branched``. Returns the child's id.

        Without ``title`` the child is numbered after the parent (``Refactor auth #2``).
        A session that ended by compression is branched from its chain's tip,
        the session holding the live history.
        """
        session_id = self._read(lambda c: _lineage.compression_tip(c, session_id))
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
        """End ``session_id`` with ``compression`` and continue in a child holding ``messages``.

        The parent keeps its original messages (search still finds them); the
        child gets the compressed history and the next title in the lineage.
        ``child_id`` lets the caller pick the id (its system prompt names it).
        """
        return self._child(
            session_id, "compression", title=title, copy_messages=False, source=None,
            system_prompt=system_prompt, messages=list(messages), child_id=child_id,
        )  # fmt: skip

    def record_compaction(self, session_id: str, **record: Any) -> None:
        """Store what the compression that created ``session_id`` kept (see :mod:`.compactions`)."""
        self._write(lambda conn: _compactions.write_compaction(conn, session_id, **record))

    def compaction(self, session_id: str) -> dict[str, Any] | None:
        """The compression that created ``session_id`` (else the one that ended it), or None."""
        return self._read(lambda conn: _compactions.find_compaction(conn, session_id))

    def resume(self, session_id: str, *, follow_compression: bool = True) -> Conversation:
        """Load a session as a conversation to continue.

        With ``follow_compression`` an ended-by-compression session resolves to
        the newest session continuing it, whose history is the live one. One
        read transaction: the row, the chain only when it was compressed, the
        messages.
        """
        cols = ", ".join(SESSION_COLUMNS)

        def read(conn: sqlite3.Connection) -> tuple[dict[str, Any], list[dict[str, Any]]]:
            row = conn.execute(f"SELECT {cols} FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                raise SessionNotFoundError(session_id)
            session = dict(zip(SESSION_COLUMNS, row))
            if follow_compression and session["end_reason"] == "compression":
                tip = _lineage.compression_tip(conn, session_id)
                session = dict(zip(SESSION_COLUMNS, conn.execute(f"SELECT {cols} FROM sessions WHERE id = ?", (tip,)).fetchone()))
            # Decoded while the cursor walks, not after a fetchall: building the row list
            # first costs about a tenth of a long session's load.
            cursor = conn.execute(f"SELECT {', '.join(CHAT_COLUMNS)} FROM messages WHERE session_id = ? ORDER BY id", (session["id"],))
            return session, _chat_rows(cursor)

        session, messages = self._read(read)
        return Conversation(session, messages)

    def compression_ancestry(self, session_id: str) -> list[str]:
        """``session_id`` and the sessions it continues through compression, oldest first."""
        return self._read(lambda c: _lineage.compression_ancestry(c, session_id))

    # -- usage -----------------------------------------------------------------

    def record_usage(self, session_id: str, usage: CanonicalUsage, cost: CostResult | None = None) -> None:
        """Add one provider response's tokens, API call(s) and cost to the session."""
        now = time.time()

        def update(conn: sqlite3.Connection) -> None:
            if usage_update(conn, session_id, usage, cost, now) == 0:
                raise SessionNotFoundError(session_id)

        self._write(update)

    def usage(self, session_id: str | None = None) -> SessionUsage:
        """Accumulated usage of one session, or of all sessions."""
        result = self._read(lambda c: read_usage(c, session_id))
        if result is None:
            raise SessionNotFoundError(str(session_id))
        return result

    # -- search ----------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        sort: SortOrder = "rank",
        source: str | None = None,
        role: str | None = None,
        session_id: str | None = None,
        context: bool = True,
        tenant: str | None = None,
        deadline: float | None = None,
    ) -> list[SearchHit]:
        """Messages matching ``query`` (any text; never raises on it), in ``tenant``'s sessions when given."""
        return self._read(
            lambda c: search_messages(
                c, query, limit=limit, sort=sort, source=source, role=role, session_id=session_id, context=context,
                tenant=tenant,
                deadline=deadline,
            )
        )  # fmt: skip
