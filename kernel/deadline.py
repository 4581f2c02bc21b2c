"""Run a function with a deadline on a reusable daemon thread, abandoning it when late.

A hook listener that hangs must not hang the agent: the caller waits at most
``timeout`` seconds and goes on. Python cannot stop a thread, so a late call
keeps its (daemon) thread until it returns by itself; that thread is never
reused and never keeps the process alive at exit. Threads that came back in
time are reused, so the common case costs one hand-off, not a thread start.

A function that runs several pieces in a row (every listener of one hook) passes a
:class:`Progress` and marks the start of each piece: the deadline then applies to
each piece, and one hand-off serves them all.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["DeadlineExceeded", "Progress", "call_with_deadline"]


class DeadlineExceeded(TimeoutError):
    """The function did not return within its deadline (it may still be running)."""


class Progress:
    """Which piece of a sequence the worker is in, since when, and the state it carries into it.

    Once the caller gave up (:meth:`abandon`), :meth:`mark` returns False and the worker
    must stop: nothing it does afterwards may count.
    """

    __slots__ = ("_lock", "cancelled", "index", "since", "state")

    def __init__(self, state: Any = None) -> None:
        self._lock = threading.Lock()
        self.cancelled = False
        self.index = 0
        self.since = time.monotonic()
        self.state = state

    def mark(self, index: int, state: Any) -> bool:
        """The worker starts piece ``index`` with ``state``; False when the caller has given up."""
        with self._lock:
            if self.cancelled:
                return False
            self.index, self.state, self.since = index, state, time.monotonic()
            return True

    def abandon(self) -> tuple[int, Any]:
        """Give up on the worker; returns the piece it was in and the state it started that piece with."""
        with self._lock:
            self.cancelled = True
            return self.index, self.state


class _Worker:
    """One daemon thread that runs the jobs it is handed, one at a time."""

    def __init__(self) -> None:
        self._job = threading.Condition()
        self._task: tuple[Callable[..., Any], Sequence[Any]] | None = None
        self._abandoned = False
        threading.Thread(target=self._loop, name="hermes-hook", daemon=True).start()

    def _loop(self) -> None:
        while True:
            with self._job:
                while self._task is None:
                    self._job.wait()
                func, args = self._task
                self._task = None
            outcome = self._outcome
            try:
                outcome.append((True, func(*args)))
            except BaseException as exc:  # handed to the waiting caller as is
                outcome.append((False, exc))
            finally:
                self._done.set()
                if self._abandoned:
                    return  # the caller gave up on this thread: it is not reused

    def run(self, func: Callable[..., Any], args: Sequence[Any], timeout: float, progress: Progress | None) -> Any:
        self._outcome: list[tuple[bool, Any]] = []
        self._done = threading.Event()
        started = time.monotonic()
        with self._job:
            self._task = (func, args)
            self._job.notify()
        while not self._done.wait(max(0.0, (progress.since if progress else started) + timeout - time.monotonic())):
            if (progress.since if progress else started) + timeout <= time.monotonic():
                self._abandoned = True
                if progress is not None:
                    progress.abandon()
                if not self._done.is_set():
                    raise DeadlineExceeded(f"no answer within {timeout:g} s")
                break
        ok, value = self._outcome[0]
        if not ok:
            raise value
        return value


_idle: list[_Worker] = []
_idle_lock = threading.Lock()
_MAX_IDLE = 8


def call_with_deadline(func: Callable[..., Any], args: Sequence[Any], timeout: float, *,
                       progress: Progress | None = None) -> Any:  # fmt: skip
    """``func(*args)`` if it returns within ``timeout`` seconds; else :class:`DeadlineExceeded`.

    With ``progress``, the ``timeout`` counts from the latest :meth:`Progress.mark`.
    What ``func`` raises is raised here. A late call is abandoned, still running.
    """
    with _idle_lock:
        worker = _idle.pop() if _idle else None
    if worker is None:
        worker = _Worker()
    try:
        return worker.run(func, args, timeout, progress)
    finally:
        if not worker._abandoned:
            with _idle_lock:
                if len(_idle) < _MAX_IDLE:
                    _idle.append(worker)
