"""Per-key limits: requests per minute (sliding window) and cost per UTC day.

The counters live in the process. Behind a proxy with N processes a key can
use up to N times its limits; the docs say so (docs/serve.md).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timezone

from .keys import ApiKey
from .settings import ServeSettings

__all__ = ["KeyLimits", "LimitExceeded"]

ANONYMOUS = "(no key)"


@dataclass
class LimitExceeded(Exception):
    """A key's limit is used up: ``status`` 429 (rate) or 402 (cost), with the seconds until it frees."""

    status: int
    code: str
    message: str
    retry_after: int

    def __str__(self) -> str:
        return self.message


def _today() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d")


def _seconds_to_midnight() -> int:
    now = datetime.now(timezone.utc)
    return max(1, 86_400 - (now.hour * 3600 + now.minute * 60 + now.second))


class KeyLimits:
    """Counts requests and cost per key name; :meth:`check` raises LimitExceeded before a turn."""

    def __init__(self, settings: ServeSettings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._requests: dict[str, deque[float]] = {}
        self._cost: dict[str, tuple[str, float]] = {}

    def _limits(self, key: ApiKey | None) -> tuple[int, float]:
        rpm = key.requests_per_minute if key is not None and key.requests_per_minute is not None else self.settings.requests_per_minute
        cost = key.cost_per_day if key is not None and key.cost_per_day is not None else self.settings.cost_per_day
        return rpm, cost

    def check(self, key: ApiKey | None, now: float | None = None) -> None:
        """Count one request for ``key``, or raise when a limit is reached (the request is not counted)."""
        name = key.name if key is not None else ANONYMOUS
        rpm, cost_limit = self._limits(key)
        now = time.monotonic() if now is None else now
        with self._lock:
            day, spent = self._cost.get(name, ("", 0.0))
            if cost_limit and day == _today() and spent >= cost_limit:
                raise LimitExceeded(
                    402, "cost_limit_exceeded",
                    f"key {name!r} has spent ${spent:.4f} today, its limit is ${cost_limit:.2f} a day; "
                    "it resets at 00:00 UTC", _seconds_to_midnight(),
                )  # fmt: skip
            window = self._requests.setdefault(name, deque())
            while window and window[0] <= now - 60.0:
                window.popleft()
            if rpm and len(window) >= rpm:
                wait = max(1, math.ceil(window[0] + 60.0 - now))
                raise LimitExceeded(
                    429, "rate_limit_exceeded",
                    f"key {name!r} is limited to {rpm} requests a minute; retry after {wait} s", wait,
                )  # fmt: skip
            window.append(now)

    def add_cost(self, key: ApiKey | None, usd: float) -> None:
        name = key.name if key is not None else ANONYMOUS
        today = _today()
        with self._lock:
            day, spent = self._cost.get(name, ("", 0.0))
            self._cost[name] = (today, (spent if day == today else 0.0) + max(usd, 0.0))
