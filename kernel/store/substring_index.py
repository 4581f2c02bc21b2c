"""The substring (trigram) index, kept off the write path.

Measured (``python -m bench store``): maintaining ``messages_trigram`` inside
every append cost one writer at ``synchronous=FULL`` half its speed against a
words-only schema, and wrote most of each commit's WAL pages. So an append
leaves new messages out of it (the triggers of schema ``m009``), and an
indexer thread in each writing process adds them shortly after commit, up to
:data:`CATCH_UP_BATCH` rows per write transaction.

The invariant: every message with an id up to ``substring_index.indexed_through``
is in the index, none above it is. Search reads the few above it straight from
``messages`` (a substring scan over an id range), so a message is found the
moment its append returns. A writer killed before its batch loses nothing: its
rows are committed, search sees them, and the next writer to open the file
indexes them.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from typing import Any

from ..errors import HermesError
from .schema import INDEXED_THROUGH_SQL, has_trigram_index

__all__ = [
    "CATCH_UP_BATCH",
    "INDEX_DELAY_S",
    "SubstringIndexer",
    "catch_up",
    "finish_index",
    "has_lag",
    "index_batch",
    "indexed_through",
    "mark_rebuilt",
]

log = logging.getLogger(__name__)

#: Messages indexed per write transaction: bounds how long a batch holds the write lock.
CATCH_UP_BATCH = 200
#: How long the indexer lets appends gather before a batch: one extra commit per this many
#: seconds of writing, instead of the trigram work inside every append.
INDEX_DELAY_S = 0.2


def indexed_through(conn: sqlite3.Connection) -> int | None:
    """The id up to which the substring index holds every message; None when the file keeps
    the index inside each write (no ``substring_index`` table: a file older than ``m009``)."""
    try:
        row = conn.execute(INDEXED_THROUGH_SQL).fetchone()
    except sqlite3.OperationalError:
        return None
    return int(row[0]) if row else None


def has_lag(conn: sqlite3.Connection) -> bool:
    """True when some message is waiting for the substring index (a read: no lock needed)."""
    through = indexed_through(conn)
    if through is None or not has_trigram_index(conn):
        return False
    return conn.execute("SELECT 1 FROM messages WHERE id > ? LIMIT 1", (through,)).fetchone() is not None


def catch_up(conn: sqlite3.Connection, limit: int = CATCH_UP_BATCH) -> int:
    """Index up to ``limit`` of the messages waiting, oldest first; returns how many.

    The caller holds a write transaction, so the mark it reads is the one it moves.
    """
    through = indexed_through(conn)
    if through is None or not has_trigram_index(conn):
        return 0
    last, count = conn.execute(
        "SELECT max(id), count(*) FROM (SELECT id FROM messages WHERE id > ? ORDER BY id LIMIT ?)", (through, limit)
    ).fetchone()
    if not count:
        return 0
    conn.execute(
        "INSERT INTO messages_trigram(rowid, content, tool_name, tool_args) "
        "SELECT id, content, tool_name, tool_args FROM messages WHERE id > ? AND id <= ?",
        (through, last),
    )
    conn.execute("UPDATE substring_index SET indexed_through = ?", (last,))
    return int(count)


def index_batch(read: Callable[[Callable[[sqlite3.Connection], Any]], Any], write: Callable[..., Any]) -> bool:
    """One batch through a store's ``_read`` and ``_write``; True when a full batch ran (more may wait).

    The lag is read first, without the write lock, so a process whose messages
    another one already indexed never queues for the lock."""
    return bool(read(has_lag)) and write(catch_up) == CATCH_UP_BATCH


def finish_index(conn: sqlite3.Connection, write: Callable[..., Any]) -> None:
    """Every batch still waiting, on a closing store's own connection and ``_write``."""
    try:
        while has_lag(conn) and write(catch_up) == CATCH_UP_BATCH:
            pass
    except HermesError as exc:  # busy past the deadline: the next writer to open the file indexes them
        log.warning("substring index left behind on close: %s", exc)


def mark_rebuilt(conn: sqlite3.Connection) -> None:
    """Record that a ``'rebuild'`` of the substring index just put every message in it."""
    if indexed_through(conn) is not None:
        conn.execute("UPDATE substring_index SET indexed_through = (SELECT coalesce(max(id), 0) FROM messages)")


class SubstringIndexer:
    """Runs ``index_batch`` on a thread of its own a moment after writes ask it to.

    ``index_batch()`` indexes one batch in its own write transaction and returns
    True when more are waiting. Requests made while a batch runs fold into the
    next. The thread starts at the first request, so a store that never writes
    never starts one; :meth:`close` stops it after the batch it is running.
    """

    def __init__(self, index_batch: Callable[[], bool], *, delay_s: float = INDEX_DELAY_S) -> None:
        self._index_batch = index_batch
        self.delay_s = delay_s
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()

    def request(self) -> None:
        with self._guard:
            if self._stop.is_set():
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="hermes-store-substring-index", daemon=True)
                self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        # close() sets _stop before _wake, so a wake this clear() wipes out is seen at the loop's test.
        while not self._stop.is_set():
            self._wake.wait()
            if self._stop.wait(self.delay_s):  # let a burst gather; close() cuts the wait short
                return
            self._wake.clear()
            try:
                while self._index_batch() and not self._stop.is_set():
                    pass
            except Exception as exc:  # the rows stay committed and searchable; the next request retries
                log.warning("substring index batch failed: %s", exc)

    def close(self) -> None:
        """Stop the thread (after the batch it is running, if any)."""
        with self._guard:
            self._stop.set()
            thread, self._thread = self._thread, None
        if thread is not None:
            self._wake.set()
            thread.join()
