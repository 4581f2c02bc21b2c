"""The substring (trigram) index, kept off the write path.

Measured (``python -m bench store``): maintaining ``messages_trigram`` inside
every append cost one writer at ``synchronous=FULL`` half its speed against a
words-only schema, and wrote most of each commit's WAL pages. So an append
leaves new messages out of it (the triggers of schema ``m009``), and an
indexer thread in each writing process adds them when the writes pause
(:data:`INDEX_DELAY_S` without a new one) or once :data:`BUSY_LAG` wait, up to
:data:`CATCH_UP_BATCH` rows per write transaction. A closing store leaves fewer
than :data:`LEAVE_LAG` waiting rows to the next writer that opens the file
(measured: indexing them inside close cost a one-writer burst a quarter of its
speed); search reads them from the table meanwhile.

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
    "BUSY_LAG",
    "CATCH_UP_BATCH",
    "LEAVE_LAG",
    "INDEX_DELAY_S",
    "SubstringIndexer",
    "catch_up",
    "finish_index",
    "has_lag",
    "index_batch",
    "lag",
    "indexed_through",
    "mark_rebuilt",
]

log = logging.getLogger(__name__)

#: Messages indexed per write transaction: bounds how long a batch holds the write lock.
CATCH_UP_BATCH = 200
#: How long the indexer lets appends gather before a batch: one extra commit per this many
#: seconds of writing, instead of the trigram work inside every append.
INDEX_DELAY_S = 0.2
#: Messages waiting after which the indexer runs even while appends go on (bounds the table
#: scan search does for them).
BUSY_LAG = 1000
#: A closing store indexes what waits only from this many messages on; fewer are left to the
#: next writer (a substring search reads them from the table, a millisecond for a thousand).
LEAVE_LAG = 1000


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


def lag(conn: sqlite3.Connection) -> int:
    """About how many messages wait for the substring index (ids above the mark; a read)."""
    through = indexed_through(conn)
    if through is None or not has_trigram_index(conn):
        return 0
    newest = conn.execute("SELECT max(id) FROM messages").fetchone()[0]
    return max(0, int(newest or 0) - through)


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


def finish_index(conn: sqlite3.Connection, write: Callable[..., Any], *, leave: int = LEAVE_LAG) -> None:
    """On a closing store's own connection and ``_write``: every batch still waiting, when at
    least ``leave`` messages wait; fewer are left to the next writer."""
    if lag(conn) < leave:
        return
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
    """Runs ``index_batch`` on a thread of its own when the writes that ask for it pause.

    ``index_batch()`` indexes one batch in its own write transaction and returns
    True when more are waiting. The thread runs batches once ``delay_s`` passed
    without a request, or, while requests keep coming, once ``lag()`` reaches
    ``busy_lag``: a burst of appends is not interleaved with index transactions
    competing for the write lock. Requests made while a batch runs fold into the
    next. The thread starts at the first request, so a store that never writes
    never starts one; :meth:`close` stops it after the batch it is running.
    """

    def __init__(
        self,
        index_batch: Callable[[], bool],
        *,
        lag: Callable[[], int] = lambda: 0,
        delay_s: float = INDEX_DELAY_S,
        busy_lag: int = BUSY_LAG,
    ) -> None:
        self._index_batch = index_batch
        self._lag = lag
        self.delay_s = delay_s
        self.busy_lag = busy_lag
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()

    def request(self) -> None:
        if self._thread is None:  # the first request; after it, every append's call is two reads
            with self._guard:
                if self._stop.is_set():
                    return
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="hermes-store-substring-index", daemon=True)
                    self._thread.start()
        if not self._wake.is_set():
            self._wake.set()

    def _run(self) -> None:
        # close() sets _stop before _wake, so a wake this clear() wipes out is seen at the loop's test.
        while not self._stop.is_set():
            self._wake.wait()
            try:
                while True:  # a pause in the writes, or a lag worth a batch now
                    self._wake.clear()
                    if self._stop.wait(self.delay_s):  # close() cuts the wait short
                        return
                    if not self._wake.is_set() or self._lag() >= self.busy_lag:
                        break
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
