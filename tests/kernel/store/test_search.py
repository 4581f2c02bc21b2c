"""Search: any query is safe, words and substrings and CJK are found, filters, context, lineage roots."""

from __future__ import annotations

import sqlite3
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes.kernel.store import SessionStore, fts_query
from hermes.kernel.store.query import parse_query
from hermes.kernel.store.search import _fts_rows
from hermes.kernel.store.snippets import PLAIN_SNIPPET_CHARS, Highlighter, snippet_by
from tests.helpers import examples

NASTY = [
    '"', '""', "'", "(", ")", "((a", "a)", "AND", "OR", "NOT", "a AND", "OR b", "NEAR(a b)", "a NEAR/2 b",
    "-", "--", "-foo", "foo-bar", "a.b.c", "...", "*", "a*", "*a", "^a", "col:val", "content:x", "{a b}",
    "a + b", "\\", "%", "_", "\x00", "\n\t", "x" * 20_000, "word " * 5_000, "日本語", "中文搜索", "🙂",
]  # fmt: skip


def _seed(store: SessionStore) -> dict[str, str]:
    cli = store.create_session(source="cli", title="Auth work")
    api = store.create_session(source="api")
    store.append_messages(cli, [
        {"role": "user", "content": "Please refactor the auth-module in login.py"},
        {"role": "assistant", "content": "Refactoring now.", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "src/secret_vault.py"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "tool_name": "read_file", "content": "def login(): pass"},
        {"role": "assistant", "content": "The login flow now checks tokens."},
    ])  # fmt: skip
    store.append_messages(api, [
        {"role": "user", "content": "数据库连接池配置说明"},
        {"role": "assistant", "content": "The tokens are rotated hourly."},
    ])  # fmt: skip
    return {"cli": cli, "api": api}


@pytest.mark.parametrize("query", NASTY)
def test_nasty_queries_never_raise(store: SessionStore, store_without_trigram: SessionStore, query: str) -> None:
    _seed(store)
    _seed(store_without_trigram)
    for s in (store, store_without_trigram):
        assert isinstance(s.search(query), list)
        assert isinstance(s.search(query, sort="time", role="user", source="cli"), list)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=300) | st.text(alphabet='"()*-.:^+{}ANDORNT \\%_日本', max_size=60))
def test_any_text_is_a_valid_query(store: SessionStore, query: str) -> None:
    expression = fts_query(query)
    if expression is not None:
        # Straight to SQLite: the sanitised expression itself must parse.
        store.conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", (expression,)).fetchone()
    assert isinstance(store.search(query), list)


def test_words_hyphens_dots_and_tool_arguments(store: SessionStore) -> None:
    ids = _seed(store)
    assert [h.role for h in store.search("refactor auth-module")] == ["user"]
    assert store.search("login.py")[0].snippet == "Please refactor the auth-module in **login.py**"
    # Tool names and tool-call arguments are indexed too.
    assert [h.role for h in store.search("secret_vault")] == ["assistant"]
    assert {h.session_id for h in store.search("read_file")} == {ids["cli"]}
    # Operators are words, not syntax.
    assert store.search("login AND NOT") == []
    assert store.search("Refactor*")[0].session_id == ids["cli"]


@pytest.mark.parametrize("fixture", ["store", "store_without_trigram"])
def test_substrings_and_cjk_with_and_without_trigram(fixture: str, request: pytest.FixtureRequest) -> None:
    store = request.getfixturevalue(fixture)
    ids = _seed(store)
    assert [h.session_id for h in store.search("连接池")] == [ids["api"]]
    assert [h.session_id for h in store.search("配置")] == [ids["api"]]  # two characters: LIKE either way
    assert [h.session_id for h in store.search("factorin")] == [ids["cli"]]


def test_filters_sort_and_limit(store: SessionStore) -> None:
    ids = _seed(store)
    tokens = store.search("tokens")
    assert len(tokens) == 2
    assert [h.session_id for h in store.search("tokens", source="api")] == [ids["api"]]
    assert [h.session_id for h in store.search("tokens", session_id=ids["cli"])] == [ids["cli"]]
    assert store.search("tokens", role="user") == []
    newest_first = store.search("tokens", sort="time")
    assert [h.session_id for h in newest_first] == [ids["api"], ids["cli"]]
    assert len(store.search("tokens", limit=1)) == 1
    with pytest.raises(ValueError):
        store.search("tokens", sort="random")  # type: ignore[arg-type]


