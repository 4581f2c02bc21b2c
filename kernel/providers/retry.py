"""Jittered exponential backoff that honours the provider's ``retry-after``."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from .errors import ProviderError

__all__ = ["RetryPolicy"]


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry one credential.

    ``max_attempts`` counts calls per key, so rotating to another key starts
    a fresh budget. A provider-requested wait longer than ``max_retry_after``
    is not slept through: the error is raised so the caller can fall back.
    """

    max_attempts: int = 3
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_retry_after: float = 60.0

    @classmethod
    def from_config(cls, section: Any) -> RetryPolicy:
        if not isinstance(section, dict):
            raise ConfigError("retries must be a mapping (max_attempts, base_delay, max_delay, max_retry_after)")
        try:
            policy = cls(
                max_attempts=int(section.get("max_attempts", cls.max_attempts)),
                base_delay=float(section.get("base_delay", cls.base_delay)),
                max_delay=float(section.get("max_delay", cls.max_delay)),
                max_retry_after=float(section.get("max_retry_after", cls.max_retry_after)),
            )
        except (TypeError, ValueError):
            raise ConfigError("retries.* must be numbers") from None
        if policy.max_attempts < 1 or policy.base_delay < 0 or policy.max_delay < 0:
            raise ConfigError("retries.max_attempts must be at least 1 and delays not negative")
        return policy

    def delay(self, attempt: int, error: ProviderError | None = None,
              rng: Callable[[], float] = random.random) -> float | None:
        """Seconds to wait before attempt ``attempt + 1``; None when the wait is too long.

        Full backoff is ``base_delay * 2**(attempt-1)`` capped at ``max_delay``,
        jittered into its upper half so concurrent clients spread out; a
        ``retry-after`` from the provider is a floor.
        """
        backoff = min(self.max_delay, self.base_delay * 2 ** max(0, attempt - 1))
        jittered = backoff * (0.5 + rng() / 2)
        if error is not None and error.retry_after is not None:
            if error.retry_after > self.max_retry_after:
                return None
            return max(error.retry_after, jittered)
        return jittered
