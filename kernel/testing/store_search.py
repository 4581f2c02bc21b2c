"""Search in the store conformance suite: words, substrings, any query text, ranking, deadlines.

:class:`SearchConformance` is part of
:class:`~hermes.kernel.testing.store_suite.SessionStoreConformance`, so every
backend runs it; it uses the suite's ``store`` and ``make_store`` fixtures.
"""

from __future__ import annotations

import time
from collections.abc import Callable
import pytest

from ..store import SessionStore

__all__ = ["CALLS", "NASTY_QUERIES", "SearchConformance", "seed_search_corpus"]

NASTY_QUERIES = [
    '"', '""', "'", "(", ")", "((a", "a)", "AND", "OR", "NOT", "a AND", "OR b", "NOT a", "a NOT", "NEAR(a b)",
    "a NEAR/2 b", "-", "--", "-foo", "foo-bar", "a.b.c", "...", "*", "a*", "*a", "^a", "col:val", "{a b}",
    "a + b", "\\", "%", "_", "\x00", "\n\t", "x" * 5_000, "word " * 2_000, "日本語", "🙂", "'; DROP TABLE sessions; --",
    "a OR OR b", "(a OR b", '"unterminated phrase', "a:*", "!!a", "a & b | !c", "$$", "E'\\x'",
]  # fmt: skip

CALLS = [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "src/secret_vault.py"}'}}]


def seed_search_corpus(store: SessionStore) -> dict[str, str]:
    """Two sessions of known text; returns their ids under ``cli`` and ``api``."""
    cli = store.create_session(source="cli", title="Auth work")
    api = store.create_session(source="api")
    store.append_messages(cli, [
        {"role": "user", "content": "Please refactor the auth module in the login code"},
        {"role": "assistant", "content": "Refactoring now.", "tool_calls": CALLS},
        {"role": "tool", "tool_call_id": "c1", "tool_name": "read_file", "content": "def login(): pass"},
        {"role": "assistant", "content": "The login flow now checks tokens with postgres."},
    ])  # fmt: skip
    store.append_messages(api, [
        {"role": "user", "content": "数据库连接池配置说明"},
        {"role": "assistant", "content": "The tokens are rotated hourly by mysql jobs."},
    ])  # fmt: skip
    return {"cli": cli, "api": api}


