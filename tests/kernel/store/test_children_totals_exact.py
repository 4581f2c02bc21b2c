"""Branch and compression children, and usage totals over many sessions, with exact results."""

from __future__ import annotations

import pytest

from hermes.kernel import CanonicalUsage, CostResult
from hermes.kernel.store import SessionNotFoundError, SessionStore, TitleInUseError

_NOT_FOUND = "no session 'ghost'; see `hermes sessions list`"


def test_children_of_a_missing_session_and_its_usage_name_it(store: SessionStore) -> None:
    for call in (lambda: store.branch("ghost"), lambda: store.compression_child("ghost"), lambda: store.usage("ghost")):
        with pytest.raises(SessionNotFoundError) as info:
            call()
        assert str(info.value) == _NOT_FOUND


def test_a_child_cannot_take_a_title_in_use(store: SessionStore) -> None:
    taken = store.create_session(title="Taken")
    parent = store.create_session(title="Parent")
    with pytest.raises(TitleInUseError) as info:
        store.branch(parent, title="Taken")
    assert str(info.value) == f"title 'Taken' is already used by session {taken}"
    assert store.lineage(parent)["children"] == []


def test_only_compression_counts_as_a_compression(store: SessionStore) -> None:
    parent = store.create_session(title="Work")
    store.branch(parent)
    assert store.get_session(parent)["compression_count"] == 0
    child = store.compression_child(parent, [{"role": "user", "content": "s"}], title="Given name")
    assert store.get_session(parent)["compression_count"] == 1
    assert store.get_session(child)["title"] == "Given name"


def test_totals_sum_every_session_and_take_the_least_certain_status(store: SessionStore) -> None:
    a, b, idle = store.create_session(), store.create_session(), store.create_session()
    store.record_usage(a, CanonicalUsage(1, request_count=1), CostResult(0.5, "actual"))
    store.record_usage(b, CanonicalUsage(2, request_count=2), CostResult(0.25, "included"))
    total = store.usage()
    assert (total.sessions, total.api_calls, total.known_cost_usd, total.cost_status) == (3, 3, 0.75, "actual")
    assert store.usage(idle).known_cost_usd == 0.0


def test_a_status_without_api_calls_still_counts(store: SessionStore) -> None:
    # A copied session can carry a cost status with no API calls counted (older stores).
    store.record_usage(store.create_session(), CanonicalUsage(1, request_count=1), CostResult(0.5, "actual"))
    store.import_sessions([({"id": "old", "source": "cli", "started_at": 1.0, "cost_status": "estimated"}, [])])
    assert store.usage().cost_status == "estimated"
    assert store.usage("old").cost_status == "estimated"
