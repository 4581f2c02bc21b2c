"""Session-level operations with exact results: the messages a user reads, boundaries and defaults."""

from __future__ import annotations

import time

import pytest

from hermes.kernel import CanonicalUsage
from hermes.kernel.errors import HermesError
from hermes.kernel.store import SessionNotFoundError, SessionStore

_NOT_FOUND = "no session 'ghost'; see `hermes sessions list`"


def test_missing_sessions_are_named_in_the_error(store: SessionStore) -> None:
    for call in (
        lambda: store.resolve_session_id("ghost"),
        lambda: store.end_session("ghost", "user_exit"),
        lambda: store.set_title("ghost", "A title"),
        lambda: store.record_usage("ghost", CanonicalUsage(1)),
    ):
        with pytest.raises(SessionNotFoundError) as info:
            call()
        assert str(info.value) == _NOT_FOUND


def test_an_exact_id_wins_over_a_longer_id_it_prefixes(store: SessionStore) -> None:
    store.create_session(session_id="s1")
    store.create_session(session_id="s12")
    assert store.resolve_session_id("s1") == "s1"
    with pytest.raises(HermesError) as info:
        store.resolve_session_id("s")
    assert str(info.value) == "session id prefix 's' is ambiguous; give more characters"
    assert store.resolve_session_id("s12") == "s12"


def test_list_sessions_defaults_to_the_newest_50(store: SessionStore) -> None:
    ids = [store.create_session(session_id=f"s{i:03}") for i in range(51)]
    listed = [s["id"] for s in store.list_sessions()]
    assert len(listed) == 50 and listed[0] == ids[-1] and ids[0] not in listed
    assert len(store.list_sessions(limit=None)) == 51


def test_record_usage_stamps_the_activity_time(store: SessionStore) -> None:
    sid = store.create_session()
    before = time.time()
    store.record_usage(sid, CanonicalUsage(1))
    updated = store.get_session(sid)["updated_at"]
    assert isinstance(updated, float) and before <= updated <= time.time()


def test_lineage_lists_children_with_title_and_start(store: SessionStore) -> None:
    parent = store.create_session(title="Parent")
    child = store.branch(parent, title="Child")
    row = store.get_session(child)
    assert store.lineage(parent)["children"] == [{"id": child, "title": "Child", "started_at": row["started_at"]}]


def _ended_at(store: SessionStore, sid: str, when: float) -> None:
    store.end_session(sid, "user_exit")
    store.conn.execute("UPDATE sessions SET ended_at = ?, updated_at = ? WHERE id = ?", (when, when, sid))


def test_prune_deletes_exactly_what_is_older_than_the_days_given(store: SessionStore) -> None:
    now = 1_000_000_000.0
    old, young = store.create_session(), store.create_session()
    _ended_at(store, old, now - 2 * 86400 - 1)  # one second past the cutoff
    _ended_at(store, young, now - 2 * 86400 + 1)  # one second short of it
    assert store.prune(2, now=now) == [old]
    assert store.get_session(young) is not None


def test_prune_rejects_negative_days(store: SessionStore) -> None:
    with pytest.raises(HermesError) as info:
        store.prune(-1)
    assert str(info.value) == "--older-than must be zero or more days"


def test_resume_and_delete_name_a_missing_session(store: SessionStore) -> None:
    for call in (lambda: store.resume("ghost"), lambda: store.delete_session("ghost")):
        with pytest.raises(SessionNotFoundError) as info:
            call()
        assert str(info.value) == _NOT_FOUND


def test_resume_returns_content_parts_as_stored(store: SessionStore) -> None:
    sid = store.create_session()
    parts = [{"type": "text", "text": "look"}, {"type": "text", "text": "here"}]
    store.append_messages(sid, [{"role": "user", "content": parts}, {"role": "assistant", "content": "ok"}])
    assert store.resume(sid).messages == [{"role": "user", "content": parts}, {"role": "assistant", "content": "ok"}]


def test_import_renumbers_a_taken_title_and_goes_on(store: SessionStore) -> None:
    # A title another session has is not a conflict (the target lacks the session): it gets the next number.
    store.create_session(title="Taken")
    result = store.import_sessions([
        ({"id": "a", "source": "cli", "started_at": 1.0, "title": "Taken"}, []),
        ({"id": "b", "source": "cli", "started_at": 2.0, "title": "Free"}, [{"role": "user", "content": "hi"}]),
        ({"id": "c", "source": "cli", "started_at": 3.0}, []),
    ])  # fmt: skip
    assert (result.imported, result.skipped, result.conflicts, result.renamed) == (["a", "b", "c"], [], [], {"a": "Taken #2"})
    assert store.get_session("a")["title"] == "Taken #2"
    assert (store.get_session("b")["title"], store.get_session("b")["message_count"]) == ("Free", 1)
