"""Checking and salvaging ``state.db``: what ``hermes doctor`` and ``doctor --fix`` run.

Salvage has the semantics of the sqlite3 shell's ``.recover`` for this schema:
every session and message that can still be read is copied into a fresh
database (a damaged stretch of a table is stepped over row by row), messages
whose session row was lost get a placeholder session so nothing readable is
dropped, the FTS indexes are rebuilt, and the broken file is kept beside the
new one as ``state.db.broken-<timestamp>``.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .concurrency import is_busy_error
from .substring_index import catch_up, mark_rebuilt

__all__ = ["DbHealth", "check_database", "rebuild_fts", "salvage_database", "SalvageReport"]

log = logging.getLogger(__name__)

FTS_TABLES = ("messages_fts", "messages_trigram")
# Consecutive unreadable row ids stepped over before a table is given up.
_MAX_GAP = 20_000


#: :attr:`DbHealth.damaged` of a state.db that is a folder (or another non-file): moved aside, never salvaged.
NOT_A_FILE = "it is a folder, not a database file"


def move_aside(path: Path) -> Path:
    """Rename ``path`` (a state.db that is not a file) beside itself; returns the new name. Nothing is deleted."""
    import time

    target = path.with_name(f"{path.name}.not-a-database-{time.strftime('%Y%m%d-%H%M%S')}")
    path.rename(target)
    return target


@dataclass
class DbHealth:
    """What ``hermes doctor`` learned about one state.db."""

    path: Path
    exists: bool
    damaged: str | None = None  # quick_check's first complaint, or the error opening it
    fts_problems: list[str] = field(default_factory=list)
    wal_bytes: int = 0
    sessions: int | None = None
    messages: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path), "exists": self.exists, "damaged": self.damaged,
            "fts_problems": self.fts_problems, "wal_bytes": self.wal_bytes,
            "sessions": self.sessions, "messages": self.messages,
        }  # fmt: skip


def _fts_tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (?, ?)", FTS_TABLES)
    return [r[0] for r in rows]


def check_database(path: Path) -> DbHealth:
    """``quick_check``, FTS consistency, WAL size and row counts; never raises for a bad file."""
    health = DbHealth(path, path.exists())
    if not health.exists:
        return health
    if not path.is_file():
        health.damaged = NOT_A_FILE
        return health
    wal = path.with_name(path.name + "-wal")
    health.wal_bytes = wal.stat().st_size if wal.exists() else 0
    try:
        conn = sqlite3.connect(str(path), isolation_level=None)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        # A home that cannot be written: look at the file read-only rather than call it damaged.
        from .concurrency import connect_readonly

        try:
            conn = connect_readonly(path)
        except sqlite3.Error as exc:
            health.damaged = str(exc)
            return health
    except sqlite3.Error as exc:
        health.damaged = str(exc)
        return health
    try:
        result = [r[0] for r in conn.execute("PRAGMA quick_check(5)")]
        if result != ["ok"]:
            health.damaged = "; ".join(result)
            return health
        health.sessions = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
        health.messages = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
        for table in _fts_tables(conn):
            # integrity-check with rank 1 compares the index with the messages table.
            try:
                conn.execute("BEGIN")
                if table == "messages_trigram" and not _caught_up(conn):
                    continue  # a writer holds the file: the index is checked next time
                conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
            except sqlite3.OperationalError as exc:
                if "readonly" not in str(exc):  # a read-only file cannot run the check; not a problem
                    health.fts_problems.append(f"{table}: {exc}")
            except sqlite3.DatabaseError as exc:
                health.fts_problems.append(f"{table}: {exc}")
            finally:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
    except sqlite3.DatabaseError as exc:
        health.damaged = str(exc)
    finally:
        conn.close()
    return health


def _caught_up(conn: sqlite3.Connection) -> bool:
    """Index the messages the batch indexer has not reached yet (no drift; the caller rolls
    this back), so the check compares the whole table; False when a writer holds the lock."""
    try:
        while catch_up(conn):
            pass
    except sqlite3.OperationalError as exc:
        if not is_busy_error(exc):
            raise
        return False
    return True


def rebuild_fts(path: Path) -> list[str]:
    """Rebuild every FTS index of the database from the messages table; returns their names."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        tables = _fts_tables(conn)
        conn.execute("BEGIN IMMEDIATE")  # no append between the rebuild and its mark
        for table in tables:
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")
        mark_rebuilt(conn)
        conn.execute("COMMIT")
        return tables
    finally:
        conn.close()


@dataclass
class SalvageReport:
    """What ``doctor --fix`` saved from a damaged state.db."""

    sessions: int
    messages: int
    placeholder_sessions: int
    broken_copy: Path

    def as_dict(self) -> dict[str, Any]:
        return {"sessions": self.sessions, "messages": self.messages,
                "placeholder_sessions": self.placeholder_sessions, "broken_copy": str(self.broken_copy)}  # fmt: skip


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    try:
        return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
    except sqlite3.DatabaseError:
        return []


