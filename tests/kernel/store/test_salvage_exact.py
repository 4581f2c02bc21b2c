"""Exact outcomes of ``hermes doctor``'s check and salvage (kernel/store/salvage.py) on real damaged files.

Every file here is a real SQLite database damaged the way a disk or a crash damages one:
pages overwritten with garbage, a read-only home, a stale WAL beside the file, a schema
from an older version. All calls are in process, so each mutant's run stays fast.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import time
from pathlib import Path

import pytest

from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel.store import salvage
from hermes.kernel.store.salvage import _readable_rows, _remove, check_database, salvage_database

# -- check_database ------------------------------------------------------------------------------


def _store(path: Path, sessions: int = 2, per: int = 2) -> list[str]:
    ids = []
    with SQLiteSessionStore(path) as store:
        for s in range(sessions):
            sid = store.create_session(title=f"chat {s}")
            store.append_messages(sid, [{"role": "user", "content": f"s{s} m{i}"} for i in range(per)])
            ids.append(sid)
    return ids


def test_a_healthy_file_without_a_wal_reports_zero_wal_bytes(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    _store(db, sessions=2, per=3)
    assert not db.with_name("state.db-wal").exists()  # the store checkpointed and removed it on close
    assert check_database(db).as_dict() == {"path": str(db), "exists": True, "damaged": None, "fts_problems": [],
                                            "wal_bytes": 0, "sessions": 2, "messages": 6}  # fmt: skip


def test_a_home_that_cannot_be_written_is_checked_read_only_and_not_called_damaged(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    _store(db, sessions=3, per=2)
    # A WAL index that can be neither opened nor created (a folder without write access, which
    # root would still write): the first connection fails, the read-only one reads the file, and
    # the FTS check, which must write, is skipped rather than reported.
    Path(str(db) + "-shm").symlink_to(tmp_path / "missing" / "shm")
    with pytest.raises(sqlite3.OperationalError):
        sqlite3.connect(db).execute("SELECT count(*) FROM sqlite_master")
    health = check_database(db)
    assert (health.damaged, health.fts_problems, health.sessions, health.messages) == (None, [], 3, 6)


def test_a_file_that_cannot_be_opened_at_all_says_why(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    db.mkdir()  # not a database at all: said as such, not as SQLite's "disk I/O error"
    health = check_database(db)
    assert health.as_dict() == {"path": str(db), "exists": True, "damaged": "it is a folder, not a database file",
                                "fts_problems": [], "wal_bytes": 0, "sessions": None, "messages": None}  # fmt: skip


def _without_not_null(db: Path, column_sql: str, update: str) -> None:
    """Store NULLs in a NOT NULL column, as a damaged file can hold them."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("UPDATE sqlite_master SET sql = replace(sql, ?, ?) WHERE name = 'sessions'",
                 (f"{column_sql} NOT NULL", column_sql))  # fmt: skip
    conn.close()
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute(update)
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("UPDATE sqlite_master SET sql = replace(sql, ?, ?) WHERE name = 'sessions'",
                 (column_sql, f"{column_sql} NOT NULL"))  # fmt: skip
    conn.close()


