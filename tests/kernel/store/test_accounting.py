"""Usage accounting: tokens by bucket, API calls, compressions and cost with an honest status."""

from __future__ import annotations

import pytest

from hermes.kernel import CanonicalUsage, CostResult
from hermes.kernel.store import SessionNotFoundError, SessionStore, combine_cost_status


def test_usage_accumulates_by_bucket(store: SessionStore) -> None:
    sid = store.create_session()
    store.record_usage(sid, CanonicalUsage(100, 20, 300, 40, 5, 1), CostResult(0.01, "actual"))
    store.record_usage(sid, CanonicalUsage(1, 2, 3, 4, 5, 0), CostResult(0.002, "estimated"))
    row = store.get_session(sid)
    assert (row["input_tokens"], row["output_tokens"], row["cache_read_tokens"]) == (101, 22, 303)
    assert (row["cache_write_tokens"], row["reasoning_tokens"]) == (44, 10)
    assert row["api_call_count"] == 2  # a response without a request count is still one call
    assert row["estimated_cost_usd"] == pytest.approx(0.012)
    assert row["cost_status"] == "estimated"
    usage = store.usage(sid)
    assert usage.cost == CostResult(0.012, "estimated")
    assert usage.as_dict()["tokens"]["total_tokens"] == 101 + 22 + 303 + 44


def test_an_unknown_part_makes_the_total_unknown(store: SessionStore) -> None:
    sid = store.create_session()
    store.record_usage(sid, CanonicalUsage(10, 1, request_count=1), CostResult(0.5, "actual"))
    store.record_usage(sid, CanonicalUsage(10, 1, request_count=1), CostResult(None, "unknown"))
    usage = store.usage(sid)
    assert usage.cost_status == "unknown" and usage.cost == CostResult(None, "unknown")
    assert usage.known_cost_usd == pytest.approx(0.5)  # still shown as a lower bound


def test_totals_over_sessions_and_errors(store: SessionStore) -> None:
    a, b, idle = store.create_session(), store.create_session(), store.create_session()
    store.record_usage(a, CanonicalUsage(1, 1, request_count=1), CostResult(0.0, "included"))
    store.record_usage(b, CanonicalUsage(2, 2, request_count=3), CostResult(1.0, "actual"))
    total = store.usage()
    assert total.sessions == 3 and total.api_calls == 4 and total.usage.input_tokens == 3
    assert total.cost_status == "actual"  # the idle session says nothing about cost
    assert store.usage(idle).cost is None and store.usage(idle).as_dict()["cost_usd"] == 0.0
    with pytest.raises(SessionNotFoundError):
        store.usage("nope")
    with pytest.raises(SessionNotFoundError):
        store.record_usage("nope", CanonicalUsage())


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [(None, "actual", "actual"), ("included", "actual", "actual"), ("actual", "estimated", "estimated"),
     ("estimated", "unknown", "unknown"), ("unknown", "included", "unknown"), ("included", None, "included")],
)  # fmt: skip
def test_combine_cost_status(a: str | None, b: str | None, expected: str) -> None:
    assert combine_cost_status(a, b) == expected
