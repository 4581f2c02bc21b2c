"""The search query language every backend understands: FTS5's, made safe for any text.

``postgres OR mysql``, ``error NOT warning``, ``"exact phrase"``, ``prefix*``,
parentheses and implicit AND work as in SQLite FTS5 (NOT binds tightest, then
AND, then OR). Everything else is literal text: each word becomes a quoted
phrase, so ``-``, ``.``, ``:``, unbalanced quotes or parentheses and stray
operators never reach a database as syntax. A backend compiles the parsed tree
(:func:`parse_query`) into its own dialect; :func:`to_fts5` is SQLite's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "MAX_QUERY_CHARS",
    "MAX_TERMS",
    "And",
    "Not",
    "Or",
    "QueryNode",
    "Term",
    "parse_query",
    "to_fts5",
]

MAX_QUERY_CHARS = 1_000
MAX_TERMS = 32
_WORD = re.compile(r"\w", re.UNICODE)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_TOKEN = re.compile(r'"(?P<phrase>[^"]*)"?(?P<pstar>\*?)|(?P<paren>[()])|(?P<word>[^\s()"]+)')
_KEYWORDS = {"AND", "OR", "NOT"}


@dataclass(frozen=True)
class Term:
    """A word or a quoted phrase; ``prefix`` when written with a trailing ``*``."""

    text: str
    prefix: bool = False
    phrase: bool = False


@dataclass(frozen=True)
class And:
    parts: tuple[QueryNode, ...]


@dataclass(frozen=True)
class Or:
    parts: tuple[QueryNode, ...]


@dataclass(frozen=True)
class Not:
    """Matches of ``keep`` that do not match ``drop`` (FTS5's binary NOT)."""

    keep: QueryNode
    drop: QueryNode


QueryNode = Term | And | Or | Not


def _tokens(query: str) -> list[tuple[str, str, bool]]:
    """``(kind, text, prefix)`` with kind in ``term``, ``phrase``, ``op``, ``(``, ``)``."""
    text = _CONTROL.sub(" ", query[:MAX_QUERY_CHARS])
    out: list[tuple[str, str, bool]] = []
    for match in _TOKEN.finditer(text):
        if match.group("paren"):
            out.append((match.group("paren"), "", False))
        elif match.group("word") is not None:
            word = match.group("word")
            if word in _KEYWORDS:
                out.append(("op", word, False))
            else:
                prefix = word.endswith("*")
                out.append(("term", word.strip("*"), prefix))
        else:
            out.append(("phrase", match.group("phrase"), bool(match.group("pstar"))))
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, str, bool]]) -> None:
        self.tokens = tokens
        self.at = 0
        self.terms = 0

    def peek(self) -> tuple[str, str, bool] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def parse_or(self) -> QueryNode | None:
        parts = [self.parse_and()]
        while (tok := self.peek()) is not None and tok[:2] == ("op", "OR"):
            self.at += 1
            parts.append(self.parse_and())
        kept = tuple(p for p in parts if p is not None)
        return kept[0] if len(kept) == 1 else Or(kept) if kept else None

    def parse_and(self) -> QueryNode | None:
        parts = [self.parse_not()]
        while (tok := self.peek()) is not None and tok[0] != ")" and tok[:2] != ("op", "OR"):
            if tok[:2] == ("op", "AND"):
                self.at += 1
            parts.append(self.parse_not())
        kept = tuple(p for p in parts if p is not None)
        return kept[0] if len(kept) == 1 else And(kept) if kept else None

    def parse_not(self) -> QueryNode | None:
        node = self.parse_primary()
        while (tok := self.peek()) is not None and tok[:2] == ("op", "NOT"):
            self.at += 1
            drop = self.parse_primary()
            if node is not None and drop is not None:  # nothing to subtract from: drop it
                node = Not(node, drop)
        return node

    def parse_primary(self) -> QueryNode | None:
        tok = self.peek()
        if tok is None:
            return None
        kind, text, prefix = tok
        self.at += 1
        if kind == "(":
            inner = self.parse_or()
            if (closing := self.peek()) is not None and closing[0] == ")":
                self.at += 1
            return inner
        if kind == "op":  # an operator where a word belongs is a word
            text = text.lower()
        # No word in it (an unbalanced ")" among them): nothing to search; the caller goes on.
        if not _WORD.search(text) or self.terms >= MAX_TERMS:
            return None
        self.terms += 1
        return Term(" ".join(text.split()), prefix, phrase=kind == "phrase")


def parse_query(query: str) -> QueryNode | None:
    """The query as a tree, or None when nothing searchable is left."""
    parser = _Parser(_tokens(query))
    node = parser.parse_or()
    while parser.peek() is not None:  # a stray ")" ended the parse early: go on after it
        parser.at += 1
        more = parser.parse_or()
        if more is not None:
            node = more if node is None else And((node, more))
    return node


def _fts5_phrase(term: Term) -> str:
    return '"' + term.text.replace('"', '""') + '"' + ("*" if term.prefix else "")


def to_fts5(node: QueryNode) -> str:
    """An FTS5 MATCH expression; every term is a quoted phrase."""
    if isinstance(node, Term):
        return _fts5_phrase(node)
    if isinstance(node, Not):
        return f"({to_fts5(node.keep)}) NOT ({to_fts5(node.drop)})"
    glue = " AND " if isinstance(node, And) else " OR "
    return glue.join(f"({to_fts5(p)})" if not isinstance(p, Term) else to_fts5(p) for p in node.parts)
