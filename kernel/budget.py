"""The iteration budget: how many model calls a conversation (and its sub-agents) may make."""

from __future__ import annotations

import threading

__all__ = ["IterationBudget"]


class IterationBudget:
    """A thread-safe counter of model calls, shared by a parent and its children.

    Every model call takes one unit with :meth:`consume`; when none is left
    the loop makes one grace call without tools, which does not count.
    """

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("an iteration budget needs a limit of at least 1")
        self._limit = limit
        self._used = 0
        self._lock = threading.Lock()

    def consume(self, units: int = 1) -> bool:
        """Take ``units`` if that many remain; False (and nothing taken) otherwise."""
        with self._lock:
            if self._used + units > self._limit:
                return False
            self._used += units
            return True

    def refund(self, units: int = 1) -> None:
        """Give back units taken for a call that never reached the model."""
        with self._lock:
            self._used = max(0, self._used - units)

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def used(self) -> int:
        with self._lock:
            return self._used

    @property
    def remaining(self) -> int:
        with self._lock:
            return self._limit - self._used

    @property
    def exhausted(self) -> bool:
        return self.remaining <= 0

    def child(self, limit: int) -> IterationBudget:
        """A budget for a sub-agent: at most ``limit`` calls, each also taken from this one."""
        return _ChildBudget(self, limit)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(used={self.used}, limit={self._limit})"


class _ChildBudget(IterationBudget):
    """Counts a child's own calls and draws every one from the parent's budget too."""

    def __init__(self, parent: IterationBudget, limit: int) -> None:
        super().__init__(limit)
        self.parent = parent

    def consume(self, units: int = 1) -> bool:
        with self._lock:
            if self._used + units > self._limit or not self.parent.consume(units):
                return False
            self._used += units
            return True

    def refund(self, units: int = 1) -> None:
        with self._lock:
            taken = min(units, self._used)
            self._used -= taken
        self.parent.refund(taken)
