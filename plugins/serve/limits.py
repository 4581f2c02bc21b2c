"""Per-key limits: requests per minute (sliding window) and cost per UTC day.

The request count is taken when a request is admitted. The cost limit is
checked again before every model call of a turn (tool steps, summaries,
titles): each turn carries a :class:`TurnMeter`, and the agent's model
clients are wrapped in a :class:`MeteredClient` that asks it first and charges
the call's cost as soon as the provider reports it. When the turn ends, however
it ends (a client that hung up included), the meter settles against what the
store accounted. So a key spends at most one call past its limit.

The counters live in the process. Behind a proxy with N processes a key can
use up to N times its limits; the docs say so (docs/serve.md).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from hermes.kernel.providers.errors import ProviderError
from .errors import RequestError
from .keys import ApiKey
from .settings import ServeSettings

__all__ = ["KeyLimits", "LimitError", "LimitExceeded", "MeteredClient", "SpendRefused", "TurnMeter", "usd"]

ANONYMOUS = "(no key)"


@dataclass
class LimitExceeded(Exception):
    """A key's limit is used up: ``status`` 429, the seconds until it frees, and the error code."""

    status: int
    code: str
    message: str
    retry_after: int

    def __str__(self) -> str:
        return self.message

    def as_request_error(self) -> RequestError:
        headers = {"retry-after": str(self.retry_after)}
        if self.code == "cost_limit_exceeded":
            headers["x-should-retry"] = "false"  # the openai SDKs honour it: retrying before midnight cannot help
        return LimitError(self.message, status=self.status, code=self.code, headers=headers)


class LimitError(RequestError):
    """The 429 of a limit in OpenAI's shape; a used-up day is ``insufficient_quota``, as OpenAI says it."""

    def body(self) -> dict[str, Any]:
        body = super().body()
        if self.code == "cost_limit_exceeded":
            body["error"]["type"] = "insufficient_quota"
        return body


def usd(amount: float) -> str:
    """A dollar amount with the digits it needs: $5.00, $0.002, $0.000015 (never "$0.00" for a real limit)."""
    if amount and abs(amount) < 1e-6:
        return f"${amount:.1e}"
    whole, _, cents = f"{amount:.6f}".rstrip("0").partition(".")
    return f"${whole}.{cents.ljust(2, '0')}"


def _wall_clock() -> float:
    return time.time()


class KeyLimits:
    """Counts requests and cost per key name; :meth:`check` raises LimitExceeded before a turn.

    ``clock`` gives the wall time (epoch seconds) that decides the UTC day;
    tests pass their own to move past midnight without sleeping.
    """

    def __init__(self, settings: ServeSettings, *, clock: Callable[[], float] = _wall_clock) -> None:
        self.settings = settings
        self.clock = clock
        self._lock = threading.Lock()
        self._requests: dict[str, deque[float]] = {}
        self._cost: dict[str, tuple[str, float]] = {}
        self._call_costs: dict[str, deque[float]] = {}  # recent reported costs per model, for calls cut off

    def note_call_cost(self, model: str, usd_amount: float) -> None:
        with self._lock:
            self._call_costs.setdefault(model, deque(maxlen=20)).append(usd_amount)

    def typical_call_cost(self, model: str) -> float:
        """What a call to ``model`` cost lately (the mean of the last 20); 0.0 before any reported one."""
        with self._lock:
            recent = self._call_costs.get(model)
            return sum(recent) / len(recent) if recent else 0.0

    def _today(self) -> str:
        return datetime.fromtimestamp(self.clock(), timezone.utc).strftime("%Y-%m-%d")

    def _seconds_to_midnight(self) -> int:
        now = self.clock()
        return max(1, math.ceil(86_400 - now % 86_400))

    def _limits(self, key: ApiKey | None) -> tuple[int, float]:
        """The key's own limits; None falls back to the ``serve.*`` default, 0 (unlimited) never does."""
        rpm = key.requests_per_minute if key is not None and key.requests_per_minute is not None else self.settings.requests_per_minute
        cost = key.cost_per_day if key is not None and key.cost_per_day is not None else self.settings.cost_per_day
        return rpm, cost

    def spent(self, key: ApiKey | None) -> float:
        """What ``key`` spent in the current UTC day."""
        name = key.name if key is not None else ANONYMOUS
        with self._lock:
            day, spent = self._cost.get(name, ("", 0.0))
            return spent if day == self._today() else 0.0

    def check_cost(self, key: ApiKey | None) -> None:
        """Raise when ``key`` has used up its day (the check before every model call)."""
        name = key.name if key is not None else ANONYMOUS
        cost_limit = self._limits(key)[1]
        if not cost_limit:
            return
        spent = self.spent(key)
        if spent >= cost_limit:
            raise LimitExceeded(
                429, "cost_limit_exceeded",
                f"key {name!r} has spent ${spent:.4f} today, its limit is {usd(cost_limit)} a day; "
                "it resets at 00:00 UTC", self._seconds_to_midnight(),
            )  # fmt: skip

    def check(self, key: ApiKey | None, now: float | None = None) -> None:
        """Count one request for ``key``, or raise when a limit is reached (the request is not counted)."""
        name = key.name if key is not None else ANONYMOUS
        rpm, _ = self._limits(key)
        now = time.monotonic() if now is None else now
        self.check_cost(key)
        with self._lock:
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

    def add_cost(self, key: ApiKey | None, usd_amount: float) -> None:
        name = key.name if key is not None else ANONYMOUS
        today = self._today()
        with self._lock:
            day, spent = self._cost.get(name, ("", 0.0))
            self._cost[name] = (today, (spent if day == today else 0.0) + max(usd_amount, 0.0))

    def meter(self, key: ApiKey | None) -> TurnMeter:
        return TurnMeter(self, key)


