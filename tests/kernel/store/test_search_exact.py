"""Search, exactly: each backend's hits and snippets, the neighbours' fields, the defaults,
which errors are swallowed, and how many statements a search costs."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from hermes.kernel.store import SessionStore, fts_query
from hermes.kernel.store.query import parse_query
from hermes.kernel.store.search import _fts_rows, _run, build_hits, search_messages
from hermes.kernel.store.snippets import Highlighter


@contextmanager
def _statements(conn: sqlite3.Connection) -> Iterator[list[str]]:
    """The SQL statements ``conn`` runs inside the block (BEGIN/COMMIT left out)."""
    seen: list[str] = []
    conn.set_trace_callback(lambda sql: seen.append(sql) if sql.lstrip().upper().startswith(("SELECT", "WITH")) else None)
    try:
        yield seen
    finally:
        conn.set_trace_callback(None)


def _thread(store: SessionStore) -> tuple[str, list[int]]:
    """One session: a user request, a tool call without text, its result, a long answer."""
    sid = store.create_session(source="cli")
    ids = store.append_messages(sid, [
        {"role": "user", "content": "open the quokka notes"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "notes.md"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "tool_name": "read_file", "content": "zyxwvut body"},
        {"role": "assistant", "content": "wrapping " + "y" * 400},
    ])  # fmt: skip
    return sid, ids


def test_fts_query_is_the_quoted_expression() -> None:
    assert fts_query("login.py") == '"login.py"'
    assert fts_query("auth* OR (token NOT key)") == '"auth"* OR (("token") NOT ("key"))'
    assert fts_query(" ( ") is None


def test_run_swallows_only_query_errors(store: SessionStore) -> None:
    conn = store.conn
    # FTS5's own error without the word "syntax", and a syntax error without "fts5": no hits.
    conn.execute("CREATE VIRTUAL TABLE temp.bare USING fts5(x, detail=none)")
    conn.execute("INSERT INTO temp.bare VALUES ('a b')")
    with pytest.raises(sqlite3.OperationalError, match="^fts5: phrase queries are not supported"):
        conn.execute("SELECT rowid FROM bare WHERE bare MATCH ?", ['"a b"'])
    assert _run(conn, "SELECT rowid FROM bare WHERE bare MATCH ?", ['"a b"']) == []
    assert _run(conn, "SELEC 1", []) == []
    # Anything else is a real fault and reaches the caller.
    with pytest.raises(sqlite3.OperationalError, match="no such table: nowhere"):
        _run(conn, "SELECT 1 FROM nowhere", [])
    assert _run(conn, "SELECT ?", [7]) == [(7,)]


@pytest.mark.parametrize(
    ("fixture", "query"),
    [
        ("store", "zyxwvut"),  # a word: neighbours read with the hit
        ("store", "yxwvu"),  # a substring: trigram, neighbours in their own statement
        ("store_without_trigram", "yxwvu"),  # LIKE
        ("store", "xw"),  # two characters: LIKE on any store
    ],
)
def test_neighbours_are_exact_on_every_backend(fixture: str, query: str, request: pytest.FixtureRequest) -> None:
    store = request.getfixturevalue(fixture)
    _, ids = _thread(store)
    [hit] = store.search(query)
    assert hit.message_id == ids[2]
    assert hit.before == {"message_id": ids[1], "role": "assistant", "content": "", "tool_name": None}
    assert hit.after == {"message_id": ids[3], "role": "assistant", "content": "wrapping " + "y" * 291 + "…", "tool_name": None}
    [answer] = store.search("wrapping")
    assert answer.before == {"message_id": ids[2], "role": "tool", "content": "zyxwvut body", "tool_name": "read_file"}
    assert answer.after is None


def test_snippets_tell_which_backend_answered(store: SessionStore, store_without_trigram: SessionStore) -> None:
    for s in (store, store_without_trigram):
        _thread(s)
    # Words: cut in Python around the match.
    assert [h.snippet for h in store.search("quokka")] == ["open the **quokka** notes"]
    # Substrings of three characters or more: the trigram index's snippet.
    assert [h.snippet for h in store.search("okk")] == ["open the qu**okk**…"]
    assert [h.snippet for h in store.search("yxwvu")] == ["z**yxwvu**t body"]
    assert [h.snippet for h in search_messages(store.conn, "yxwvu", trigram=True)] == ["z**yxwvu**t body"]
    # Without it (or told not to use it, or for shorter terms): the message's start, unmarked.
    assert [h.snippet for h in store_without_trigram.search("okk")] == ["open the quokka notes"]
    assert [h.snippet for h in search_messages(store.conn, "okk", trigram=False)] == ["open the quokka notes"]
    assert [h.snippet for h in search_messages(store_without_trigram.conn, "okk", trigram=True)] == ["open the quokka notes"]
    assert [h.snippet for h in store.search("ok")] == ["open the quokka notes"]


def test_or_and_not_reach_the_substring_index(store: SessionStore) -> None:
    sid = store.create_session()
    ids = store.append_messages(sid, [
        {"role": "user", "content": "Refactoring now."},
        {"role": "user", "content": "数据库连接池配置说明"},
        {"role": "user", "content": "Refactoring later."},
    ])  # fmt: skip
    assert [h.message_id for h in store.search("factorin OR 连接池")] == [ids[2], ids[1], ids[0]]
    assert [h.message_id for h in store.search("factorin NOT later")] == [ids[0]]
    assert [h.message_id for h in store.search("factorin NOT 连接池")] == [ids[2], ids[0]]
    assert store.search("factorin NOT (now OR later)") == []
    # A prefix star means nothing to substrings: the trigram index finds the same rows.
    assert [h.message_id for h in store.search("factorin*")] == [ids[2], ids[0]]


def test_substrings_are_sought_only_when_words_find_nothing(store: SessionStore) -> None:
    sid = store.create_session()
    ids = store.append_messages(sid, [
        {"role": "user", "content": "rotate the tokens"},
        {"role": "user", "content": "Refactoring now."},
    ])  # fmt: skip
    # "tokens" is a word with hits, so "factorin" is not sought as a substring.
    assert [h.message_id for h in store.search("tokens OR factorin")] == [ids[0]]
    # Every word is known and together they match nothing: no substring scan at all.
    with _statements(store.conn) as seen:
        assert search_messages(store.conn, "rotate now") == []
    assert len(seen) == 3 and not any("messages_trigram" in sql or "LIKE" in sql for sql in seen)
    with _statements(store.conn) as seen:
        assert [h.message_id for h in search_messages(store.conn, "factorin")] == [ids[1]]
    assert any("messages_trigram MATCH" in sql for sql in seen)


def test_like_needs_every_term(store_without_trigram: SessionStore) -> None:
    sid = store_without_trigram.create_session()
    ids = store_without_trigram.append_messages(sid, [
        {"role": "user", "content": "数据库连接池配置说明"},
        {"role": "user", "content": "配置文件"},
    ])  # fmt: skip
    assert [h.message_id for h in store_without_trigram.search("配置 说明")] == [ids[0]]
    assert [h.message_id for h in store_without_trigram.search("配置")] == [ids[1], ids[0]]


def test_a_word_search_costs_two_statements(store: SessionStore) -> None:
    _, ids = _thread(store)
    with _statements(store.conn) as seen:
        [hit] = search_messages(store.conn, "quokka")
    # The ids from the index alone (no filter, no join), then the hits with their neighbours.
    assert len(seen) == 2
    assert "JOIN" not in seen[0] and "LEFT JOIN" in seen[1]
    assert hit.after == {"message_id": ids[1], "role": "assistant", "content": "", "tool_name": None}
    with _statements(store.conn) as seen:
        [hit] = search_messages(store.conn, "quokka", context=False)
    assert len(seen) == 2 and "LEFT JOIN" not in seen[1]
    assert hit.before is None and hit.after is None
    with _statements(store.conn) as seen:
        search_messages(store.conn, "quokka", role="user")
    assert "JOIN sessions" in seen[0]


def test_fts_rows_reads_neighbours_only_when_asked(store: SessionStore) -> None:
    _thread(store)
    node = parse_query("quokka")
    [row] = _fts_rows(store.conn, "messages_fts", '"quokka"', "", [], "rank", 5, Highlighter(node))
    assert len(row) == 8 and row[6] == "open the **quokka** notes" and row[7] is None
    [row] = _fts_rows(store.conn, "messages_fts", '"quokka"', "", [], "rank", 5, Highlighter(node), True)
    assert len(row) == 16


def test_a_hit_without_text_in_a_child_session_finds_its_root(store: SessionStore) -> None:
    root = store.create_session(title="Wombat work")
    child = store.compression_child(root, [{"role": "user", "content": "summary so far"}])
    store.append_messages(child, [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c9", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "wombat.txt"}'}}]}])  # fmt: skip
    [hit] = store.search("wombat.txt")
    assert (hit.session_id, hit.root_session_id, hit.root_title) == (child, root, "Wombat work")


def test_search_messages_defaults(store: SessionStore) -> None:
    sid = store.create_session()
    ids = store.append_messages(sid, [{"role": "user", "content": "ocelot " + "and more " * i} for i in range(25)])
    hits = search_messages(store.conn, "ocelot")
    assert len(hits) == 20  # limit
    assert hits[0].message_id == ids[0]  # rank: the shortest message first
    assert hits[0].after is not None and hits[0].after["message_id"] == ids[1]  # context


def test_limit_is_capped_at_a_thousand(store: SessionStore) -> None:
    sid = store.create_session()
    store.append_messages(sid, [{"role": "user", "content": "lynx"}] * 1_001)
    assert len(store.search("lynx", limit=5_000, context=False)) == 1_000
    assert len(store.search("lynx", limit=0, context=False)) == 1


def test_bad_sort_names_the_choices(store: SessionStore) -> None:
    with pytest.raises(ValueError, match=r"^sort must be 'rank' or 'time', not 'random'$"):
        store.search("tokens", sort="random")  # type: ignore[arg-type]


def test_build_hits_without_a_snippet() -> None:
    [hit] = build_hits([(4, "s1", "tool", 2.5, "cli", "T", None, None)], {}, None)
    assert hit.snippet == "" and (hit.root_session_id, hit.root_title) == ("s1", "T")
    assert hit.before is None and hit.after is None
