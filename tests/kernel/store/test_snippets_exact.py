"""Snippets cut in Python (kernel/store/snippets.py) equal FTS5's on the edge cases of its rules.

Each row is chosen so that one rule decides the snippet: where a sentence starts,
which window scores best, which terms of OR and NOT branches are marked, how
overlapping matches are marked. Every expected value is also FTS5's own
``snippet()`` on the same row and query.
"""

from __future__ import annotations

import sqlite3

import pytest

from hermes.kernel.store.query import parse_query, to_fts5
from hermes.kernel.store.snippets import Highlighter


def _fts5(conn: sqlite3.Connection, text: str, query: str, tokens: int) -> str:
    node = parse_query(query)
    assert node is not None
    conn.execute("DELETE FROM t")
    conn.execute("INSERT INTO t VALUES (?, NULL, NULL)", (text,))
    sql = f"SELECT snippet(t, -1, '**', '**', '…', {tokens}) FROM t WHERE t MATCH ?"
    row = conn.execute(sql, (to_fts5(node),)).fetchone()
    assert row is not None, "FTS5 must match the row"
    return str(row[0])


FILL = " ".join(["f"] * 70)
TAIL = "e f g h i j k l m n"

CASES = [
    # Sentence starts: a '.' or ':' then space, tab, newline or carriage return; token 1 counts.
    (f"A. b c d target {TAIL}", "target", 12, "…b c d **target** e f g h i j k l…"),
    (f"x). b c d target {TAIL}", "target", 12, "…b c d **target** e f g h i j k l…"),
    (f"A.\x0cb c d target {TAIL}", "target", 12, "A.\x0cb c d **target** e f g h i j k…"),
    (f"A..b c d target {TAIL}", "target", 12, "A..b c d **target** e f g h i j k…"),
    # A text of exactly 12 tokens is shown whole, sentence or not.
    ("a b c. d target f g h i j k l", "target", 12, "a b c. d **target** f g h i j k l"),
    # The window ends before its 13th token.
    ("alpha x x x x x x x x x x x beta", "alpha OR beta", 12, "**alpha** x x x x x x x x x x x…"),
    ("alpha x x x x x x x x x x. y beta z z z", "alpha OR beta", 12, "…y **beta** z z z"),
    # The first sentence's bonus (120) beats a later sentence's (100) plus two repeats.
    ("a x b c d e f g h i j k l m. n x o x p x q", "x", 12, "a **x** b c d e f g h i j k…"),
    # A repeat scores 1: with 64 tokens, 20 repeats tie the first sentence's bonus, 21 beat it,
    # and 62 repeats do not beat the bonus plus nothing.
    (f"a x {FILL} m. n {' '.join(['x'] * 21)}", "x", 64, "a **x** " + " ".join(["f"] * 62) + "…"),
    (f"a x {FILL} m. n {' '.join(['x'] * 22)}", "x", 64, "…n " + " ".join(["**x**"] * 22)),
    (" ".join(["a"] * 63 + ["x"] * 63), "x", 64, " ".join(["a"] * 63) + " **x**…"),
    # NOT and OR: only the terms of the branches the row matched are marked.
    ("error warning build", "(error NOT warning) OR build", 12, "error warning **build**"),
    ("alpha delta", "alpha NOT (beta OR gamma)", 12, "**alpha** delta"),
    ("zeta alpha beta", "zeta OR alpha", 12, "**zeta** **alpha** beta"),
    ("alpha beta", "zeta OR alpha", 12, "**alpha** beta"),
    ("alpha beta", "alpha OR _", 12, "**alpha** beta"),  # a term without a word matches nothing
    # A phrase matches only its words in order; a prefix only on its last word.
    ("alpha gamma alpha delta", '"alpha beta alpha" OR gamma', 12, "alpha **gamma** alpha delta"),
    ("alpha beta gamma", 'gamma OR "alpha be"', 12, "alpha beta **gamma**"),
    ("alpha beta gamma", 'gamma OR "alpha be"*', 12, "**alpha beta** **gamma**"),
    # Overlapping matches are marked once.
    ("alpha beta", '"alpha beta" beta', 12, "**alpha beta**"),
    ("alpha beta gamma delta", '"alpha beta gamma" beta', 12, "**alpha beta gamma** delta"),
    ("alpha beta gamma delta", '"alpha beta" "beta gamma" delta', 12, "**alpha beta gamma** **delta**"),
    # Matches wider than the window: centred as C divides (toward zero), so it starts at the first.
    (f"{FILL[:21]} x {FILL[:19]} alpha beta {FILL[:19]}", '"alpha beta" OR x', 12, "…**x** f f f f f f f f f f **alpha**…"),
    # A match that begins before the window (here a phrase across a sentence start) is not marked.
    ("z beta. f z z z z z z z z z x y", '"beta f" OR x OR y', 12, "…f z z z z z z z z z **x** **y**"),
]


@pytest.mark.parametrize(("text", "query", "tokens", "expected"), CASES)
def test_snippet_equals_fts5s(fts: sqlite3.Connection, text: str, query: str, tokens: int, expected: str) -> None:
    assert _fts5(fts, text, query, tokens) == expected
    assert Highlighter(parse_query(query)).snippet((text, None, None), tokens) == expected


def test_a_new_term_scores_exactly_1000_repeats(fts: sqlite3.Connection) -> None:
    # With 1001 tokens a column of one term and its 1000 repeats ties a column with two
    # terms, and a tie keeps the first column, in FTS5 and here.
    columns = (" ".join(["a"] * 1001), "a b", None)
    conn = fts
    conn.execute("DELETE FROM t")
    conn.execute("INSERT INTO t VALUES (?, ?, ?)", columns)
    sql = "SELECT snippet(t, -1, '**', '**', '…', 1001) FROM t WHERE t MATCH ?"
    expected = " ".join(["**a**"] * 1001)
    assert conn.execute(sql, ('"a" OR "b"',)).fetchone() == (expected,)
    assert Highlighter(parse_query("a OR b")).snippet(columns, 1001) == expected


def test_without_a_query_the_snippet_is_the_first_column_from_its_start() -> None:
    assert Highlighter(None).snippet(("alpha beta", "read_file", None)) == "alpha beta"
    assert Highlighter(None).snippet(("a b c d e f g h i j k l m n", None, None)) == "a b c d e f g h i j k l…"


def test_a_row_without_text_has_an_empty_snippet() -> None:
    highlighter = Highlighter(parse_query("alpha"))
    assert highlighter.snippet((None, None, None)) == ""
    assert highlighter.snippet(("", "", None)) == ""
    assert highlighter.snippet(()) == ""


@pytest.mark.parametrize("tokens", [0, -3])
def test_a_snippet_of_no_tokens_is_refused(tokens: int) -> None:
    with pytest.raises(ValueError, match=f"^a snippet needs at least 1 token, not {tokens}$"):
        Highlighter(parse_query("x")).snippet(["x y"], tokens)
    assert Highlighter(parse_query("x")).snippet(["x y"], 1) == "**x**…"
