"""Store details with exact results: export headings, lineage after branching, defaults, read-only opening."""

from __future__ import annotations

import logging
import os
import re
import stat
import sqlite3
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest

from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel.errors import HermesError
from hermes.kernel.store import SessionNotFoundError, SessionStore, new_session_id, sanitize_title
from hermes.kernel.store.concurrency import (
    BUSY_TIMEOUT_MS,
    READER_CACHE_KIB,
    Checkpointer,
    ReaderPool,
    StoreBusyError,
    WriteLock,
    checkpoint,
    connect,
    connect_readonly,
    make_private,
    with_retries,
)
from hermes.kernel.store.schema import apply_migrations, has_trigram_index, trigram_available


def test_markdown_export_names_the_parent_and_keeps_tool_arguments_readable(store: SessionStore) -> None:
    parent = store.create_session(title="Plan")
    store.append_messages(parent, [{"role": "user", "content": "go"}])
    child = store.branch(parent)
    call = {"id": "c1", "function": {"name": "write", "arguments": '{"path": "café.txt"}'}, "note": "naïve"}
    store.append_messages(child, [{"role": "assistant", "content": None, "tool_calls": [call]}])
    text = store.export(child, "markdown")
    assert f"- **parent_session_id**: {parent}\n" in text
    assert '  "note": "naïve"\n' in text
    assert "\\u" not in text


def test_require_session_names_the_missing_id(store: SessionStore) -> None:
    for call in (lambda: store.require_session("ghost"), lambda: store.export("ghost", "markdown")):
        with pytest.raises(SessionNotFoundError) as info:
            call()
        assert str(info.value) == "no session 'ghost'; see `hermes sessions list`"


def test_a_childless_session_ended_by_compression_keeps_that_reason_when_branched(store: SessionStore) -> None:
    sid = store.create_session(title="Long talk")
    store.end_session(sid, "compression")
    child = store.branch(sid)
    parent = store.get_session(sid)
    assert parent["end_reason"] == "compression"
    assert store.get_session(child)["parent_session_id"] == sid


def test_search_returns_20_hits_by_default(store: SessionStore) -> None:
    sid = store.create_session()
    store.append_messages(sid, [{"role": "user", "content": f"walrus number {i}"} for i in range(25)])
    assert len(store.search("walrus")) == 20
    assert len(store.search("walrus", limit=21)) == 21


def test_has_trigram_index_tells_the_two_kinds_of_store_apart(tmp_path: Path) -> None:
    with SQLiteSessionStore(tmp_path / "tri.db"):
        pass
    with SQLiteSessionStore(tmp_path / "plain.db", trigram=False):
        pass
    for name, expected in (("tri.db", True), ("plain.db", False)):
        conn = sqlite3.connect(tmp_path / name)
        try:
            assert has_trigram_index(conn) is expected
        finally:
            conn.close()


def test_connect_readonly_refuses_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(b"not sqlite " * 100)
    with pytest.raises(sqlite3.DatabaseError, match="^file is not a database$"):
        connect_readonly(path)


def test_a_read_only_store_sees_writes_not_yet_checkpointed(tmp_path: Path) -> None:
    # mode=ro reads the WAL as well; immutable=1 (the fallback) would see only the main file.
    with SQLiteSessionStore(tmp_path / "state.db") as writer:
        sid = writer.create_session(title="Fresh")
        with SQLiteSessionStore(tmp_path / "state.db", readonly=True) as reader:
            assert reader.get_session(sid)["title"] == "Fresh"


def _checkpoint_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "hermes-store-checkpoint"]


