"""Connections and write transactions that several processes can share safely.

Measured on a store like this one (FIELD-NOTES.md): SQLite's own busy handler
lets a single append stall for seconds under four writers, and long busy
timeouts end in "database is locked". So:

* WAL, so readers never block the writer and the writer never blocks readers;
* writers take an exclusive ``flock`` on a side file first, queued fairly in
  the kernel (see :class:`WriteLock`) instead of in SQLite's sleep-and-poll
  busy handler;
* readers use their own connections (:class:`ReaderPool`), one per thread;
* then ``BEGIN IMMEDIATE`` with a short busy timeout, and on "locked"/"busy"
  a jittered retry (20-150 ms) until a deadline;
* a PASSIVE checkpoint every :data:`CHECKPOINT_EVERY` writes, made by a
  thread of its own (:class:`Checkpointer`) so that no append waits for its
  disk flush, and one on close; SQLite's automatic checkpoint, which runs
  inside a committing writer's lock, only as a safety net far beyond them;
* once the WAL holds :data:`WAL_RESTART_PAGES`, that thread finishes its
  checkpoint under the write lock (only the few pages written meanwhile are
  left to copy), so the next writer starts the WAL from its beginning: without
  it a busy writer never lets a concurrent checkpoint complete and the WAL
  grows until the safety net (41 MB in a single-writer burst). The file is
  then written over in place; ``journal_size_limit`` cuts back only a WAL a
  big import grew (cutting every restart back to 4 MiB made each commit at
  ``FULL`` extend the file again, measured 0.6 x as fast).

Write transactions must stay tiny; nothing here rewrites an index.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from ..errors import HermesError

__all__ = [
    "BUSY_TIMEOUT_MS",
    "CHECKPOINT_EVERY",
    "Checkpointer",
    "RETRY_DEADLINE_S",
    "ReaderPool",
    "StoreBusyError",
    "JOURNAL_SIZE_LIMIT_BYTES",
    "WAL_RESTART_PAGES",
    "WAL_SAFETY_NET_PAGES",
    "WriteLock",
    "connect",
    "make_private",
    "checkpoint",
    "connect_readonly",
    "is_busy_error",
    "with_retries",
]

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 50
RETRY_MIN_S, RETRY_MAX_S = 0.020, 0.150
RETRY_DEADLINE_S = 30.0
CHECKPOINT_EVERY = 50
WAL_SAFETY_NET_PAGES = 10_000  # SQLite's own checkpoint, inside COMMIT, only past this
WAL_RESTART_PAGES = 1_000  # the Checkpointer completes a checkpoint past this (SQLite's own default)
_UNLOCKED_PASSES, _LEFT_FOR_THE_LOCK = 4, 64  # see Checkpointer._complete
JOURNAL_SIZE_LIMIT_BYTES = 16 * 1024**2  # a restarted WAL larger than this (a big import) is cut back to it

T = TypeVar("T")


class StoreBusyError(HermesError):
    """The database stayed locked past the retry deadline."""


def is_busy_error(exc: BaseException) -> bool:
    """True for SQLite's "database is locked" / "busy" errors, which are worth retrying."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def with_retries(fn: Callable[[], T], *, deadline_s: float = RETRY_DEADLINE_S) -> T:
    """Call ``fn`` until it does not raise a busy error, sleeping 20-150 ms (jittered) between tries."""
    stop = time.monotonic() + deadline_s
    attempt = 0
    while True:
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            if not is_busy_error(exc):
                raise
            attempt += 1
            if time.monotonic() >= stop:
                raise StoreBusyError(
                    f"the session database stayed locked for {deadline_s:.0f} s ({attempt} tries); "
                    "another hermes process may be stuck"
                ) from exc
            # Jitter spreads contending processes apart instead of waking them together.
            time.sleep(random.uniform(RETRY_MIN_S, RETRY_MAX_S))


