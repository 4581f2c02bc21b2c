"""One background thread that runs memory jobs in the order they were queued."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["OrderedWorker"]

log = logging.getLogger(__name__)

_STOP = object()


class OrderedWorker:
    """Runs submitted jobs one at a time, first in first out, on a daemon thread.

    :meth:`submit` never blocks. A job that raises is logged and the next job
    runs. :meth:`drain` waits a bounded time for the queue to empty; a job
    that hangs is abandoned with its (daemon) thread, never waited on forever.
    """

    def __init__(self, name: str = "hermes-memory") -> None:
        self._name = name
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, job: Callable[[], None], label: str = "job") -> bool:
        """Queue ``job``; False when the worker is already shut down."""
        with self._lock:
            if self._closed:
                return False
            if self._thread is None:
                # Started on first use: a session that never syncs costs no thread.
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._queue.put((job, label))
        return True

    def wait_idle(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for every job queued so far; True if they all ran."""
        with self._lock:
            if self._closed or self._thread is None:
                return True
        barrier = threading.Event()
        if not self.submit(barrier.set, "barrier"):
            return True
        return barrier.wait(timeout)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            job, label = item
            try:
                job()
            except Exception as exc:  # one failing job never stops the ones after it
                log.warning("memory %s failed: %s: %s", label, type(exc).__name__, exc)
                log.debug("memory job failure", exc_info=exc)

    def drain(self, timeout: float) -> bool:
        """Stop accepting jobs, wait up to ``timeout`` s for queued ones; True if all finished."""
        with self._lock:
            self._closed = True
            thread = self._thread
            if thread is None:
                return True
            self._queue.put(_STOP)
        thread.join(max(0.0, timeout))
        if thread.is_alive():
            log.warning("memory jobs still running after %.1f s; leaving them behind", timeout)
            return False
        return True