def test_the_checkpoint_thread_copies_the_wal_into_the_file_and_never_keeps_the_process_alive(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("PRAGMA wal_autocheckpoint = 0")  # only the Checkpointer copies pages
    writer.execute("CREATE TABLE t (x TEXT)")
    writer.executemany("INSERT INTO t VALUES (?)", [("x" * 1000,) for _ in range(100)])
    before, size = _checkpoint_threads(), path.stat().st_size
    checkpointer = Checkpointer(path, synchronous="FULL")
    try:
        checkpointer.request()
        [thread] = [t for t in _checkpoint_threads() if t not in before]
        assert thread.daemon is True
        deadline = time.monotonic() + 10
        while path.stat().st_size <= size and time.monotonic() < deadline:
            time.sleep(0.01)
        assert path.stat().st_size > 100 * 1000
    finally:
        checkpointer.close()
        writer.close()
    assert not thread.is_alive()


def test_a_checkpoint_thread_that_cannot_connect_says_why_in_the_debug_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    checkpointer = Checkpointer(tmp_path / "missing" / "state.db")
    with caplog.at_level(logging.DEBUG, logger="hermes.kernel.store.concurrency"):
        checkpointer.request()
        checkpointer.close()
    assert [r.getMessage() for r in caplog.records if r.name == "hermes.kernel.store.concurrency"] == [
        "checkpoint thread could not connect: unable to open database file"
    ]


def test_messages_take_the_other_spellings_of_reasoning_and_tool_name(store: SessionStore) -> None:
    sid = store.create_session()
    store.append_messages(
        sid,
        [
            {"role": "assistant", "content": "a", "reasoning_content": "why", "timestamp": 5},
            {"role": "tool", "content": "b", "name": "read_file", "tool_call_id": "c1"},
            {"role": "assistant", "content": "c", "reasoning": "own", "reasoning_content": "not this"},
        ],
    )
    first, second, third = store.get_messages(sid)
    assert (first["reasoning"], first["timestamp"]) == ("why", 5.0)
    assert (second["tool_name"], second["tool_call_id"]) == ("read_file", "c1")
    assert third["reasoning"] == "own"


def test_a_session_comes_from_the_cli_unless_told(store: SessionStore) -> None:
    assert store.get_session(store.create_session())["source"] == "cli"
    assert store.get_session(store.create_session(source="telegram"))["source"] == "telegram"


def test_session_ids_sort_by_time_and_end_in_6_hex_digits() -> None:
    assert re.fullmatch(r"20260102_030405_[0-9a-f]{6}", new_session_id(datetime(2026, 1, 2, 3, 4, 5)))
    assert new_session_id().startswith(datetime.now().strftime("%Y%m%d_"))
    assert len({new_session_id() for _ in range(20)}) > 1


@pytest.mark.parametrize(
    ("title", "clean"),
    [
        (None, None),
        ("", None),
        (" \t\n ", None),
        ("a\u200bb\x7fc", "a b c"),  # format and control characters become spaces
        ("\u00a0Café\u2028plan  #2 ", "Café plan #2"),  # every kind of space collapses
        ("y" * 100, "y" * 100),
        ("x" * 99 + " " + "z", "x" * 99),  # cut at 100, then the trailing space goes
    ],
)
def test_titles_are_one_clean_line_of_at_most_100_characters(title: str | None, clean: str | None) -> None:
    assert sanitize_title(title) == clean


def test_every_message_field_is_stored_and_a_message_without_calls_stores_none(store: SessionStore) -> None:
    sid = store.create_session()
    store.append_messages(
        sid,
        [
            {"role": "user", "content": "plain"},
            {"role": "assistant", "content": "done", "finish_reason": "stop", "token_count": 7, "marker": "handoff",
             "tool_name": "own", "name": "not this", "tool_calls": [{"arguments": "ls -la"}]},
        ],
    )  # fmt: skip
    raw = store.conn.execute("SELECT tool_calls, tool_args FROM messages ORDER BY id").fetchall()
    assert raw == [(None, None), ('[{"arguments":"ls -la"}]', "ls -la")]
    plain, full = store.get_messages(sid)
    assert plain["tool_calls"] is None
    fields = (full["finish_reason"], full["token_count"], full["marker"], full["tool_name"])
    assert fields == ("stop", 7, "handoff", "own")
    assert "tool_calls" not in store.resume(sid).messages[0]


@pytest.mark.parametrize("readonly", [False, True])
def test_each_thread_keeps_one_query_only_reader(tmp_path: Path, readonly: bool) -> None:
    path = tmp_path / "state.db"
    SQLiteSessionStore(path).close()
    pool = ReaderPool(path, synchronous="OFF", readonly=readonly)
    try:
        conn = pool.get()
        assert pool.get() is conn
        if not readonly:
            assert conn.execute("PRAGMA synchronous").fetchone()[0] == 0
        other: list[sqlite3.Connection] = []
        thread = threading.Thread(target=lambda: other.append(pool.get()))
        thread.start()
        thread.join()
        assert other[0] is not conn
        assert conn.execute("PRAGMA query_only").fetchone()[0] == 1
        assert conn.execute("PRAGMA cache_size").fetchone()[0] == -READER_CACHE_KIB
        # Only a read-only home's readers are opened read-only (mode=ro): the others could write.
        conn.execute("PRAGMA query_only = 0")
        if readonly:
            with pytest.raises(sqlite3.OperationalError, match="readonly database"):
                conn.execute("CREATE TABLE t (x)")
        else:
            conn.execute("CREATE TABLE t (x)")
        pool.close()
        again = pool.get()  # a closed pool opens new connections
        assert again is not conn and again.execute("SELECT 1").fetchone() == (1,)
    finally:
        pool.close()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_make_private_creates_the_file_for_its_owner_and_tightens_older_ones(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.db"
    make_private(fresh)
    assert fresh.read_bytes() == b"" and _mode(fresh) == 0o600
    for modes, after in (
        (
            {"": 0o644, "-wal": 0o640, "-shm": 0o604, "-journal": 0o660},
            {"": 0o600, "-wal": 0o600, "-shm": 0o600, "-journal": 0o600},
        ),
        # no -wal: the files after it are still tightened; one private already is left as it is
        ({"": 0o400, "-shm": 0o644}, {"": 0o400, "-shm": 0o600}),
    ):
        old = tmp_path / f"old{len(modes)}.db"
        for suffix, mode in modes.items():
            Path(f"{old}{suffix}").write_text("x")
            os.chmod(f"{old}{suffix}", mode)
        make_private(old)
        assert {suffix: _mode(Path(f"{old}{suffix}")) for suffix in modes} == after
        assert Path(f"{old}-shm").read_text() == "x"  # tightened, never truncated
    make_private(tmp_path / "missing" / "state.db")  # unwritable: left to sqlite3 to report
    assert not (tmp_path / "missing").exists()


def test_make_private_leaves_memory_and_uri_names_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    make_private(":memory:")
    make_private("file:uri.db?mode=ro")
    assert list(tmp_path.iterdir()) == []


def test_connect_sets_the_store_pragmas_and_refuses_an_unknown_synchronous(tmp_path: Path) -> None:
    conn = connect(tmp_path / "state.db", synchronous="full")
    try:
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
        assert conn.isolation_level is None
        seen: list[object] = []
        thread = threading.Thread(target=lambda: seen.append(conn.execute("SELECT 1").fetchone()))
        thread.start()
        thread.join()
        assert seen == [(1,)]  # the store's connections serve its tool threads too
        assert _mode(tmp_path / "state.db") == 0o600
    finally:
        conn.close()
    for synchronous, level in (("off", 0), ("NORMAL", 1), ("Extra", 3), (None, 1)):
        path = tmp_path / "state.db"
        conn = connect(path) if synchronous is None else connect(path, synchronous=synchronous)
        try:
            assert conn.execute("PRAGMA synchronous").fetchone()[0] == level
        finally:
            conn.close()
    with pytest.raises(ValueError) as info:
        connect(tmp_path / "other.db", synchronous="sometimes")
    assert str(info.value) == "synchronous must be OFF, NORMAL, FULL or EXTRA, not 'sometimes'"
    assert not (tmp_path / "other.db").exists()


def test_a_checkpoint_that_finds_the_file_locked_is_skipped_with_a_debug_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "state.db"
    SQLiteSessionStore(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    conn = sqlite3.connect(path, isolation_level=None, timeout=0)
    try:
        with caplog.at_level(logging.DEBUG, logger="hermes.kernel.store.concurrency"):
            checkpoint(conn)
    finally:
        conn.close()
        holder.close()
    assert [r.getMessage() for r in caplog.records] == ["checkpoint skipped: database is locked"]


def test_a_closed_store_refuses_reads_with_one_line_and_closes_once(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "state.db")
    sid = store.create_session()
    store.close()
    store.close()  # a second close does nothing
    with pytest.raises(HermesError) as info:
        store.get_session(sid)
    assert str(info.value) == "the session store is closed"


def test_the_store_creates_its_folder_for_its_owner_only(tmp_path: Path) -> None:
    with SQLiteSessionStore(tmp_path / "home" / "deeper" / "state.db"):
        pass
    assert _mode(tmp_path / "home" / "deeper") == 0o700


def test_sqlite_keeps_its_own_checkpoints_when_the_store_makes_none(tmp_path: Path) -> None:
    with SQLiteSessionStore(tmp_path / "own.db", checkpoint_every=0) as store:
        assert store.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000


def test_a_file_that_is_not_a_database_fails_to_open_and_leaves_nothing_open(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(b"not sqlite " * 100)
    fds = len(os.listdir("/proc/self/fd"))
    with pytest.raises(sqlite3.DatabaseError, match="^file is not a database$"):
        SQLiteSessionStore(path)
    assert len(os.listdir("/proc/self/fd")) == fds


def test_the_store_takes_its_settings_and_locks_beside_its_file(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SQLiteSessionStore(path, synchronous="OFF") as store:
        assert store.readonly is False
        assert store.conn.execute("PRAGMA synchronous").fetchone()[0] == 0
        assert store._readers.get().execute("PRAGMA synchronous").fetchone()[0] == 0
        store.create_session()
        assert {p.name for p in tmp_path.iterdir()} >= {"state.db.lock", "state.db.lock-queue"}
    with SQLiteSessionStore(path, readonly=True) as store:
        assert store.readonly is True


def test_the_checkpoint_thread_checkpoints_the_stores_own_file(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SQLiteSessionStore(path, checkpoint_every=1) as store:
        size = path.stat().st_size
        store.append_messages(store.create_session(), [{"role": "user", "content": "x" * 200_000}])
        deadline = time.monotonic() + 10
        while path.stat().st_size < size + 200_000 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert path.stat().st_size >= size + 200_000  # copied from the WAL while the store is open


def test_trigram_available_probes_with_a_temporary_table_it_drops() -> None:
    conn = sqlite3.connect(":memory:")
    assert trigram_available(conn) is True
    assert conn.execute("SELECT count(*) FROM temp.sqlite_master").fetchone() == (0,)
    conn.execute("PRAGMA query_only = 1")  # the probe cannot be created: no trigram index then
    assert trigram_available(conn) is False
    conn.close()


def test_a_reader_pool_opens_normal_connections_by_default(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    SQLiteSessionStore(path).close()
    pool = ReaderPool(path)
    try:
        conn = pool.get()
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1
        conn.execute("PRAGMA query_only = 0")
        conn.execute("CREATE TABLE t (x)")  # not opened read-only
    finally:
        pool.close()


def test_apply_migrations_builds_the_trigram_index_by_default(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "state.db", isolation_level=None)
    try:
        assert "m006_trigram" in apply_migrations(conn)
        assert has_trigram_index(conn) is True
    finally:
        conn.close()


def test_opening_an_up_to_date_store_never_waits_for_the_write_lock(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SQLiteSessionStore(path) as store:
        sid = store.create_session()
    holder = WriteLock(path)
    try:
        with holder.held():
            with SQLiteSessionStore(path, checkpoint_every=0) as store:
                assert store.get_session(sid)["id"] == sid
    finally:
        holder.close()


def test_the_store_never_runs_sqlite_utils_plugins_on_its_connection(tmp_path: Path) -> None:
    from sqlite_utils import hookimpl
    from sqlite_utils.plugins import pm

    class Spy:
        def __init__(self) -> None:
            self.calls: list[object] = []

        @hookimpl
        def prepare_connection(self, conn: object) -> None:
            self.calls.append(conn)

    spy = Spy()
    pm.register(spy, name="hermes-test-spy")
    try:
        with SQLiteSessionStore(tmp_path / "state.db") as store:
            assert [check.name for check in store.health()] == ["store", "migrations"]
    finally:
        pm.unregister(spy)
    assert spy.calls == []


def test_opening_migrates_a_wal_file_an_older_hermes_left_behind(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    apply_migrations(conn, stop_before="m007_markers_and_compactions")
    conn.close()
    with SQLiteSessionStore(path) as store:
        migrations = store.health()[1]
        assert (migrations.name, migrations.ok, migrations.detail) == ("migrations", True, "up to date")


def test_with_retries_counts_its_tries_in_the_line_it_gives_up_with() -> None:
    calls: list[int] = []

    def busy() -> None:
        calls.append(1)
        raise sqlite3.OperationalError("database is locked")

    with pytest.raises(StoreBusyError) as info:
        with_retries(busy, deadline_s=0.1)
    assert len(calls) >= 2
    assert str(info.value) == (
        f"the session database stayed locked for 0 s ({len(calls)} tries); another hermes process may be stuck"
    )