def test_each_quick_check_complaint_is_joined_into_the_damage(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    _store(db, sessions=2)
    _without_not_null(db, '"source" TEXT', "UPDATE sessions SET source = NULL")
    health = check_database(db)
    assert health.damaged == "NULL value in sessions.source; NULL value in sessions.source"
    assert (health.sessions, health.messages) == (None, None)


def test_a_check_that_cannot_read_the_file_reports_sqlites_error(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    _store(db, sessions=1)
    conn = sqlite3.connect(db)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'sessions'").fetchone()[0]
    conn.close()
    with db.open("r+b") as f:  # garbage over the root page of the sessions table
        f.seek((root - 1) * page_size)
        f.write(b"\xff" * page_size)
    health = check_database(db)
    assert (health.damaged, health.sessions) == ("database disk image is malformed", None)


def test_an_fts_index_that_cannot_be_read_is_named_with_sqlites_error(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    _store(db)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE messages_trigram_config SET v = 99 WHERE k = 'version'")
    conn.commit()
    conn.close()
    health = check_database(db)
    assert health.damaged is None
    assert health.fts_problems == ["messages_trigram: invalid fts5 file format (found 99, expected 4) - run 'rebuild'"]


# -- _readable_rows: stepping over damaged row ids ------------------------------------------------


def _leaf_pages(db: Path, table: str) -> list[int]:
    """The table's leaf pages in b-tree order (rowid order)."""
    conn = sqlite3.connect(db)
    try:
        return [r[0] for r in conn.execute("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY path", (table,))]
    finally:
        conn.close()


def _damaged_table(db: Path, ids: list[int], damaged: list[int]) -> sqlite3.Connection:
    """A table ``t`` with one row per 512-byte page; the pages of the ``damaged`` ids are garbage.

    A damaged page's row ids reach from the previous page's last id + 1 to its own id, so
    ``damaged=[6]`` after rows 1..3 makes ids 4, 5 and 6 unreadable.
    """
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA page_size = 512")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
    conn.executemany("INSERT INTO t VALUES (?, ?)", [(i, f"{i:06d}" + "x" * 390) for i in ids])
    conn.commit()
    conn.close()
    leaves = _leaf_pages(db, "t")
    assert len(leaves) == len(ids)
    with db.open("r+b") as f:
        for i in damaged:
            f.seek((leaves[ids.index(i)] - 1) * 512)
            f.write(b"\xff" * 512)
    return sqlite3.connect(db)


def _read(conn: sqlite3.Connection) -> list[int]:
    return [int(v[:6]) for (v,) in _readable_rows(conn, "t", ["v"])]


# _MAX_GAP is 20,000 ids; 4 keeps each case to a few rows and the same boundaries.
@pytest.mark.parametrize(
    ("ids", "damaged", "expected"),
    [
        # 3 unreadable ids (4..6) after readable rows: under the limit, the rest is read.
        ([1, 2, 3, 6, 7, 8], [6], [1, 2, 3, 7, 8]),
        # 4 unreadable ids (4..7): the limit is reached and the table is given up.
        ([1, 2, 3, 7, 8, 9], [7], [1, 2, 3]),
        # 3 unreadable ids at the very start (1..3): the rest is read.
        ([3, 4, 5], [3], [4, 5]),
        # A batch of 500 that ends just before the damage, then 3 unreadable ids (501..503).
        ([*range(1, 501), 503, *range(504, 511)], [503], [*range(1, 501), *range(504, 511)]),
        # No damage: a jump in the ids wider than the limit is no gap at all.
        ([1, 2, 100], [], [1, 2, 100]),
    ],
    ids=["gap-under-limit", "gap-at-limit", "gap-at-start", "after-full-batch", "healthy-jump"],
)
def test_unreadable_row_ids_are_stepped_over_up_to_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ids: list[int], damaged: list[int], expected: list[int]
) -> None:
    monkeypatch.setattr(salvage, "_MAX_GAP", 4)
    conn = _damaged_table(tmp_path / "t.db", ids, damaged)
    try:
        assert _read(conn) == expected
    finally:
        conn.close()


# -- salvage_database -----------------------------------------------------------------------------


def _files(folder: Path) -> list[str]:
    """The folder's files but the store's own lock files for state.db, which stay."""
    return sorted(p.name for p in folder.iterdir() if p.name not in ("state.db.lock", "state.db.lock-queue"))


def test_salvage_names_the_broken_copy_logs_the_counts_and_leaves_one_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    db = tmp_path / "state.db"
    ids = _store(db, sessions=3, per=2)
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM sessions WHERE id IN (?, ?)", (ids[0], ids[2]))  # two placeholders take their messages
    stamps = conn.execute("SELECT id, timestamp FROM messages ORDER BY id").fetchall()
    conn.commit()
    conn.close()
    with caplog.at_level(logging.INFO, logger="hermes.kernel.store.salvage"):
        report = salvage_database(db)
    assert (report.sessions, report.messages, report.placeholder_sessions) == (1, 6, 2)
    assert re.fullmatch(r"state\.db\.broken-\d{8}-\d{6}", report.broken_copy.name), report.broken_copy.name
    assert caplog.messages == [f"salvaged 1 sessions and 6 messages from {report.broken_copy}"]
    # One self-contained file in rollback-journal mode (header bytes 18-19 are 1, 1; WAL is 2, 2).
    assert db.read_bytes()[18:20] == b"\x01\x01"
    assert _files(tmp_path) == ["state.db", report.broken_copy.name]
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT id, timestamp FROM messages ORDER BY id").fetchall() == stamps  # times kept as they were
    # The FTS rebuild was committed in the new file itself.
    assert conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'm1'").fetchone()[0] == 3
    conn.close()


def test_salvage_keeps_a_session_whose_title_is_taken_without_its_title(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    with SQLiteSessionStore(db):
        pass
    conn = sqlite3.connect(db)
    # A row without an id comes first: it is skipped, and the rows after it are still read.
    conn.execute("INSERT INTO sessions (id, source, started_at, title) VALUES ('', 'cli', 1, 'nobody')")
    conn.execute("DROP INDEX idx_sessions_title")  # a damaged index let two sessions share a title
    conn.execute("INSERT INTO sessions (id, source, started_at, title) VALUES ('a', 'cli', 2, 'Same')")
    conn.execute("INSERT INTO sessions (id, source, started_at, title) VALUES ('b', 'telegram', 3, 'Same')")
    conn.commit()
    conn.close()
    report = salvage_database(db)
    assert (report.sessions, report.messages, report.placeholder_sessions) == (2, 0, 0)
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT id, source, started_at, title FROM sessions ORDER BY id").fetchall()
    conn.close()
    assert rows == [("a", "cli", 2.0, "Same"), ("b", "telegram", 3.0, None)]


def test_salvage_keeps_a_session_whose_source_is_null_with_all_its_fields(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    ids = _store(db, sessions=2)
    _without_not_null(db, '"source" TEXT', f"UPDATE sessions SET source = NULL WHERE id = '{ids[0]}'")
    report = salvage_database(db)
    assert (report.sessions, report.messages, report.placeholder_sessions) == (2, 4, 0)
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT id, source, title, end_reason, message_count FROM sessions ORDER BY title").fetchall()
    conn.close()
    assert rows == [(ids[0], "recovered", "chat 0", None, 2), (ids[1], "cli", "chat 1", None, 2)]


def test_salvage_reads_an_older_schema_and_fills_what_it_lacks(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    conn = sqlite3.connect(db)
    # No sessions.source, and messages with nothing but the three columns a message needs.
    conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, started_at REAL, title TEXT)")
    conn.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT)")
    conn.execute("INSERT INTO sessions VALUES ('old', 5, 'Old chat')")
    conn.executemany("INSERT INTO messages VALUES (?, ?, ?)", [(1, "old", "user"), (2, "old", "assistant")])
    conn.commit()
    conn.close()
    report = salvage_database(db)
    assert (report.sessions, report.messages, report.placeholder_sessions) == (1, 2, 0)
    with SQLiteSessionStore(db) as store:
        session = store.get_session("old")
        assert session is not None
        assert (session["source"], session["title"], session["message_count"]) == ("recovered", "Old chat", 2)
        assert [m["role"] for m in store.get_messages("old")] == ["user", "assistant"]


def test_salvage_moves_a_wal_and_index_left_beside_the_file_into_the_broken_copy(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    _store(db, sessions=1)
    holder = sqlite3.connect(db)  # another process's connection keeps -wal and -shm beside the file
    try:
        assert holder.execute("SELECT count(*) FROM sessions").fetchone() == (1,)
        assert db.with_name("state.db-wal").exists() and db.with_name("state.db-shm").exists()
        report = salvage_database(db)
    finally:
        holder.close()
    broken = report.broken_copy.name
    # A stale WAL beside the new file would be replayed into it: both went with the broken copy.
    assert _files(tmp_path) == ["state.db", broken, f"{broken}-shm", f"{broken}-wal"]


def test_an_interrupted_salvage_leaves_the_file_as_it_was_and_no_half_made_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "state.db"
    _store(db, sessions=2, per=2)
    original = db.read_bytes()
    calls: list[str] = []
    real_insert = salvage._insert

    def insert_then_ctrl_c(conn: sqlite3.Connection, table: str, data: dict[str, object]) -> bool:
        calls.append(table)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real_insert(conn, table, data)

    monkeypatch.setattr(salvage, "_insert", insert_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        salvage_database(db)
    assert db.read_bytes() == original
    assert _files(tmp_path) == ["state.db"]


def test_remove_deletes_a_database_and_every_file_beside_it(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    for name in ["x.db", "x.db-wal", "x.db-shm", "x.db.lock", "x.db.lock-queue", "y.db"]:
        (tmp_path / name).write_bytes(b"1")
    _remove(db)
    assert [p.name for p in tmp_path.iterdir()] == ["y.db"]
    _remove(db)  # nothing left to remove is no error
    assert [p.name for p in tmp_path.iterdir()] == ["y.db"]


@pytest.mark.parametrize(("update", "started"), [
    ("SET started_at = NULL, updated_at = 77, ended_at = 88", 77.0),
    ("SET started_at = NULL, updated_at = NULL, ended_at = 88", 88.0),
])  # fmt: skip
def test_salvage_keeps_a_session_whose_start_is_null_dated_by_its_last_change(tmp_path: Path, update: str, started: float) -> None:
    db = tmp_path / "state.db"
    ids = _store(db, sessions=2)
    _without_not_null(db, '"started_at" REAL', f"UPDATE sessions {update} WHERE id = '{ids[0]}'")
    report = salvage_database(db)
    assert (report.sessions, report.messages, report.placeholder_sessions) == (2, 4, 0)
    conn = sqlite3.connect(db)
    row = conn.execute("SELECT source, title, started_at, message_count FROM sessions WHERE id = ?", (ids[0],)).fetchone()
    conn.close()
    assert row == ("cli", "chat 0", started, 2)


def test_salvage_dates_a_session_with_no_time_at_all_now(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    ids = _store(db, sessions=1)
    _without_not_null(db, '"started_at" REAL', f"UPDATE sessions SET started_at = NULL, updated_at = NULL, ended_at = NULL WHERE id = '{ids[0]}'")
    before = time.time()
    salvage_database(db)
    conn = sqlite3.connect(db)
    (started,) = conn.execute("SELECT started_at FROM sessions WHERE id = ?", (ids[0],)).fetchone()
    conn.close()
    assert before <= started <= time.time()
