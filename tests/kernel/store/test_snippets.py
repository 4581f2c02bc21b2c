"""Snippets cut in Python (kernel/store/snippets.py) are the ones FTS5's snippet() cuts.

The word search reads its hits' rows and cuts snippets itself instead of asking
FTS5 to seek every hit again; these tests hold it to FTS5's own output on the
same text and query, through a real FTS5 table with the word index's tokenizer,
and the substring search's to FTS5's over the trigram tokenizer. Then what FTS5
does not promise: a huge message costs time linear in its size and gives a short
snippet.
"""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel.store.query import parse_query, to_fts5
from hermes.kernel.store.snippets import MAX_MATCHES, MAX_RUN_CHARS, Highlighter, SubstringHighlighter
from tests.helpers import examples


def _both(conn: sqlite3.Connection, columns: tuple[str | None, ...], query: str) -> tuple[str, str] | None:
    """(FTS5's snippet, ours) for a row, or None when FTS5 does not match it."""
    node = parse_query(query)
    assert node is not None
    conn.execute("DELETE FROM t")
    conn.execute("INSERT INTO t VALUES (?, ?, ?)", columns)
    row = conn.execute("SELECT snippet(t, -1, '**', '**', '…', 12) FROM t WHERE t MATCH ?", (to_fts5(node),)).fetchone()
    return None if row is None else (row[0], Highlighter(node).snippet(columns))


CASES = [
    (("Please refactor the auth-module in login.py", None, None), "login.py", "Please refactor the auth-module in **login.py**"),
    (("(hello) world, this is fine.", None, None), "hello", "(**hello**) world, this is fine."),
    (("nothing here", "read_file", '{"path": "secret.txt"}'), "secret", '{"path": "**secret**.txt"}'),
    (("Café au lait is CAFE", None, None), "cafe", "**Café** au lait is **CAFE**"),
    (("cafe\u0301 time", None, None), "cafe", "**cafe\u0301** time"),
    (("straße", None, None), "straße", "**straße**"),
    (("pre prefix prefixes", None, None), "pref*", "pre **prefix** **prefixes**"),
    (("alpha beta gamma. alpha beta", None, None), '"alpha beta"', "**alpha beta** gamma. **alpha beta**"),
    (("a b c d e f g h i j k l m n o p q r target s t u v w x y z", None, None), "target", "…n o p q r **target** s t u v w x…"),
    (("one. two three four five six seven eight nine ten eleven. Twelve target thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty", None, None),
     "target", "…Twelve **target** thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"),
    # An OR branch the row did not match leaves its words unmarked, as in FTS5.
    (("alpha and beta", None, None), "alpha OR (beta gamma)", "**alpha** and beta"),
    (("error in the build error", None, None), "error NOT warning", "**error** in the build **error**"),
]


@pytest.mark.parametrize(("columns", "query", "expected"), CASES)
def test_snippets_equal_fts5s_on_chosen_rows(fts: sqlite3.Connection, columns: tuple[str | None, ...], query: str, expected: str) -> None:
    both = _both(fts, columns, query)
    assert both is not None, "FTS5 must match the row"
    assert both == (expected, expected)


WORDS = ["alpha", "Beta", "café", "cafe\u0301", "日本語", "emoji😀x", "x_y", "v2.0", "ÅSA", "straße", "İstanbul", "naïve", "a-b", "C++"]
GAPS = ["", " ", ", ", ". ", ": ", "  ", "\n", ".\t"]
QUERIES = ["alpha", "beta*", "cafe", "日本語", "x", "v2", "asa", "straße", "istanbul", "naive", "a b", '"alpha beta"',
           "alpha OR beta", "alpha NOT beta", "c", "em*", "(alpha OR naive) beta"]
column = st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(GAPS)), min_size=1, max_size=40).map(lambda ws: "".join(w + g for w, g in ws))