class SpendRefused(ProviderError):
    """A model call the key's limit does not allow: never retried, rotated or sent to a fallback."""

    def __init__(self, exceeded: LimitExceeded) -> None:
        super().__init__("billing", exceeded.message, retryable=False, should_fallback=False,
                         should_rotate_credential=False)  # fmt: skip
        self.exceeded = exceeded


class TurnMeter:
    """One turn's spending for one key: checked before each model call, charged after it.

    ``charged`` is what the calls reported (charged at once, so a turn running
    beside it sees it too); :meth:`settle` adds what the store accounted beyond
    that when the turn ends. ``refused`` is the limit that stopped the turn.
    """

    def __init__(self, limits: KeyLimits, key: ApiKey | None) -> None:
        self.limits = limits
        self.key = key
        self.charged = 0.0
        self.settled = False
        self.refused: LimitExceeded | None = None
        self._lock = threading.Lock()

    def before_call(self) -> None:
        try:
            self.limits.check_cost(self.key)
        except LimitExceeded as exc:
            self.refused = self.refused or exc
            raise SpendRefused(exc) from None

    def after_call(self, cost: Any, model: str = "") -> None:
        """Charge one call's cost (a ``CostResult`` or dollars; an unknown cost is nothing to charge)."""
        cost = getattr(cost, "amount_usd", cost)
        if cost:
            if model:
                self.limits.note_call_cost(model, cost)
            self._charge(cost)

    def cut_off(self, model: str) -> None:
        """A call stopped before the provider reported its usage (the client hung up mid-stream).

        The provider still bills what it generated until the abort, and the store
        never hears of it: charge what a call to that model cost lately, so hanging
        up after the first chunk, again and again, cannot spend without limit.
        """
        self._charge(self.limits.typical_call_cost(model))

    def _charge(self, cost: float) -> None:
        if cost:
            with self._lock:
                self.charged += cost
            self.limits.add_cost(self.key, cost)

    def settle(self, accounted: float) -> None:
        """Charge what the store accounted for the turn beyond what the calls already charged (once)."""
        with self._lock:
            if self.settled:
                return
            self.settled = True
            extra = max(accounted - self.charged, 0.0)
            self.charged += extra
        if extra:
            self.limits.add_cost(self.key, extra)


class MeterSlot:
    """The meter of the turn an agent is running now; its clients read it at every call."""

    def __init__(self) -> None:
        self.meter: TurnMeter | None = None
        self.interrupted: Callable[[], bool] = lambda: False  # the agent's flag, bound by the runner


class MeteredClient:
    """A model client that asks the current turn's meter before every call and charges after it.

    Passed to the agent in its routes (``build_agent(routes=...)``) and as its
    ``wrap_client`` for the clients the factory opens itself (auxiliary summary
    model, sub-agents' own model), so the loop, the summarizer, titles and
    sub-agents all go through it; everything else is the wrapped client's.
    """

    def __init__(self, client: Any, slot: MeterSlot) -> None:
        self._client = client
        self._slot = slot

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def complete(self, request: Any, *, lease: Any = None) -> Any:
        meter = self._slot.meter
        if meter is not None:
            meter.before_call()
        response = self._client.complete(request, lease=lease)
        if meter is not None:
            meter.after_call(getattr(response, "cost", None), getattr(request, "model", ""))
        return response

    def stream(self, request: Any, *, lease: Any = None) -> Iterator[Any]:
        meter = self._slot.meter
        if meter is not None:
            meter.before_call()
        answered = False
        try:
            for item in self._client.stream(request, lease=lease):
                if hasattr(item, "finish_reason") and hasattr(item, "usage"):  # the response, with its cost
                    answered = True
                    if meter is not None:
                        meter.after_call(getattr(item, "cost", None), getattr(request, "model", ""))
                yield item
        except GeneratorExit:  # abandoned mid-stream: the caller was interrupted
            if meter is not None and not answered:
                meter.cut_off(getattr(request, "model", ""))
            raise
        except Exception:
            if meter is not None and not answered and self._cut_short():
                meter.cut_off(getattr(request, "model", ""))
            raise

    def _cut_short(self) -> bool:
        """An error after an abort (the connection closed under the reader) is a cut-off, not a failure."""
        return bool(getattr(self._slot, "interrupted", lambda: False)())
