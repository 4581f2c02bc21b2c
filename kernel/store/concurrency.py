"""Connections and write transactions that several processes can share safely.

Measured on a store like this one (FIELD-NOTES.md): SQLite's own busy handler
lets a single append stall for seconds under four writers, and long busy
timeouts end in "database is locked". So:

* WAL, so readers never block the writer and the writer never blocks readers;
* writers take an exclusive ``flock`` on a side file first, which queues them
  fairly in the kernel instead of in SQLite's sleep-and-poll busy handler;
* then ``BEGIN IMMEDIATE`` with a short busy timeout, and on "locked"/"busy"
  a jittered retry (20-150 ms) until a deadline;
* a PASSIVE checkpoint every :data:`CHECKPOINT_EVERY` writes and on close,
  which never waits for readers or writers.

Write transactions must stay tiny; nothing here rewrites an index.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from ..errors import HermesError

__all__ = [
    "BUSY_TIMEOUT_MS",
    "CHECKPOINT_EVERY",
    "RETRY_DEADLINE_S",
    "StoreBusyError",
    "WriteLock",
    "connect",
    "connect_readonly",
    "is_busy_error",
    "with_retries",
]

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 50
RETRY_MIN_S, RETRY_MAX_S = 0.020, 0.150
RETRY_DEADLINE_S = 30.0
CHECKPOINT_EVERY = 50

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


def connect(path: Path | str, *, synchronous: str = "NORMAL") -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit) with the store's pragmas.

    WAL with ``synchronous=NORMAL`` keeps every committed transaction through a
    process crash (SIGKILL); pass ``FULL`` to survive power loss too.
    """
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute(f"PRAGMA synchronous = {synchronous}")
    return conn


def connect_readonly(path: Path | str) -> sqlite3.Connection:
    """A read-only connection, for a home that cannot be written (no -shm/-wal can be created).

    ``mode=ro`` still needs the WAL index; when that cannot be created either,
    ``immutable=1`` reads the main file as it is (committed, checkpointed data).
    """
    from urllib.parse import quote

    last: sqlite3.Error | None = None
    for flags in ("mode=ro", "immutable=1"):
        uri = f"file:{quote(str(Path(path).resolve()))}?{flags}"
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.OperationalError as exc:
            conn.close()
            last = exc
    assert last is not None
    raise last


class WriteLock:
    """An exclusive ``flock`` on ``<db>.lock`` held for the length of one write transaction.

    The kernel releases it when a holder dies, even by SIGKILL. Where ``fcntl``
    is missing (Windows) it is a no-op and SQLite's locking alone applies.
    """

    def __init__(self, db_path: Path | str, *, deadline_s: float = RETRY_DEADLINE_S) -> None:
        self.path = Path(str(db_path) + ".lock")
        self.deadline_s = deadline_s
        self._fd: int | None = None
        self._depth = 0

    def _open(self) -> int | None:
        if self._fd is None:
            try:
                import fcntl  # noqa: F401
            except ImportError:  # pragma: no cover - not POSIX
                return None
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        return self._fd

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
        fd = self._open()
        if fd is not None:
            self._acquire(fd)
        self._depth = 1
        try:
            yield
        finally:
            self._depth = 0
            if fd is not None:
                import fcntl

                fcntl.flock(fd, fcntl.LOCK_UN)

    def _acquire(self, fd: int) -> None:
        import fcntl

        stop = time.monotonic() + self.deadline_s
        delay = 0.0005
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= stop:
                    raise StoreBusyError(
                        f"another process held {self.path} for {self.deadline_s:.0f} s; "
                        "is a hermes process stopped or stuck?"
                    ) from None
                # Short, growing, jittered polls: holders keep it for about a millisecond.
                time.sleep(random.uniform(delay / 2, delay))
                delay = min(delay * 2, 0.010)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