def test_hits_carry_one_message_of_context_either_side(store: SessionStore) -> None:
    _seed(store)
    [hit] = store.search("def login")
    assert hit.before["role"] == "assistant" and hit.before["content"] == "Refactoring now."
    assert hit.after["content"] == "The login flow now checks tokens."
    [first] = store.search("refactor auth-module")
    assert first.before is None


def test_hits_resolve_to_the_lineage_root(store: SessionStore) -> None:
    ids = _seed(store)
    current = ids["cli"]
    for n in range(4):  # compressed four times
        current = store.compression_child(current, [{"role": "user", "content": f"summary {n} of quasar work"}])
    hits = store.search("quasar")
    assert len(hits) == 4
    assert {h.root_session_id for h in hits} == {ids["cli"]}
    assert {h.root_title for h in hits} == {"Auth work"}
    assert hits[0].title.startswith("Auth work #")


def test_index_follows_updates_and_deletes(store: SessionStore) -> None:
    sid = store.create_session()
    [mid] = store.append_messages(sid, [{"role": "user", "content": "original zebra"}])
    store.conn.execute("UPDATE messages SET content = 'changed giraffe' WHERE id = ?", (mid,))
    assert store.search("zebra") == [] and len(store.search("giraffe")) == 1
    assert len(store.search("iraff")) == 1
    store.delete_session(sid)
    assert store.search("giraffe") == [] and store.search("iraff") == []
    store.conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")
    store.conn.execute("INSERT INTO messages_trigram(messages_trigram, rank) VALUES ('integrity-check', 1)")
    with pytest.raises(sqlite3.DatabaseError, match="malformed"):  # the check does detect drift
        store.conn.execute("INSERT INTO messages_fts(rowid, content) VALUES (999, 'ghost')")
        store.conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")


def test_rank_is_bm25_over_every_match(store: SessionStore) -> None:
    sid = store.create_session()
    best, *_ = store.append_messages(sid, [{"role": "user", "content": "ocelot ocelot ocelot"}] + [
        {"role": "user", "content": f"an ocelot among many other words number {i}"} for i in range(4)])  # fmt: skip
    assert store.search("ocelot")[0].message_id == best  # BM25, not recency
    assert store.search("ocelot", sort="time")[0].message_id == best + 4
    assert store.search("ocelot", role="user")[0].message_id == best  # same with the filtered (joined) query
    # The oldest match still wins on score, however many newer matches there are.
    store.append_messages(sid, [{"role": "user", "content": f"ocelot seen again, entry {i} of a long list"} for i in range(50)])
    assert store.search("ocelot", limit=1)[0].message_id == best


def test_a_deadline_interrupts_a_scan_and_plain_snippets_follow_it(store: SessionStore, store_without_trigram: SessionStore) -> None:
    for s in (store, store_without_trigram):
        sid = s.create_session()
        s.append_message(sid, {"role": "user", "content": "the xzqx marker is in the oldest message"})
        s.append_messages(sid, [{"role": "assistant", "content": f"filler number {i}"} for i in range(5_000)])
    # Two characters take the LIKE scan, newest first: SQLite stops it at the first progress
    # check, long before it reaches the oldest message.
    assert len(store_without_trigram.search("zq")) == 1
    assert store_without_trigram.search("zq", deadline=time.monotonic() - 1) == []
    # Hits already chosen when the deadline passes keep a plain start of their text.
    [hit] = store.search("marker", deadline=time.monotonic() + 600)
    assert hit.snippet == "the xzqx **marker** is in the oldest message"
    rows = _fts_rows(
        store.conn, "messages_fts", "marker", "", [], "time", 5, Highlighter(parse_query("marker")), deadline=time.monotonic() - 1
    )
    assert [r[6] for r in rows] == ["the xzqx marker is in the oldest message"]
    long = "marker " + "x" * 500
    assert snippet_by(Highlighter(parse_query("marker")), (None, long), time.monotonic() - 1) == long[:PLAIN_SNIPPET_CHARS] + "…"