class SearchConformance:
    """Search behaviour every backend shares."""

    def test_search_finds_words_with_every_field(self, store: SessionStore) -> None:
        ids = seed_search_corpus(store)
        [hit] = store.search("refactor auth")
        assert (hit.session_id, hit.root_session_id, hit.role, hit.source, hit.title, hit.root_title) == (
            ids["cli"], ids["cli"], "user", "cli", "Auth work", "Auth work")  # fmt: skip
        assert "**" in hit.snippet and isinstance(hit.message_id, int) and hit.timestamp > 0
        assert set(hit.as_dict()) >= {"session_id", "root_session_id", "message_id", "role", "snippet", "before", "after"}
        assert [h.role for h in store.search("secret_vault")] == ["assistant"]  # tool-call arguments
        assert {h.session_id for h in store.search("read_file")} == {ids["cli"]}  # tool names

    def test_query_language(self, store: SessionStore) -> None:
        ids = seed_search_corpus(store)
        assert {h.session_id for h in store.search("postgres OR mysql")} == {ids["cli"], ids["api"]}
        assert len(store.search("tokens NOT mysql")) == 1
        assert len(store.search('"checks tokens"')) == 1 and store.search('"tokens checks"') == []
        assert len(store.search("Refact*")) == 2  # (without the star, the substring fallback finds them too)
        assert len(store.search("(postgres OR mysql) tokens")) == 2
        assert store.search("login AND NOT") == []  # a dangling operator is a word

    @pytest.mark.parametrize("query", NASTY_QUERIES)
    def test_any_text_is_a_safe_query(self, store: SessionStore, query: str) -> None:
        seed_search_corpus(store)
        assert isinstance(store.search(query), list)
        assert isinstance(store.search(query, sort="time", role="user", source="cli"), list)
        assert store.counts()["sessions"] == 2  # nothing was dropped, whatever the text

    def test_substrings_and_cjk(self, store: SessionStore) -> None:
        ids = seed_search_corpus(store)
        assert [h.session_id for h in store.search("连接池")] == [ids["api"]]
        assert [h.session_id for h in store.search("配置")] == [ids["api"]]
        assert [h.session_id for h in store.search("factorin")] == [ids["cli"]]
        # OR and NOT hold for substrings too, short (two-character) terms included.
        assert [h.session_id for h in store.search("配置 OR 说明")] == [ids["api"]]
        assert {h.session_id for h in store.search("配置 OR factorin")} == {ids["api"], ids["cli"]}
        assert store.search("数据 NOT 说明") == [] and store.search("factorin NOT now") == []
        assert [h.session_id for h in store.search("factorin NOT 配置")] == [ids["cli"]]
        assert [h.role for h in store.search("va")] == ["assistant"]  # in the tool call's arguments only

    def test_search_finds_a_message_the_moment_its_append_returns(
        self, store: SessionStore, make_store: Callable[[], SessionStore]
    ) -> None:
        # A backend may index in batches after commit (SQLite's substring index does); search
        # must see each message anyway, by word and by substring, from this handle and another.
        other = make_store()
        try:
            sid = store.create_session()
            for i in range(12):
                [mid] = store.append_messages(sid, [{"role": "user", "content": f"zq{i:03d}marker payload"}])
                for handle in (store, other):
                    assert [h.message_id for h in handle.search(f"zq{i:03d}marker")] == [mid]
                    assert [h.message_id for h in handle.search(f"q{i:03d}mark")] == [mid]
            assert len(other.search("marker payload", limit=100)) == 12
        finally:
            other.close()

    def test_like_wildcards_and_backslashes_in_a_substring_query_are_literal(self, store: SessionStore) -> None:
        # Every text is inside a longer word, so the word index has no match and the substring
        # path answers (LIKE/ILIKE, or trigram): a % _ or \ in the query must match only itself.
        sid = store.create_session()
        texts = ["rate=x50%y", "rate=x501y", "id=qa_bz", "id=qaxbz", "dir\\tmpfile", "dirtmpfile", "dir/tmpfile"]
        ids = dict(zip(texts, store.append_messages(sid, [{"role": "user", "content": t} for t in texts])))
        expected = {
            "50%": ["rate=x50%y"], "0%": ["rate=x50%y"],  # two characters take LIKE even beside a trigram index
            "a_b": ["id=qa_bz"], "a_": ["id=qa_bz"], "_b": ["id=qa_bz"],
            "r\\t": ["dir\\tmpfile"], "\\t": ["dir\\tmpfile"], "\\tm": ["dir\\tmpfile"],
        }
        for query, want in expected.items():
            found = {h.message_id for h in store.search(query)}
            assert found == {ids[t] for t in want}, query
            assert {h.message_id for h in store.search(query, sort="time", context=False)} == found, query

    def test_filters_sort_limit_and_context(self, store: SessionStore) -> None:
        ids = seed_search_corpus(store)
        assert len(store.search("tokens")) == 2
        assert [h.session_id for h in store.search("tokens", source="api")] == [ids["api"]]
        assert [h.session_id for h in store.search("tokens", session_id=ids["cli"])] == [ids["cli"]]
        assert store.search("tokens", role="user") == []
        assert [h.session_id for h in store.search("tokens", sort="time")] == [ids["api"], ids["cli"]]
        assert len(store.search("tokens", limit=1)) == 1
        with pytest.raises(ValueError):
            store.search("tokens", sort="random")  # type: ignore[arg-type]
        [hit] = store.search("def login")
        assert hit.before["content"] == "Refactoring now." and hit.after["content"].startswith("The login flow")
        [first] = store.search("refactor auth", context=True)
        assert first.before is None
        [bare] = store.search("def login", context=False)
        assert bare.before is None and bare.after is None

    def test_rank_prefers_the_best_match_over_the_newest(self, store: SessionStore) -> None:
        sid = store.create_session()
        best = store.append_message(sid, {"role": "user", "content": "ocelot ocelot ocelot"})
        store.append_messages(sid, [{"role": "user", "content": f"an ocelot among many other words, number {i}"} for i in range(30)])
        assert store.search("ocelot", limit=1)[0].message_id == best
        assert store.search("ocelot", sort="time", limit=1)[0].message_id != best

    def test_one_huge_message_gives_a_short_snippet(self, store: SessionStore) -> None:
        # A million characters on one line, 100,000 matches: a snippet costs time linear in
        # the text (never the square of its matches) and stays short, here and in a log
        # whose one token or gap is half the message.
        sid = store.create_session()
        line = "error ok " * 111_112
        giant = "start " + "a" * 500_000 + " error " + "=" * 500_000 + " end"
        big, lone = store.append_messages(sid, [{"role": "tool", "tool_call_id": "c", "content": c} for c in (line, giant)])
        hits = {h.message_id: h.snippet for h in store.search("error")}
        assert set(hits) == {big, lone} and all(len(s) < 500 for s in hits.values())
        assert hits[big].startswith("**error** ok **error** ok") and hits[big].endswith("…")
        assert "**error**" in hits[lone] and "…" in hits[lone].replace("**", "")
        [sub] = store.search("rror ok")  # a substring: the trigram, LIKE or ILIKE path
        assert sub.message_id == big and len(sub.snippet) < 500

    def test_a_deadline_stops_the_search_with_what_it_found(self, store: SessionStore) -> None:
        seed_search_corpus(store)
        later = store.search("tokens", deadline=time.monotonic() + 600)
        assert [h.snippet for h in later] == [h.snippet for h in store.search("tokens")] and len(later) == 2
        for query in ("tokens", "factorin", "va"):  # words, substrings, short substrings
            past = store.search(query, deadline=time.monotonic() - 1)
            assert isinstance(past, list) and all("**" not in h.snippet for h in past), query  # not highlighted

    def test_hits_resolve_to_the_lineage_root(self, store: SessionStore) -> None:
        ids = seed_search_corpus(store)
        current = ids["cli"]
        for n in range(3):
            current = store.compression_child(current, [{"role": "user", "content": f"summary {n} of quasar work"}])
        hits = store.search("quasar")
        assert len(hits) == 3 and {h.root_session_id for h in hits} == {ids["cli"]}
        assert {h.root_title for h in hits} == {"Auth work"} and all(h.title.startswith("Auth work #") for h in hits)

