"""Real processes on one real file: concurrent appends and searches, and SIGKILL at random points."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel.store.concurrency import WAL_SAFETY_NET_PAGES, StoreBusyError, with_retries

ROOT = Path(__file__).resolve().parents[3]


def _spawn(db: Path, tag: str, count: int, ack: Path, search_every: int = 0) -> subprocess.Popen[str]:
    args = [sys.executable, "-m", "tests.kernel.store._worker", str(db), tag, str(count), str(ack)]
    if search_every:
        args += ["--search-every", str(search_every)]
    return subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _acked(ack: Path) -> tuple[str | None, list[int]]:
    session, seqs = None, []
    if not ack.exists():
        return None, []
    for line in ack.read_text(encoding="utf-8").splitlines():
        if line.startswith("session "):
            session = line.split()[1]
        elif line.strip().isdigit():
            seqs.append(int(line))
    return session, seqs


def test_four_processes_append_and_search_at_once(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    per_worker = 150
    workers = [_spawn(db, f"w{n}", per_worker, tmp_path / f"w{n}.ack", search_every=10) for n in range(5)]
    for proc in workers:
        out, err = proc.communicate(timeout=90)
        assert proc.returncode == 0, err
        assert "locked" not in err.lower()
    with SQLiteSessionStore(db) as store:
        sessions = {s["id"]: s for s in store.list_sessions(source="worker", limit=None)}
        assert len(sessions) == 5
        for n in range(5):
            sid, seqs = _acked(tmp_path / f"w{n}.ack")
            assert seqs == list(range(per_worker))
            contents = [m["content"] for m in store.get_messages(sid)]
            assert contents == [f"w{n}-{i} concurrent worker message" for i in range(per_worker)]
            assert sessions[sid]["message_count"] == per_worker
        assert len(store.search("concurrent worker", limit=1000)) == 5 * per_worker
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_sigkill_at_random_points_loses_no_committed_row(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    rng = random.Random(os.getpid())
    acks: list[tuple[str, Path]] = []
    for round_ in range(4):
        procs = []
        for n in range(3):
            tag = f"r{round_}w{n}"
            ack = tmp_path / f"{tag}.ack"
            procs.append(_spawn(db, tag, 0, ack))
            acks.append((tag, ack))
        if round_ == 0:
            # Likely kills a writer while it is still creating the schema.
            time.sleep(rng.uniform(0.05, 0.2))
        else:
            # Wait until every writer is committing (slow starts on a busy machine), then kill at random.
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not all(len(_acked(a)[1]) >= 5 for _, a in acks[-3:]):
                time.sleep(0.01)
            time.sleep(rng.uniform(0, 0.4))
        for proc in procs:
            time.sleep(rng.uniform(0, 0.05))
            proc.send_signal(signal.SIGKILL)
        for proc in procs:
            proc.wait(timeout=10)
            err = proc.stderr.read() if proc.stderr else ""
            assert proc.returncode == -signal.SIGKILL, err
            assert "Traceback" not in err
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")
    total_acked = 0
    for tag, ack in acks:
        sid, seqs = _acked(ack)
        if sid is None:
            continue
        stored = {
            row[0]
            for row in conn.execute("SELECT content FROM messages WHERE session_id = ?", (sid,))
        }
        for i in seqs:
            assert f"{tag}-{i} concurrent worker message" in stored, (tag, i)
        # At most the one message in flight at the kill was committed without an ack.
        assert len(stored) - len(seqs) in (0, 1)
        total_acked += len(seqs)
    assert total_acked > 50  # the writers did real work before they died
    conn.close()
    with SQLiteSessionStore(db) as store:  # and the store opens and writes again
        sid = store.create_session()
        store.append_message(sid, {"role": "user", "content": "after the crash"})
        assert store.search("after the crash")[0].session_id == sid


def test_retries_busy_errors_then_gives_up_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise sqlite3.OperationalError("database is locked")
        return "done"

    assert with_retries(flaky) == "done" and len(calls) == 3

    def always_locked() -> None:
        raise sqlite3.OperationalError("database is locked")

    with pytest.raises(StoreBusyError, match="stayed locked"):
        with_retries(always_locked, deadline_s=0.1)

    def other() -> None:
        raise sqlite3.OperationalError("no such table: x")

    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        with_retries(other)


def test_busy_retries_stop_at_their_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    # A fake clock that advances only by the sleeps: the time given up after is exactly what was waited.
    import hermes.kernel.store.concurrency as concurrency

    class Clock:
        now = 1000.0

        def monotonic(self) -> float:
            return self.now

        def sleep(self, seconds: float) -> None:
            self.now += seconds

    clock = Clock()
    monkeypatch.setattr(concurrency, "time", clock)

    def always_locked() -> None:
        raise sqlite3.OperationalError("database is locked")

    with pytest.raises(StoreBusyError, match="stayed locked for 2 s"):
        with_retries(always_locked, deadline_s=2.0)
    waited = clock.now - 1000.0
    assert 2.0 <= waited < 2.0 + concurrency.RETRY_MAX_S


def test_checkpoints_every_50_writes_and_on_close(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "state.db")
    checkpoints = []
    original = store._checkpoint
    store._checkpoint = lambda: (checkpoints.append(store._writes), original())  # type: ignore[method-assign]
    sid = store.create_session()
    for i in range(120):
        store.append_message(sid, {"role": "user", "content": str(i)})
    assert checkpoints == [50, 100]
    store.close()
    # 121 writes (the substring index's 120 waiting rows are left to the next writer, or
    # indexed by the indexer thread if the test paused long enough), then the last checkpoint.
    assert checkpoints[:2] == [50, 100] and len(checkpoints) == 3 and checkpoints[2] == store._writes >= 121


def test_a_reader_opening_later_keeps_the_writers_lock_so_no_other_process_deletes_its_wal(tmp_path: Path) -> None:
    # Opening and closing a plain descriptor on state.db drops every POSIX lock the process
    # holds on it. Another process closing its store then took itself for the last one,
    # checkpointed and deleted the WAL, and this process's next commit went to the deleted
    # file: invisible to everyone, and gone when the process died.
    db = tmp_path / "state.db"
    count = f"import sqlite3; print(sqlite3.connect({str(db)!r}).execute('SELECT count(*) FROM messages').fetchone()[0])"
    store = SQLiteSessionStore(db, checkpoint_every=0)
    sid = store.create_session()
    store.append_message(sid, {"role": "user", "content": "one"})
    store.get_messages(sid)  # this thread's reader connection opens now
    other = f"from hermes.kernel.store import SQLiteSessionStore; SQLiteSessionStore({str(db)!r}).close()"
    subprocess.run([sys.executable, "-c", other], cwd=ROOT, check=True, timeout=60)
    store.append_message(sid, {"role": "user", "content": "two"})
    seen = subprocess.run([sys.executable, "-c", count], capture_output=True, text=True, check=True, timeout=60)
    assert seen.stdout.strip() == "2"
    store.close()


def test_checkpoints_run_on_their_own_thread_and_stop_on_close(tmp_path: Path) -> None:
    def checkpoint_threads() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "hermes-store-checkpoint"]

    before = checkpoint_threads()
    store = SQLiteSessionStore(tmp_path / "state.db")
    sid = store.create_session()
    for i in range(48):
        store.append_message(sid, {"role": "user", "content": str(i)})
    assert checkpoint_threads() == before  # a short-lived store never starts one
    store.append_message(sid, {"role": "user", "content": "the 50th write"})
    started = [t for t in checkpoint_threads() if t not in before]
    assert len(started) == 1
    # SQLite's own checkpoint (inside COMMIT, under the write lock) is pushed far out.
    assert store.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == WAL_SAFETY_NET_PAGES
    store.close()
    assert not started[0].is_alive()
    with SQLiteSessionStore(tmp_path / "state.db") as again:
        assert len(again.get_messages(sid)) == 49


def test_opening_waits_for_another_process_exclusive_lock(tmp_path: Path) -> None:
    from hermes.kernel.store.concurrency import connect

    db = tmp_path / "state.db"
    SQLiteSessionStore(db).close()
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")  # what a first start or a recovery holds for a moment
    release = threading.Timer(0.3, lambda: (holder.execute("COMMIT"), holder.close()))
    release.start()
    try:
        conn = connect(db)  # failed at once with "database is locked" before
        assert conn.execute("SELECT count(*) FROM sessions").fetchone() == (0,)
        conn.close()
    finally:
        release.join()
