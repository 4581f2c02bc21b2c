"""The substring (trigram) index off the write path: batches after commit, search sees every message."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel.store.salvage import check_database
from hermes.kernel.store.schema import apply_migrations
from hermes.kernel.store.substring_index import (
    BUSY_LAG,
    CATCH_UP_BATCH,
    LEAVE_LAG,
    SubstringIndexer,
    catch_up,
    has_lag,
    indexed_through,
)

ROOT = Path(__file__).resolve().parents[3]


def _trigram_ids(path: Path, text: str) -> list[int]:
    """What the trigram index itself holds for ``text`` (no table scan)."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT rowid FROM messages_trigram WHERE messages_trigram MATCH ? ORDER BY rowid", (f'"{text}"',))
        return [r[0] for r in rows]
    finally:
        conn.close()


def _integrity(path: Path) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("INSERT INTO messages_trigram(messages_trigram, rank) VALUES ('integrity-check', 1)")
    finally:
        conn.close()


def _settled(store: SQLiteSessionStore, seconds: float = 20) -> None:
    """Wait for the store's indexer to hold every message (it runs when the writes pause)."""
    deadline = time.monotonic() + seconds
    while has_lag(store.conn) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not has_lag(store.conn)


def test_an_append_skips_the_trigram_index_and_search_still_finds_it_at_once(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SQLiteSessionStore(path) as store:
        sid = store.create_session()
        [mid] = store.append_messages(sid, [{"role": "user", "content": "the quokkaberry harvest"}])
        assert indexed_through(store.conn) < mid  # left to the batch indexer
        assert _trigram_ids(path, "okkaber") == []
        [hit] = store.search("okkaber")  # a substring: the trigram path, which reads the lag itself
        assert hit.message_id == mid and "**okkaber**" in hit.snippet
    # Closing leaves the one waiting row to the next writer, whose indexer adds it at a pause.
    assert _trigram_ids(path, "okkaber") == []
    with SQLiteSessionStore(path) as store:
        assert [h.message_id for h in store.search("okkaber")] == [mid]  # found while it waits
        _settled(store)
    assert _trigram_ids(path, "okkaber") == [mid]
    _integrity(path)


def test_close_indexes_what_waits_from_leave_lag_messages_on(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = SQLiteSessionStore(path)
    sid = store.create_session()
    store._indexer.close()  # type: ignore[union-attr]  # no pause-time batch: close alone decides
    store.append_messages(sid, [{"role": "user", "content": f"numbat {i}"} for i in range(LEAVE_LAG - 1)])
    store.close()
    assert has_lag(sqlite3.connect(path))  # fewer than LEAVE_LAG: left to the next writer
    store = SQLiteSessionStore(path)
    store._indexer.close()  # type: ignore[union-attr]
    store.append_messages(sid, [{"role": "user", "content": "numbat last"}])
    store.close()
    assert not has_lag(sqlite3.connect(path))
    assert len(_trigram_ids(path, "umba")) == LEAVE_LAG
    _integrity(path)


def test_the_indexer_waits_for_a_pause_unless_busy_lag_messages_wait() -> None:
    import threading

    batches: list[int] = []
    waiting = {"n": 0}
    done = threading.Event()

    def batch() -> bool:
        batches.append(waiting["n"])
        waiting["n"] = 0
        done.set()
        return False

    indexer = SubstringIndexer(batch, lag=lambda: waiting["n"], delay_s=0.05, busy_lag=BUSY_LAG)
    try:
        for _ in range(20):  # requests every 10 ms: never a pause, and the lag stays small
            waiting["n"] += 1
            indexer.request()
            time.sleep(0.01)
        assert batches == []
        waiting["n"] += BUSY_LAG  # a big lag: the next tick runs a batch though writes go on
        for _ in range(15):
            indexer.request()
            time.sleep(0.01)
        assert done.wait(5) and batches[0] >= BUSY_LAG
        done.clear()
        waiting["n"] = 3
        indexer.request()  # then a pause: the small lag is indexed too
        assert done.wait(5) and batches[-1] == 3
    finally:
        indexer.close()


def test_the_indexer_thread_catches_up_while_the_store_stays_open(tmp_path: Path) -> None:
    with SQLiteSessionStore(tmp_path / "state.db") as store:
        sid = store.create_session()
        for i in range(30):
            store.append_message(sid, {"role": "user", "content": f"wombatic entry {i}"})
        deadline = time.monotonic() + 20
        while has_lag(store.conn) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not has_lag(store.conn)
        assert indexed_through(store.conn) == store.conn.execute("SELECT max(id) FROM messages").fetchone()[0]
        assert len(store.search("mbatic", limit=100)) == 30


def test_batches_hold_at_most_catch_up_batch_messages(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = SQLiteSessionStore(path)
    sid = store.create_session()
    store.append_messages(sid, [{"role": "user", "content": f"row {i}"} for i in range(CATCH_UP_BATCH + 5)])
    store._indexer.close()  # type: ignore[union-attr]  # this test moves the mark by hand
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    assert catch_up(conn) == CATCH_UP_BATCH
    assert catch_up(conn) == 5 and catch_up(conn) == 0
    conn.execute("COMMIT")
    conn.close()
    store.close()
    _integrity(path)


def test_deleting_and_editing_messages_not_yet_indexed_keeps_the_index_sound(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SQLiteSessionStore(path) as store:
        sid = store.create_session()
        first, second = store.append_messages(sid, [{"role": "user", "content": "alpha kangaroo"}, {"role": "user", "content": "beta koala"}])
        store.conn.execute("UPDATE messages SET content = 'gamma emu' WHERE id = ?", (first,))
        store.conn.execute("DELETE FROM messages WHERE id = ?", (second,))
        assert [h.message_id for h in store.search("amma em")] == [first] and store.search("oala") == []
        _settled(store)
    _integrity(path)  # a 'delete' of a row the index never held would corrupt it
    assert _trigram_ids(path, "amma em") == [first] and _trigram_ids(path, "angaro") == []


def test_an_id_reused_below_the_mark_is_indexed_at_once(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SQLiteSessionStore(path) as store:
        sid = store.create_session()
        [old] = store.append_messages(sid, [{"role": "user", "content": "platypus"}])
    with SQLiteSessionStore(path) as store:  # closed and opened: the indexer catches up at a pause
        _settled(store)
        assert indexed_through(store.conn) == old
        store.conn.execute("DELETE FROM messages WHERE id = ?", (old,))
        [new] = store.append_messages(sid, [{"role": "user", "content": "echidna"}])
        assert new == old  # SQLite reuses the highest id once it is gone
        assert _trigram_ids(path, "chidn") == [new]  # at or below the mark: indexed by its trigger
    _integrity(path)


def test_a_writer_killed_mid_burst_loses_no_committed_message_and_the_index_catches_up(tmp_path: Path) -> None:
    db, ack = tmp_path / "state.db", tmp_path / "w.ack"
    SQLiteSessionStore(db).close()
    worker = subprocess.Popen([sys.executable, "-m", "tests.kernel.store._worker", str(db), "wk", "0", str(ack)], cwd=ROOT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not ack.exists() or len(ack.read_text().splitlines()) < 40):
        time.sleep(0.01)
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    acked = [int(line) for line in ack.read_text().splitlines() if line.strip().isdigit()]
    assert len(acked) >= 39
    assert check_database(db).fts_problems == []  # lagging rows are no drift
    with SQLiteSessionStore(db) as store:
        contents = {m["content"] for s in store.list_sessions() for m in store.get_messages(s["id"])}
        assert {f"wk-{i} concurrent worker message" for i in acked} <= contents
        last = max(acked)
        assert [h.snippet for h in store.search(f"k-{last} concurr")] != []  # found at once, indexed or not
        _settled(store)  # the next writer to open the file indexes the rest
    assert not has_lag(sqlite3.connect(db))
    _integrity(db)
    assert len(_trigram_ids(db, "current worker")) >= len(acked)


def test_a_file_from_before_the_lagging_index_counts_as_fully_indexed(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    apply_migrations(conn, stop_before="m009_substring_index_off_the_write_path")
    conn.execute("INSERT INTO sessions (id, source, started_at) VALUES ('s1', 'cli', 1)")
    conn.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s1', 'user', 'old dingo text', 1)")
    conn.close()
    with SQLiteSessionStore(path) as store:
        assert indexed_through(store.conn) == 1 and not has_lag(store.conn)
        [hit] = store.search("ingo tex")
        assert hit.message_id == 1
    _integrity(path)


def test_close_stops_the_indexer_even_when_its_wake_up_is_cleared_after_close_gave_it() -> None:
    import threading

    indexer = SubstringIndexer(lambda: False, delay_s=0.0)

    class LateClear(threading.Event):
        """Clears only once close() has set the stop and its own wake-up: the race, made certain."""

        def clear(self) -> None:
            if indexer._stop.wait(5):
                time.sleep(0.05)  # close() sets the wake-up right after the stop
            super().clear()

    indexer._wake = LateClear()
    indexer.request()
    closer = threading.Thread(target=indexer.close, daemon=True)
    time.sleep(0.05)  # the thread is past its gathering wait, inside clear()
    closer.start()
    closer.join(5)
    assert not closer.is_alive()  # close() returned: the thread saw the stop