def make_private(path: Path | str) -> None:
    """Create the database file readable by its owner only, and tighten an older one (0644).

    SQLite gives the ``-wal`` and ``-shm`` files the mode of the database, so creating the
    database 0600 covers them; existing ones are tightened too. ``:memory:`` is left alone.
    """
    name = str(path)
    if name == ":memory:" or name.startswith("file:"):
        return
    # O_EXCL: never open (and close) a database file that exists. Closing any descriptor of a
    # file drops every POSIX lock this process holds on it, SQLite's too; without its shared
    # lock another process that closes believes it is the last, checkpoints and deletes the
    # WAL, and the commits this process then makes go to the deleted file and are lost.
    try:
        os.close(os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass
    except OSError:
        return  # unwritable: sqlite3 reports that properly
    for file in (name, name + "-wal", name + "-shm", name + "-journal"):
        try:
            if os.stat(file).st_mode & 0o077:
                os.chmod(file, 0o600)
        except OSError:
            continue


# Page cache of each reader connection, in KiB, and how much of the file it maps (see
# ReaderPool.get; SQLite caps the map at its build's limit, 2 GiB by default).
READER_CACHE_KIB = 32 * 1024
READER_MMAP_BYTES = 2 * 1024**3


def connect(path: Path | str, *, synchronous: str = "NORMAL") -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit) with the store's pragmas.

    WAL with ``synchronous=NORMAL`` keeps every committed transaction through a
    process crash (SIGKILL); pass ``FULL`` to survive power loss too.
    """
    if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
        raise ValueError(f"synchronous must be OFF, NORMAL, FULL or EXTRA, not {synchronous!r}")
    make_private(path)
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")  # sets the busy handler sqlite3's timeout= would
    conn.execute(f"PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT_BYTES}")
    try:
        # The first statement reads the schema, which waits for another process's exclusive
        # lock (a first start switching to WAL, recovery after a killed writer): retried, as writes are.
        with_retries(lambda: conn.execute(f"PRAGMA synchronous = {synchronous}"))
    except BaseException:
        conn.close()
        raise
    return conn


def connect_readonly(path: Path | str) -> sqlite3.Connection:
    """A read-only connection, for a home that cannot be written (no -shm/-wal can be created).

    ``mode=ro`` still needs the WAL index; when that cannot be created either,
    ``immutable=1`` reads the main file as it is (committed, checkpointed data).
    """
    from urllib.parse import quote

    def opened(flags: str) -> sqlite3.Connection:
        uri = f"file:{quote(str(Path(path).resolve()))}?{flags}"
        return sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)

    conn = opened("mode=ro")
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        conn.close()
    conn = opened("immutable=1")
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # a file SQLite cannot read fails here
    return conn


class WriteLock:
    """An exclusive ``flock`` on ``<db>.lock`` held for the length of one write transaction.

    Waiting is fair: a writer first takes ``<db>.lock-queue`` and holds it
    only while it waits for the write lock itself. So at most one process
    waits on ``<db>.lock``, and when the holder lets go that waiter gets it
    even if the holder asks again at once (a polled or plain blocking
    ``flock`` hands it back to the process that is already running). Both
    waits block in the kernel instead of polling. The kernel releases the
    locks when a holder dies, even by SIGKILL. Where ``fcntl`` is missing
    (Windows) it is a no-op and SQLite's locking alone applies.
    """

    def __init__(self, db_path: Path | str, *, deadline_s: float = RETRY_DEADLINE_S) -> None:
        self.path = Path(str(db_path) + ".lock")
        self.queue_path = Path(str(db_path) + ".lock-queue")
        self.deadline_s = deadline_s
        self._fds: tuple[int, int] | None = None
        self._depth = 0

    def _open(self) -> tuple[int, int] | None:
        if self._fds is None:
            try:
                import fcntl  # noqa: F401
            except ImportError:  # pragma: no cover - not POSIX
                return None
            lock = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            queue = os.open(self.queue_path, os.O_RDWR | os.O_CREAT, 0o600)
            self._fds = (lock, queue)
        return self._fds

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Hold the lock (re-entrant within one WriteLock)."""
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        fds = self._open()
        if fds is not None:
            self._acquire(*fds)
        self._depth = 1
        try:
            yield
        finally:
            self._depth = 0
            if fds is not None:
                import fcntl

                fcntl.flock(fds[0], fcntl.LOCK_UN)

    def _acquire(self, lock: int, queue: int) -> None:
        import fcntl

        stop = time.monotonic() + self.deadline_s
        _flock_until(queue, stop, self.queue_path, self.deadline_s)
        try:
            _flock_until(lock, stop, self.path, self.deadline_s)
        finally:
            fcntl.flock(queue, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fds is not None:
            for fd in self._fds:
                os.close(fd)
            self._fds = None


def _flock_until(fd: int, stop: float, path: Path, deadline_s: float) -> None:
    """An exclusive flock on ``fd``, waiting in the kernel until ``stop`` (monotonic)."""
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    # A blocking flock cannot time out, so a helper thread makes the call and
    # this one waits for it with a deadline; if the deadline passes first, the
    # helper lets go of the lock as soon as it gets it.
    got = threading.Event()
    state = {"abandoned": False}
    guard = threading.Lock()
    # The helper's own descriptor of the same open file: once abandoned, the caller may close
    # fd (a store that failed to open does) and its number may name another file by then.
    own = os.dup(fd)

    def wait() -> None:
        try:
            fcntl.flock(own, fcntl.LOCK_EX)
            with guard:
                if state["abandoned"]:
                    fcntl.flock(own, fcntl.LOCK_UN)
                    return
                got.set()
        finally:
            os.close(own)

    threading.Thread(target=wait, name="hermes-store-lock", daemon=True).start()
    try:
        if got.wait(max(0.0, stop - time.monotonic())):
            return
    except BaseException:  # interrupted while waiting: never leave the lock to the helper
        with guard:
            state["abandoned"] = True
            if got.is_set():
                fcntl.flock(fd, fcntl.LOCK_UN)
        raise
    with guard:
        if got.is_set():
            return
        state["abandoned"] = True
    raise StoreBusyError(f"another process held {path} for {deadline_s:.0f} s; is a hermes process stopped or stuck?")


def checkpoint(conn: sqlite3.Connection) -> tuple[int, int]:
    """A PASSIVE checkpoint: copies what it can, never waits for readers or writers.

    Returns the pages the WAL holds and how many of them are in the file ((0, 0) when skipped)."""
    try:
        row = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    except sqlite3.OperationalError as exc:  # busy: another checkpointer; try next time
        log.debug("checkpoint skipped: %s", exc)
        return 0, 0
    return (max(0, int(row[1])), max(0, int(row[2]))) if row else (0, 0)


class Checkpointer:
    """PASSIVE checkpoints on a thread and connection of their own, off every write path.

    Measured on a 200,000-message file with 4 writers: a checkpoint takes
    50-160 ms (it flushes the database file), so the append that made it
    stalled that long. :meth:`request` only wakes the thread; requests made
    while one runs fold into the next. The thread starts at the first request,
    so a short-lived store never starts one.
    """

    def __init__(self, path: Path | str, *, synchronous: str = "NORMAL") -> None:
        self.path = path
        self.synchronous = synchronous
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()

    @property
    def open(self) -> bool:
        """False once :meth:`close` began: checkpoints are then the caller's to make."""
        return not self._stopping

    def request(self) -> None:
        with self._guard:
            if self._stopping:
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="hermes-store-checkpoint", daemon=True)
                self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        try:
            conn = connect(self.path, synchronous=self.synchronous)
        except sqlite3.Error as exc:  # the writer's own close-time checkpoint still runs
            log.debug("checkpoint thread could not connect: %s", exc)
            return
        lock = WriteLock(self.path)
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._stopping:
                    return
                pages, copied = checkpoint(conn)
                if pages >= WAL_RESTART_PAGES:
                    self._complete(conn, lock, pages - copied)
        finally:
            lock.close()
            conn.close()

    @staticmethod
    def _complete(conn: sqlite3.Connection, lock: WriteLock, left: int) -> None:
        """Copy the pages left, with writers held off for the last few only, so the checkpoint is complete.

        Each unlocked pass copies what was written during the one before, so the passes
        shorten; the lock is taken once few are left (copying 500 pages under it on a
        200,000-message file held 4 writers up for 50 ms)."""
        for _ in range(_UNLOCKED_PASSES):
            if left <= _LEFT_FOR_THE_LOCK:
                break
            pages, copied = checkpoint(conn)
            left = pages - copied
        if left > _LEFT_FOR_THE_LOCK:
            return  # the writers outpace the copying: the next request tries again
        try:
            with lock.held():
                checkpoint(conn)
        except HermesError as exc:  # the lock stayed busy: the next request tries again
            log.debug("checkpoint not completed: %s", exc)

    def close(self) -> None:
        """Stop the thread (after the checkpoint it is running, if any)."""
        with self._guard:
            self._stopping = True
            thread, self._thread = self._thread, None
        if thread is not None:
            self._wake.set()
            thread.join()


