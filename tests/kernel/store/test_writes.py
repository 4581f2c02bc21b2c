"""Sessions and messages: ids, counts, exact round-trips, images never stored raw."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes.kernel.store import SessionNotFoundError, SessionStore, strip_images
from tests.helpers import examples

json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | st.text()
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
contents = st.none() | st.text() | st.lists(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text()}, optional={"cache_control": json_values}),
    max_size=4,
) | json_values


def test_session_ids_sort_by_time_and_carry_six_hex_digits(store: SessionStore) -> None:
    sid = store.create_session(source="api", model="gpt-x", system_prompt="You are terse.")
    assert re.fullmatch(r"\d{8}_\d{6}_[0-9a-f]{6}", sid)
    row = store.get_session(sid)
    assert row["source"] == "api" and row["model"] == "gpt-x" and row["system_prompt"] == "You are terse."
    assert row["message_count"] == 0 and row["ended_at"] is None


def test_messages_round_trip_with_every_column(store: SessionStore) -> None:
    sid = store.create_session()
    calls = [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}}]
    ids = store.append_messages(
        sid,
        [
            {"role": "user", "content": "hi", "timestamp": 100.5},
            {"role": "assistant", "content": None, "tool_calls": calls, "reasoning": "think", "finish_reason": "tool_calls", "token_count": 7},
            {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "print(1)"},
        ],
    )
    assert ids == sorted(ids) and len(ids) == 3
    messages = store.get_messages(sid)
    assert messages[0]["timestamp"] == 100.5
    assert messages[1]["tool_calls"] == calls and messages[1]["reasoning"] == "think"
    assert messages[1]["finish_reason"] == "tool_calls" and messages[1]["token_count"] == 7
    assert messages[2]["tool_name"] == "read_file" and messages[2]["tool_call_id"] == "c1"
    row = store.get_session(sid)
    assert row["message_count"] == 3 and row["tool_call_count"] == 1
    # Any iterable will do, a generator included.
    store.append_messages(sid, ({"role": "assistant", "content": None, "tool_calls": calls * 2} for _ in range(2)))
    assert store.get_session(sid)["tool_call_count"] == 5


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=contents, tool_calls=st.none() | st.lists(json_values, max_size=3))
def test_structured_content_round_trips_exactly(store: SessionStore, content: object, tool_calls: object) -> None:
    sid = store.create_session()
    store.append_message(sid, {"role": "user", "content": content, "tool_calls": tool_calls})
    [message] = store.get_messages(sid)
    assert message["content"] == content
    assert type(message["content"]) is type(content)
    assert message["tool_calls"] == tool_calls


def test_strings_sqlite_cannot_store_as_text_still_round_trip(store: SessionStore) -> None:
    sid = store.create_session()
    for text in ["lone \ud800 surrogate", "nul \x00 inside"]:
        store.append_message(sid, {"role": "user", "content": text})
    assert [m["content"] for m in store.get_messages(sid)] == ["lone \ud800 surrogate", "nul \x00 inside"]


def test_base64_images_are_replaced_by_a_description(store: SessionStore) -> None:
    payload = "iVBORw0KGgo" + "A" * 40_000
    sid = store.create_session()
    store.append_messages(
        sid,
        [
            {"role": "user", "content": [{"type": "text", "text": "what is this"},
                                         {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{payload}"}}]},
            {"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": payload}}]},
            {"role": "user", "content": f"inline data:image/webp;base64,{payload} end"},
        ],
    )  # fmt: skip
    raw = store.conn.execute("SELECT group_concat(coalesce(content_parts, content), '') FROM messages").fetchone()[0]
    assert payload[:200] not in raw
    first, second, third = (m["content"] for m in store.get_messages(sid))
    assert first == [{"type": "text", "text": "what is this"}, {"type": "text", "text": "[image image/png, 29 KB, not stored]"}]
    assert second == [{"type": "text", "text": "[image image/jpeg, 29 KB, not stored]"}]
    assert third == "inline [image image/webp, 29 KB, not stored] end"
    # A URL to an image elsewhere is kept: it is not data.
    kept = [{"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}]
    assert strip_images(kept) == kept


def test_appending_to_an_unknown_session_fails_and_writes_nothing(store: SessionStore) -> None:
    with pytest.raises(SessionNotFoundError, match="no session 'nope'"):
        store.append_message("nope", {"role": "user", "content": "x"})
    assert store.conn.execute("SELECT count(*) FROM messages").fetchone()[0] == 0


def test_a_failed_batch_writes_none_of_its_messages(store: SessionStore) -> None:
    sid = store.create_session()
    with pytest.raises(KeyError):
        store.append_messages(sid, [{"role": "user", "content": "ok"}, {"content": "no role"}])
    assert store.get_messages(sid) == [] and store.get_session(sid)["message_count"] == 0


def test_end_session_records_reason_and_time(store: SessionStore) -> None:
    sid = store.create_session()
    store.end_session(sid, "user_exit")
    row = store.get_session(sid)
    assert row["end_reason"] == "user_exit" and row["ended_at"] >= row["started_at"]
    with pytest.raises(SessionNotFoundError):
        store.end_session("missing", "timeout")


def test_resolve_session_id_accepts_a_unique_prefix(store: SessionStore) -> None:
    a = store.create_session(session_id="20260101_000000_aaaaaa")
    store.create_session(session_id="20260101_000000_aaaabb")
    assert store.resolve_session_id(a) == a
    assert store.resolve_session_id("20260101_000000_aaaaa") == a
    with pytest.raises(Exception, match="ambiguous"):
        store.resolve_session_id("20260101_000000_aaaa")
    with pytest.raises(SessionNotFoundError):
        store.resolve_session_id("2099")


def test_delete_and_prune(store: SessionStore, tmp_path: Path) -> None:
    old = store.create_session(title="Old")
    store.append_message(old, {"role": "user", "content": "ancient words"})
    child = store.compression_child(old, [{"role": "user", "content": "summary"}])
    recent = store.create_session()
    store.conn.execute("UPDATE sessions SET updated_at = 0, started_at = 0 WHERE id = ?", (old,))
    assert store.prune(30) == [old]
    assert store.get_session(old) is None and store.search("ancient") == []
    # The child survives and its lineage no longer points at a missing session.
    assert store.get_session(child)["parent_session_id"] is None
    store.delete_session(recent)
    assert store.get_session(recent) is None
    with pytest.raises(SessionNotFoundError):
        store.delete_session(recent)


def test_export_jsonl_and_markdown(store: SessionStore) -> None:
    import json

    sid = store.create_session(title="Export me")
    store.append_messages(sid, [{"role": "user", "content": [{"type": "text", "text": "parts"}]},
                                {"role": "assistant", "content": "answer"}])  # fmt: skip
    lines = [json.loads(line) for line in store.export(sid, "jsonl").splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["title"] == "Export me"
    assert [l["content"] for l in lines[1:]] == [[{"type": "text", "text": "parts"}], "answer"]
    markdown = store.export(sid, "markdown")
    assert markdown.startswith("# Export me\n") and "## assistant" in markdown and "answer" in markdown
    with pytest.raises(Exception, match="unknown export format 'xml'"):
        store.export(sid, "xml")
