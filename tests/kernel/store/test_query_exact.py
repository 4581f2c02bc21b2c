"""The search query parser (kernel/store/query.py) gives exact trees and FTS5 expressions.

Each test pins one rule of the query language to the tree :func:`parse_query`
builds or the MATCH text :func:`to_fts5` writes, and where the difference would
change what a search finds, checks it against a real FTS5 table.
"""

from __future__ import annotations

import sqlite3

import pytest

from hermes.kernel.store.query import MAX_TERMS, And, Not, Or, Term, parse_query, to_fts5

A, B, C, D = Term("a"), Term("b"), Term("c"), Term("d")


@pytest.mark.parametrize(
    ("query", "tree"),
    [
        ("alpha", Term("alpha")),  # one term is the term, not a one-part AND
        ("alpha\x00beta\x1fgamma", And((Term("alpha"), Term("beta"), Term("gamma")))),  # control characters split words
        ("OR", Term("or")),  # an operator where a word belongs is a plain word
        ("a AND b", And((A, B))),  # AND is implicit AND, not a word
        ("a AND b AND c", And((A, B, C))),
        ('"alpha beta"', Term("alpha beta", phrase=True)),
        ('"alpha  beta"*', Term("alpha beta", prefix=True, phrase=True)),
        ("pref*", Term("pref", prefix=True)),
        ("Xray*", Term("Xray", prefix=True)),  # only the '*' is stripped, not an 'X'
        ("*star", Term("star")),
        ("(a OR b) c", And((Or((A, B)), C))),  # ')' ends the group
        ("(a b) c", And((And((A, B)), C))),
        ("a OR b c", Or((A, And((B, C))))),
        ("a NOT (b OR c)", Not(A, Or((B, C)))),
        ("(a", A),  # an unclosed group closes at the end
        ("a ) b c", And((A, And((B, C))))),  # a stray ')' is skipped and the parse goes on
        (") a", A),
        ("a ) ) b", And((A, B))),
        ("( ) a", A),
        ('a "" b', And((A, B))),  # a phrase without a word is dropped
        ("a NOT", A),
        ("NOT a", And((Term("not"), A))),  # a leading NOT is the word "not"
        ("c AND", C),  # a trailing AND joins nothing
    ],
)
def test_parse_query_builds_the_exact_tree(query: str, tree: object) -> None:
    assert parse_query(query) == tree


def test_at_most_max_terms_terms_are_kept() -> None:
    words = [f"w{i}" for i in range(MAX_TERMS + 5)]
    node = parse_query(" ".join(words))
    assert isinstance(node, And)
    assert node.parts == tuple(Term(w) for w in words[:MAX_TERMS])
    assert MAX_TERMS == 32


@pytest.mark.parametrize(
    ("query", "fts5"),
    [
        ("a", '"a"'),
        ("pre*", '"pre"*'),
        ("(a OR b) c NOT d", '("a" OR "b") AND (("c") NOT ("d"))'),
        ("a OR b c", '"a" OR ("b" AND "c")'),
        ("(a b) OR (c NOT d)", '("a" AND "b") OR (("c") NOT ("d"))'),
        ("a NOT (b OR c)", '("a") NOT ("b" OR "c")'),
    ],
)
def test_to_fts5_writes_the_exact_expression(query: str, fts5: str) -> None:
    node = parse_query(query)
    assert node is not None
    assert to_fts5(node) == fts5


def test_to_fts5_doubles_quotes_inside_a_term() -> None:
    # The parser never leaves a quote in a term, but a backend may build one.
    expr = to_fts5(Term('say "hi" now', prefix=True))
    assert expr == '"say ""hi"" now"*'
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(content)")
    conn.executemany("INSERT INTO t VALUES (?)", [("they say hi nowadays",), ("say nothing",)])
    assert conn.execute("SELECT content FROM t WHERE t MATCH ?", (expr,)).fetchall() == [("they say hi nowadays",)]
    conn.close()


def test_groups_keep_their_meaning_in_fts5() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(content)")
    conn.executemany("INSERT INTO t VALUES (?)", [("a x",), ("b c",), ("a c",), ("b x",)])
    node = parse_query("(a OR b) c")
    assert node is not None
    found = conn.execute("SELECT content FROM t WHERE t MATCH ? ORDER BY content", (to_fts5(node),)).fetchall()
    assert found == [("a c",), ("b c",)]
    conn.close()
