"""What a failed summary call means, cooldowns, and the anti-thrashing switch.

* Every failed summary call rests the summary model: 60 s, then 600 s while
  failures repeat. While it rests, compression waits (the messages stay as
  they are) unless the window is about to overflow; then a plainly labelled
  mechanical fallback stands in for the summary.
* An auth or network failure of the call itself: the messages come back
  unchanged (a fallback would destroy context for a problem that may pass).
* Any other failure: the labelled fallback replaces the summary. With no
  summary model at all, the fallback is used and the model "rests" 600 s.
* Two compressions in a row that each save under 10% switch automatic
  compression off (with a warning) until ``/compress`` or ``/new``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Literal

__all__ = [
    "LOW_SAVINGS",
    "NO_MODEL_COOLDOWN",
    "OVERFLOW_SHARE",
    "REPEAT_COOLDOWN",
    "TRANSIENT_COOLDOWN",
    "CompressionGuard",
    "failure_action",
]

log = logging.getLogger(__name__)

TRANSIENT_COOLDOWN = 60.0
#: The rest after a second failure in a row (the seeds' figure).
REPEAT_COOLDOWN = 600.0
NO_MODEL_COOLDOWN = 600.0
#: Share of the window at which a resting summary model no longer defers compression.
OVERFLOW_SHARE = 0.95
LOW_SAVINGS = 0.10
_LOW_STREAK = 2
#: ProviderError reasons after which the messages come back unchanged.
_KEEP_REASONS = frozenset({"auth", "timeout", "server_error", "overloaded"})


def failure_action(error: BaseException) -> Literal["unchanged", "fallback"]:
    """``unchanged`` for auth and network failures, ``fallback`` for anything else."""
    reason = getattr(error, "reason", None)
    if reason in _KEEP_REASONS:
        return "unchanged"
    if reason is None and isinstance(error, (ConnectionError, TimeoutError)):
        return "unchanged"
    return "fallback"


class CompressionGuard:
    """Cooldown of the summary model and the low-savings streak of one conversation."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.cooldown_until = 0.0
        self.failures = 0  # failed summary calls in a row
        self.low_streak = 0
        self.auto_enabled = True
        self.warning: str | None = None

    def in_cooldown(self) -> bool:
        return self.clock() < self.cooldown_until

    def cooldown_left(self) -> float:
        return max(0.0, self.cooldown_until - self.clock())

    def start_cooldown(self, seconds: float) -> None:
        self.cooldown_until = max(self.cooldown_until, self.clock() + seconds)

    def failed(self) -> float:
        """A summary call failed: rest 60 s, or 600 s when the previous call failed too."""
        self.failures += 1
        seconds = TRANSIENT_COOLDOWN if self.failures == 1 else REPEAT_COOLDOWN
        self.start_cooldown(seconds)
        return seconds

    def succeeded(self) -> None:
        self.failures = 0

    def record(self, before: int, after: int) -> str | None:
        """Note one compression's savings; returns the warning when automatic compression switches off."""
        saved = (before - after) / before if before > 0 else 0.0
        self.low_streak = self.low_streak + 1 if saved < LOW_SAVINGS else 0
        if self.low_streak >= _LOW_STREAK and self.auto_enabled:
            self.auto_enabled = False
            self.warning = (
                f"the last {_LOW_STREAK} compressions each saved under {LOW_SAVINGS:.0%}; automatic compression "
                "is off until /compress or /new (start a new session or compress with a focus topic)"
            )
            log.warning("context compression: %s", self.warning)
            return self.warning
        return None

    def resume(self) -> None:
        """``/compress``: automatic compression back on, streak forgotten."""
        self.auto_enabled = True
        self.low_streak = 0
        self.warning = None

    def reset(self) -> None:
        """``/new``: everything forgotten, the cooldown included."""
        self.resume()
        self.cooldown_until = 0.0
        self.failures = 0
