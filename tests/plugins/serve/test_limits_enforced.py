"""Limits that hold: a key's own 0, the UTC day boundary, and the meter every model call goes through."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from hermes.kernel.config import DEFAULTS, Config
from hermes.kernel.home import HermesHome
from hermes.plugins.serve.settings import ServeSettings
from hermes.plugins.serve.keys import ApiKey
from hermes.plugins.serve.limits import KeyLimits, LimitExceeded, MeteredClient, MeterSlot, SpendRefused, usd
from hermes.kernel.usage import CostResult


def settings(tmp_path: Path, **serve) -> ServeSettings:
    return ServeSettings.from_config(Config({**DEFAULTS, "serve": {**DEFAULTS["serve"], **serve}}), HermesHome(tmp_path, "default"))


def key(name: str, rpm: int | None = None, cost: float | None = None) -> ApiKey:
    return ApiKey(name, "ab" * 32, "hk-xxxxx", 0.0, rpm, cost)


class Clock:
    def __init__(self, when: datetime) -> None:
        self.now = when.timestamp()

    def __call__(self) -> float:
        return self.now


def test_a_keys_own_zero_means_unlimited_and_never_falls_back_to_the_default(tmp_path: Path) -> None:
    limits = KeyLimits(settings(tmp_path, requests_per_minute=2, cost_per_day=0.001))
    own_zero = key("zero", rpm=0, cost=0.0)
    for second in range(10):
        limits.check(own_zero, now=float(second))
    limits.add_cost(own_zero, 5.0)
    limits.check(own_zero, now=20.0)  # $5 spent, its own limit is 0: unlimited
    defaulted = key("default")  # sets none: the serve.* defaults apply
    limits.check(defaulted, now=0.0)
    limits.check(defaulted, now=1.0)
    with pytest.raises(LimitExceeded, match="limited to 2 requests a minute"):
        limits.check(defaulted, now=2.0)
    limits.add_cost(defaulted, 0.001)
    with pytest.raises(LimitExceeded, match="its limit is"):
        limits.check(defaulted, now=100.0)


def test_the_daily_cost_window_resets_when_the_clock_passes_midnight_utc(tmp_path: Path) -> None:
    clock = Clock(datetime(2026, 3, 1, 23, 59, 50, tzinfo=timezone.utc))
    limits = KeyLimits(settings(tmp_path), clock=clock)
    thrifty = key("thrifty", cost=0.002)
    limits.add_cost(thrifty, 0.0025)
    with pytest.raises(LimitExceeded) as broke:
        limits.check(thrifty, now=0.0)
    assert broke.value.status == 429 and broke.value.code == "cost_limit_exceeded"
    assert broke.value.retry_after == 10  # seconds to 00:00 UTC
    assert "has spent $0.0025 today, its limit is $0.002 a day; it resets at 00:00 UTC" in broke.value.message
    clock.now += 11  # 00:00:01 the next day
    assert limits.spent(thrifty) == 0.0
    limits.check(thrifty, now=1.0)
    limits.add_cost(thrifty, 0.001)
    assert limits.spent(thrifty) == pytest.approx(0.001)  # the new day counts from zero, not from yesterday's
    limits.check(thrifty, now=2.0)


def test_dollar_amounts_keep_the_digits_they_need() -> None:
    assert [usd(v) for v in (5, 0.5, 0.01, 0.125, 0.002, 0.0015, 0.000015, 0, 1e-9)] == [
        "$5.00", "$0.50", "$0.01", "$0.125", "$0.002", "$0.0015", "$0.000015", "$0.00", "$1.0e-09"]  # fmt: skip


class FakeClient:
    name = "fake"
    base_url = "http://x"

    def __init__(self, cost: float) -> None:
        self.cost = cost
        self.calls = 0

    def _response(self):  # type: ignore[no-untyped-def]
        from hermes.kernel.providers.base import ModelResponse
        from hermes.kernel.usage import CanonicalUsage

        self.calls += 1
        return ModelResponse(message={"content": "ok"}, finish_reason="stop", usage=CanonicalUsage(request_count=1),
                             cost=CostResult(self.cost, "actual"))  # fmt: skip

    def complete(self, request, *, lease=None):  # type: ignore[no-untyped-def]
        return self._response()

    def stream(self, request, *, lease=None):  # type: ignore[no-untyped-def]
        from hermes.kernel.providers.base import StreamDelta

        yield StreamDelta(text="o")
        yield self._response()


def test_every_model_call_asks_the_meter_first_and_charges_what_it_cost(tmp_path: Path) -> None:
    limits = KeyLimits(settings(tmp_path))
    thrifty = key("thrifty", cost=0.0025)
    slot = MeterSlot()
    inner = FakeClient(cost=0.001)
    client = MeteredClient(inner, slot)
    assert client.name == "fake" and client.base_url == "http://x"  # everything else is the wrapped client's
    client.complete(None)  # no turn bound: nothing checked, nothing charged
    assert limits.spent(thrifty) == 0.0
    meter = slot.meter = limits.meter(thrifty)
    client.complete(None)
    list(client.stream(None))
    assert limits.spent(thrifty) == pytest.approx(0.002)
    client.complete(None)  # 0.002 < 0.0025: allowed, and this one crosses the limit
    with pytest.raises(SpendRefused) as refused:
        list(client.stream(None))
    assert inner.calls == 4 and "its limit is $0.0025 a day" in str(refused.value)
    assert not refused.value.retryable and not refused.value.should_fallback and not refused.value.should_rotate_credential
    assert meter.refused is not None and meter.refused.code == "cost_limit_exceeded"
    meter.settle(0.003)  # the store accounted what the calls charged: nothing more
    assert limits.spent(thrifty) == pytest.approx(0.003)
    meter.settle(1.0)  # settled once only
    assert limits.spent(thrifty) == pytest.approx(0.003)


def test_settling_charges_what_the_store_accounted_beyond_the_calls(tmp_path: Path) -> None:
    limits = KeyLimits(settings(tmp_path))
    someone = key("someone")
    meter = limits.meter(someone)
    meter.after_call(CostResult(0.001, "actual"))
    meter.after_call(CostResult(None, "unknown"))
    meter.settle(0.004)
    assert limits.spent(someone) == pytest.approx(0.004)


def test_summary_and_title_calls_go_through_the_meter_too(tmp_path: Path) -> None:
    """Compression summaries and titles use the engine's summarizer, built on the agent's (metered) routes."""
    from hermes.kernel.agent.calling import ModelRoute
    from hermes.kernel.agent.summarizer import make_summarizer
    from hermes.kernel.providers.errors import ProviderError

    limits = KeyLimits(settings(tmp_path))
    thrifty = key("thrifty", cost=0.0015)
    slot = MeterSlot()
    slot.meter = limits.meter(thrifty)
    inner = FakeClient(cost=0.001)
    summarize = make_summarizer([ModelRoute(MeteredClient(inner, slot), "m")], 8000)
    assert summarize("system", "summarize this", 100) == "ok"
    assert summarize("system", "and this", 100) == "ok"  # 0.001 < 0.0015: allowed; it crosses the limit
    with pytest.raises(ProviderError, match="its limit is \\$0.0015 a day"):
        summarize("system", "once more", 100)
    assert inner.calls == 2 and limits.spent(thrifty) == pytest.approx(0.002)


def test_a_stream_cut_off_before_its_usage_is_charged_what_the_model_cost_lately(tmp_path: Path) -> None:
    limits = KeyLimits(settings(tmp_path))
    someone = key("someone")
    slot = MeterSlot()
    slot.meter = limits.meter(someone)
    client = MeteredClient(FakeClient(cost=0.003), slot)

    class Request:
        model = "m"

    list(client.stream(Request()))  # one whole call: 0.003 reported
    stream = client.stream(Request())
    next(stream)  # the first delta, then the caller abandons it (interrupted)
    stream.close()
    assert limits.spent(someone) == pytest.approx(0.006)