@settings(max_examples=examples(400, under_mutation=100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=column, tool_name=st.none() | column, tool_args=st.none() | column, query=st.sampled_from(QUERIES))
def test_snippets_equal_fts5s_on_generated_rows(
    fts: sqlite3.Connection, content: str, tool_name: str | None, tool_args: str | None, query: str
) -> None:
    both = _both(fts, (content, tool_name, tool_args), query)
    if both is not None:
        assert both[1] == both[0]


def test_search_snippets_come_from_the_row(tmp_path) -> None:  # type: ignore[no-untyped-def]

    with SQLiteSessionStore(tmp_path / "state.db") as store:
        sid = store.create_session()
        store.append_messages(sid, [
            {"role": "user", "content": "the deploy failed on the staging host"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "deploy.log"}'}}]},
        ])  # fmt: skip
        hits = {h.message_id: h for h in store.search("deploy", sort="time")}
    assert sorted(h.snippet for h in hits.values()) == ['the **deploy** failed on the staging host', '{"path": "**deploy**.log"}']


# Words always apart (a gap between each), and terms found at most once in a word: FTS5
# repeats text between matches that touch, which the substring highlighter does not copy.
TRIGRAM_WORDS = ["alpha", "Beta", "quokka", "ERROR", "xerrorx", "foo", "日本語", "naïve", "v2.0"]
TRIGRAM_GAPS = [" ", ", ", ". ", ": ", "\n", "  ", ".\t"]
TRIGRAM_QUERIES = ["err", "error", "okk", "alpha OR beta", "error NOT foo", "日本語", "lph", "ror x", "ïve", "2.0", "QUO"]
spaced = st.lists(st.tuples(st.sampled_from(TRIGRAM_WORDS), st.sampled_from(TRIGRAM_GAPS)), min_size=1, max_size=30).map(
    lambda ws: "".join(w + g for w, g in ws)
)


@settings(max_examples=examples(300, under_mutation=100), deadline=None)
@given(content=spaced, tool_name=st.none() | spaced, tool_args=st.none() | spaced, query=st.sampled_from(TRIGRAM_QUERIES))
def test_substring_snippets_equal_fts5s_over_trigrams(content: str, tool_name: str | None, tool_args: str | None, query: str) -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(content, tool_name, tool_args, tokenize='trigram')")
    conn.execute("INSERT INTO t VALUES (?, ?, ?)", (content, tool_name, tool_args))
    node = parse_query(query)
    row = conn.execute("SELECT snippet(t, -1, '**', '**', '…', 12) FROM t WHERE t MATCH ?", (to_fts5(node),)).fetchone()
    if row is not None:
        assert SubstringHighlighter(node).snippet((content, tool_name, tool_args)) == row[0]


def test_substring_matches_that_share_characters_are_marked_once() -> None:
    # FTS5 gives "**aaa**a**aaa**" here (the shared characters twice).
    assert SubstringHighlighter(parse_query("aaa")).snippet(("xaaaay",)) == "x**aaaa**y"
    assert SubstringHighlighter(parse_query("abc")).snippet(("abcabc",)) == "**abc****abc**"
    # Terms under three characters: no trigram matched them, unless told to look (ILIKE).
    assert SubstringHighlighter(parse_query("va")).snippet(("java",)) == "java"
    assert SubstringHighlighter(parse_query("va"), shortest=1).snippet(("java",)) == "ja**va**"
    assert SubstringHighlighter(parse_query("a"), shortest=1).snippet(("a",)) == "**a**"


def test_a_million_characters_of_matches_give_a_short_snippet() -> None:
    line = "error ok " * 111_112  # 1,000,008 characters, 111,112 matches
    assert Highlighter(parse_query("error")).snippet((line,)) == "**error** ok " * 5 + "**error** ok…"
    assert SubstringHighlighter(parse_query("rror")).snippet((line,)) == "e**rror** ok e**rror**…"
    # A term past another's first MAX_MATCHES matches: the window holding both is still
    # found, with the other's matches around it, as FTS5 finds it looking at all 6,001.
    late = "error " * (MAX_MATCHES * 3) + "fatal error"
    assert Highlighter(parse_query("error fatal")).snippet((late,)) == "…" + "**error** " * 11 + "**fatal**…"
    assert SubstringHighlighter(parse_query("error fatal")).snippet((late,)) == "… **error** **fatal** e…"


def test_a_giant_token_or_gap_is_shortened_in_the_middle() -> None:
    keep = MAX_RUN_CHARS // 2
    text = "start " + "a" * 500_000 + " error " + "=" * 500_000 + " end"
    expected = "start " + "a" * keep + "…" + "a" * keep + " **error** " + "=" * (keep - 1) + "…" + "=" * (keep - 1) + " end"
    assert Highlighter(parse_query("error")).snippet((text,)) == expected
    assert Highlighter(parse_query("aaa*")).snippet((text,)).startswith("start **" + "a" * keep + "…" + "a" * keep + "** error")
    # Short runs are left alone: ordinary snippets stay FTS5's.
    short = "=" * (MAX_RUN_CHARS - 1) + " "  # a gap of exactly MAX_RUN_CHARS
    assert Highlighter(parse_query("error")).snippet((short + "error",)) == short + "**error**"
