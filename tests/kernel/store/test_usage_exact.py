"""Usage as ``hermes usage --json`` shows it: exact keys and values, and how cost statuses combine."""

from __future__ import annotations

import pytest

from hermes.kernel import CanonicalUsage, CostResult
from hermes.kernel.store import SessionStore, combine_cost_status


def test_usage_as_dict_has_exact_keys_and_values(store: SessionStore) -> None:
    sid = store.create_session()
    store.record_usage(sid, CanonicalUsage(100, 20, 300, 40, 5, 2), CostResult(0.123456789012345, "actual"))
    assert store.usage(sid).as_dict() == {
        "session_id": sid,
        "sessions": 1,
        "tokens": {
            "input_tokens": 100, "output_tokens": 20, "cache_read_tokens": 300, "cache_write_tokens": 40,
            "reasoning_tokens": 5, "request_count": 2, "total_tokens": 460,
        },
        "api_calls": 2,
        "compressions": 0,
        "cost_usd": 0.1234567890,  # rounded to 10 places
        "known_cost_usd": 0.1234567890,
        "cost_status": "actual",
    }  # fmt: skip


def test_unknown_cost_shows_no_amount_but_keeps_the_known_part(store: SessionStore) -> None:
    sid = store.create_session()
    store.record_usage(sid, CanonicalUsage(1, 1, request_count=1), CostResult(0.1 + 0.2, "actual"))
    store.record_usage(sid, CanonicalUsage(1, 1, request_count=1))  # no cost: unknown
    data = store.usage(sid).as_dict()
    assert (data["cost_usd"], data["known_cost_usd"], data["cost_status"]) == (None, 0.3, "unknown")
    assert store.get_session(sid)["cost_status"] == "unknown"


def test_totals_have_no_session_id(store: SessionStore) -> None:
    store.create_session()
    data = store.usage().as_dict()
    assert (data["session_id"], data["sessions"], data["cost_usd"], data["cost_status"]) == (None, 1, 0.0, None)


def test_a_later_cheaper_status_does_not_hide_an_earlier_less_certain_one(store: SessionStore) -> None:
    sid = store.create_session()
    store.record_usage(sid, CanonicalUsage(1, request_count=1), CostResult(0.5, "estimated"))
    store.record_usage(sid, CanonicalUsage(1, request_count=1), CostResult(0.0, "included"))
    assert store.get_session(sid)["cost_status"] == "estimated"


def test_record_usage_without_cost_is_unknown_from_the_start(store: SessionStore) -> None:
    sid = store.create_session()
    store.record_usage(sid, CanonicalUsage(3, 4))
    row = store.get_session(sid)
    assert (row["cost_status"], row["estimated_cost_usd"], row["api_call_count"]) == ("unknown", 0.0, 1)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [("unknown", "mystery", "unknown"), ("mystery", "unknown", "mystery"), ("mystery", "actual", "mystery"),
     ("actual", "mystery", "mystery"), (None, None, None)],
)  # fmt: skip
def test_an_unrecognised_status_counts_as_unknown(a: str | None, b: str | None, expected: str | None) -> None:
    assert combine_cost_status(a, b) == expected
