"""Run a function with a deadline on a reusable daemon thread, abandoning it when late.

A hook listener that hangs must not hang the agent: the caller waits at most
``timeout`` seconds and goes on. Python cannot stop a thread, so a late call
keeps its (daemon) thread until it returns by itself; that thread is never
reused and never keeps the process alive at exit. Threads that came back in
time are reused, so the common case costs a hand-off, not a thread start.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["DeadlineExceeded", "call_with_deadline"]


class DeadlineExceeded(TimeoutError):
    """The function did not return within its deadline (it may still be running)."""


class _Worker:
    """One daemon thread that runs the jobs it is handed, one at a time."""

    def __init__(self) -> None:
        self._job = threading.Condition()
        self._task: tuple[Callable[..., Any], Sequence[Any]] | None = None
        thread = threading.Thread(target=self._loop, name="hermes-hook", daemon=True)
        thread.start()

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

    def run(self, func: Callable[..., Any], args: Sequence[Any], timeout: float) -> Any:
        self._outcome: list[tuple[bool, Any]] = []
        self._done = threading.Event()
        self._abandoned = False
        with self._job:
            self._task = (func, args)
            self._job.notify()
        if not self._done.wait(timeout):
            self._abandoned = True
            if not self._done.is_set():
                raise DeadlineExceeded(f"no answer within {timeout:g} s")
        ok, value = self._outcome[0]
        if not ok:
            raise value
        return value

    @property
    def reusable(self) -> bool:
        return not self._abandoned


_idle: list[_Worker] = []
_idle_lock = threading.Lock()
_MAX_IDLE = 8


def call_with_deadline(func: Callable[..., Any], args: Sequence[Any], timeout: float) -> Any:
    """``func(*args)`` if it returns within ``timeout`` seconds; else :class:`DeadlineExceeded`.

    What ``func`` raises is raised here. A late call is abandoned, still running.
    """
    with _idle_lock:
        worker = _idle.pop() if _idle else None
    if worker is None:
        worker = _Worker()
    try:
        return worker.run(func, args, timeout)
    finally:
        if worker.reusable:
            with _idle_lock:
                if len(_idle) < _MAX_IDLE:
                    _idle.append(worker)