def _readable_rows(conn: sqlite3.Connection, table: str, columns: list[str]) -> Iterator[tuple[Any, ...]]:
    """Rows of ``table`` in rowid order, stepping over rows that cannot be read."""
    cols = ", ".join(columns)
    last, gap = 0, 0
    while gap < _MAX_GAP:
        try:
            batch = conn.execute(
                f"SELECT rowid, {cols} FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT 500", (last,)
            ).fetchall()
        except sqlite3.DatabaseError:
            # A damaged page in this stretch: point reads of each row id until one works.
            last += 1
            try:
                row = conn.execute(f"SELECT rowid, {cols} FROM {table} WHERE rowid = ?", (last,)).fetchone()
            except sqlite3.DatabaseError:
                row = None
            if row is None:
                gap += 1
                continue
            gap = 0
            yield row[1:]
            continue
        if not batch:
            return
        gap = 0
        last = batch[-1][0]
        for row in batch:
            yield row[1:]


def salvage_database(path: Path) -> SalvageReport:
    """Copy every readable session and message of ``path`` into a fresh database that replaces it."""
    from .session_store import SQLiteSessionStore

    stamp = time.strftime("%Y%m%d-%H%M%S")
    fresh = path.with_name(f"{path.name}.salvage-{stamp}")
    broken = path.with_name(f"{path.name}.broken-{stamp}")
    source = sqlite3.connect(str(path), isolation_level=None)
    SQLiteSessionStore(fresh).close()  # a SQLite file's salvage is SQLite: the current schema, triggers and FTS tables
    target = sqlite3.connect(str(fresh), isolation_level=None)
    try:
        sessions = messages = placeholders = 0
        target.execute("BEGIN")
        wanted = _columns(target, "sessions")
        cols = [c for c in _columns(source, "sessions") if c in wanted]
        if "id" in cols:
            for row in _readable_rows(source, "sessions", cols):
                data = dict(zip(cols, row))
                if not data.get("id"):
                    continue
                if data.get("started_at") is None:  # a damaged row: keep the session, dated as best known
                    data["started_at"] = data.get("updated_at") or data.get("ended_at") or time.time()
                data["source"] = data.get("source") or "recovered"  # absent in old schemas, NULL in a damaged row
                if _insert(target, "sessions", data) or _insert(target, "sessions", {**data, "title": None}):
                    sessions += 1
        wanted = _columns(target, "messages")
        cols = [c for c in _columns(source, "messages") if c in wanted]
        if {"id", "session_id", "role"} <= set(cols):
            known = {r[0] for r in target.execute("SELECT id FROM sessions")}
            for row in _readable_rows(source, "messages", cols):
                data = dict(zip(cols, row))
                if not data.get("session_id") or not data.get("role"):
                    continue
                data["timestamp"] = data.get("timestamp") or time.time()
                if data["session_id"] not in known:
                    _insert(target, "sessions", {"id": data["session_id"], "source": "recovered",
                                                 "started_at": data["timestamp"], "end_reason": "recovered"})  # fmt: skip
                    known.add(data["session_id"])
                    placeholders += 1
                if _insert(target, "messages", data):
                    messages += 1
        target.execute(
            "UPDATE sessions SET message_count = (SELECT count(*) FROM messages m WHERE m.session_id = sessions.id)"
        )
        target.execute("COMMIT")
        for table in _fts_tables(target):
            target.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")
        mark_rebuilt(target)
        # One self-contained file to move into place; the store turns WAL back on when it opens it.
        target.execute("PRAGMA journal_mode = DELETE")
    except BaseException:
        target.close()
        source.close()
        _remove(fresh)
        raise
    target.close()
    source.close()
    for suffix in ("", "-wal", "-shm"):
        old = path.with_name(path.name + suffix)
        if old.exists():
            os.replace(old, broken.with_name(broken.name + suffix))
    os.replace(fresh, path)
    _remove(fresh)
    log.info("salvaged %d sessions and %d messages from %s", sessions, messages, broken)
    return SalvageReport(sessions, messages, placeholders, broken)


def _insert(conn: sqlite3.Connection, table: str, data: dict[str, Any]) -> bool:
    cols = ", ".join(data)
    marks = ", ".join("?" for _ in data)
    try:
        conn.execute(f"INSERT INTO {table} ({cols}) VALUES ({marks})", tuple(data.values()))
        return True
    except sqlite3.IntegrityError:
        return False


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", ".lock", ".lock-queue"):
        try:
            os.unlink(str(path) + suffix)
        except FileNotFoundError:
            pass