class ReaderPool:
    """One read-only connection per thread, so a long search never waits for, or blocks, a write.

    WAL lets these readers run beside the one writer connection.
    """

    def __init__(self, path: Path | str, *, synchronous: str = "NORMAL", readonly: bool = False) -> None:
        self.path = path
        self.synchronous = synchronous
        self.readonly = readonly  # a read-only home: connections that never create -wal/-shm
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._guard = threading.Lock()

    def get(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect_readonly(self.path) if self.readonly else connect(self.path, synchronous=self.synchronous)
            conn.execute("PRAGMA query_only = 1")
            # A search reads the word index's doclists and every match's column sizes; the
            # default 2 MiB cache drops them between searches on a large file (one-word
            # search on a million messages: 2.4 ms at 2 MiB, 1.5 ms at 32 MiB). Pages are
            # only taken as they are read, so a small file costs no more.
            conn.execute(f"PRAGMA cache_size = -{READER_CACHE_KIB}")
            # Pages the OS has cached are read in place instead of copied by a read() each
            # (search on a million messages: about a tenth faster). Readers only: a disk
            # error on a mapped page ends the process (SIGBUS) instead of raising, and
            # check_database and salvage, which meet damaged files, open their own connections.
            conn.execute(f"PRAGMA mmap_size = {READER_MMAP_BYTES}")
            self._local.conn = conn
            with self._guard:
                self._all.append(conn)
        return conn

    def close(self) -> None:
        with self._guard:
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()
