"""Search snippets cut in Python from rows the search already read.

FTS5's ``snippet()`` needs a full-text cursor positioned on the row, so a search
that picks its top hits first would run the whole query again, once per hit, just
to mark words; and it scores a window at every match against every other match,
so one message with many matches costs the square of their number (a 400 KB log
with 20,000 matches took 107 s). The words to mark are known from the parsed
query, so the snippet is cut here instead, the way FTS5 cuts it: the best window
of :data:`SNIPPET_TOKENS` tokens of the best column (a term's first match scores
1000, a repeat 1; a window may also start at a sentence), every match wrapped in
``**``, ``…`` where text was left out, and a term of an ``OR`` branch the row did
not match left unmarked. Unlike FTS5 it costs time linear in the text: windows
slide forward over the matches once, sentence starts are found once, at most
:data:`MAX_MATCHES` matches of a term are examined per column, and a run of more
than :data:`MAX_RUN_CHARS` characters (one giant token, or the gap between two)
is shortened in the middle, so a snippet stays short whatever the message.

Two kinds of token: :class:`Highlighter` follows the word index's ``unicode61
remove_diacritics 2`` tokenizer (runs of letters, digits and combining marks,
compared after lower-casing and removing accents); :class:`SubstringHighlighter`
follows the trigram index (a token at every character, case-insensitive), for
hits the substring search found. tests/kernel/store/test_snippets.py compares
both with FTS5's own on generated text.
"""

from __future__ import annotations

import re
import time
import unicodedata
from abc import ABC, abstractmethod
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any

from .query import And, Not, QueryNode, Term

__all__ = ["MAX_MATCHES", "MAX_RUN_CHARS", "PLAIN_SNIPPET_CHARS", "SNIPPET_TOKENS", "Highlighter", "SubstringHighlighter", "snippet_by"]

SNIPPET_TOKENS = 12
# Per term and column. A window holds at most one match of a term per token, so this
# many is plenty to choose one of 12 tokens; past it a huge message would only cost time.
MAX_MATCHES = 2_000
# A token or a gap longer than this is shown as its two ends around "…".
MAX_RUN_CHARS = 80
# A snippet cut without looking for matches (past a search's deadline) is this long at most.
PLAIN_SNIPPET_CHARS = 200
# One group, so re.split returns [gap, token, gap, token, ..., gap] in one call.
# Runs of runs (not one alternation per character): a third faster on long non-ASCII text.
_SPLIT = re.compile(r"((?:[^\W_]+|[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+)+)")
_SPLIT_ASCII = re.compile(r"([A-Za-z0-9]+)")
# What FTS5 takes for the end of a sentence: a '.' or ':' and at least one space.
_SENTENCE_END = re.compile(r"[.:][ \t\n\r]+")
_SENTENCE_GAP = re.compile(r"[.:][ \t\n\r]+\Z")

# (first token, token count, term index) of one match.
Match = tuple[int, int, int]


def _fold_text(text: str) -> str:
    """Text as unicode61 compares it: lower case, accents removed."""
    decomposed = unicodedata.normalize("NFD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


_fold = lru_cache(maxsize=8192)(_fold_text)  # one token; a query's words repeat


def _clip(run: str) -> str:
    if len(run) <= MAX_RUN_CHARS:
        return run
    keep = MAX_RUN_CHARS // 2
    return run[:keep] + "…" + run[-keep:]


def _merged(matches: list[Match], start: int, end: int) -> list[list[int]]:
    """``[first, last]`` token ranges to mark in the window ``[start, end]``, as FTS5 marks them:
    overlapping matches joined first; a joined range that begins before the window is left
    unmarked, one that runs past its end is cut there."""
    marks: list[list[int]] = []
    for first, size, _ in matches:
        if first > end:
            break
        last = first + size - 1
        if marks and first <= marks[-1][1]:
            marks[-1][1] = max(marks[-1][1], last)
        else:
            marks.append([first, last])
    return [[first, min(last, end)] for first, last in marks if first >= start]


class _Column(ABC):
    """What both kinds of column share: finding the matches, within bounds."""

    __slots__ = ("count", "matches", "terms", "text")

    def __init__(self, text: str, count: int) -> None:
        self.text, self.count = text, count
        self.matches: list[Match] = []
        self.terms: list[Any] = []

    @abstractmethod
    def wanted(self, term: Any) -> bool:
        """False when the column cannot hold the term (a cheap test first)."""

    @abstractmethod
    def size(self, term: Any) -> int:
        """How many tokens a match of the term spans."""

    @abstractmethod
    def starts(self, term: Any, low: int, high: int, limit: int) -> list[int]:
        """Where the term matches, from token ``low`` up to ``high``; at most ``limit`` of them."""

    @abstractmethod
    def sentence_before(self, i: int) -> int:
        """The last token at or before ``i`` that FTS5 takes for a sentence start (0 if none)."""

    @abstractmethod
    def render(self, start: int, tokens: int) -> str:
        """The window of ``tokens`` tokens from ``start``, its matches marked."""

    def find(self, terms: list[Any], tokens: int) -> None:
        """The matches of every term, in token order: at most MAX_MATCHES of a term, and, for
        a term cut short there, also those near each other term's first match, so that a
        window holding both can still be chosen (a rare word after thousands of common ones)."""
        found = [self.starts(term, 0, self.count, MAX_MATCHES) if self.wanted(term) else [] for term in terms]
        firsts = [starts[0] for starts in found if starts]
        for index, starts in enumerate(found):
            if len(starts) == MAX_MATCHES:
                near = {
                    at
                    for first in firsts
                    if first > starts[-1]
                    for at in self.starts(terms[index], max(0, first - tokens), first + tokens, 2 * tokens)
                }
                starts += sorted(at for at in near if at > starts[-1])
        self.terms = terms
        self.matches = sorted((at, self.size(term), i) for i, (term, starts) in enumerate(zip(terms, found)) for at in starts)


class _Words(_Column):
    """One column's text split into words and the gaps between them, the words folded."""

    __slots__ = ("_scanned", "_sentences", "folded", "lowered", "parts")

    def __init__(self, text: str) -> None:
        # ASCII folds by lower-casing alone, which keeps every length: the lowered text is
        # split once, its tokens are the folded ones, and a substring test on it tells most
        # columns (which match no term) apart before any token is looked at.
        self.lowered = text.lower() if text.isascii() else ""
        self.parts = _SPLIT_ASCII.split(self.lowered) if self.lowered else _SPLIT.split(text)  # gap, token, ..., gap
        super().__init__(text, len(self.parts) // 2)
        self.folded: list[str] = self.parts[1::2] if self.lowered else []  # the others on first use
        self._sentences: list[int] = []
        self._scanned = 0  # the gaps before tokens 1 .. _scanned were looked at for sentences

    def wanted(self, term: tuple[tuple[str, ...], bool]) -> bool:
        if not term[0] or (self.lowered and term[0][0] not in self.lowered):
            return False  # the substring test spares folding a column that cannot match
        if not self.folded:
            self.folded = _folded_tokens(self.parts[1::2])
        return True

    def size(self, term: tuple[tuple[str, ...], bool]) -> int:
        return len(term[0])

    def starts(self, term: tuple[tuple[str, ...], bool], low: int, high: int, limit: int) -> list[int]:
        """Where the term matches, from token ``low`` up to ``high``; at most ``limit`` of them."""
        (words, prefix), folded, out = term, self.folded, []
        size, last, inner = len(words), words[-1], list(words[:-1])
        for start in _candidates(folded, words[0], size == 1 and prefix, low, min(high, self.count)):
            got = folded[start : start + size]
            if len(got) == size and got[:-1] == inner and (got[-1].startswith(last) if prefix else got[-1] == last):
                out.append(start)
                if len(out) == limit:
                    break
        return out

    def sentence_before(self, i: int) -> int:
        """The last token at or before ``i`` that FTS5 takes for a sentence start: token 0, or
        one whose gap ends in a ``.`` or ``:`` and white space. Each gap is looked at once,
        and only as far as the matches asked about reach."""
        if i > self._scanned:
            gaps = self.parts[2 * self._scanned + 2 : 2 * i + 1 : 2]  # before tokens _scanned+1 .. i
            found = enumerate(gaps, self._scanned + 1)
            self._sentences += [n for n, gap in found if len(gap) > 1 and _ends_sentence(gap)]
            self._scanned = i
        at = bisect_right(self._sentences, i)
        return self._sentences[at - 1] if at else 0

    def render(self, start: int, tokens: int) -> str:
        parts, end = self.parts, min(start + tokens, self.count) - 1
        first = 2 * start + 1 if start > 0 else 0  # from token ``start``, or the text's start
        stop = 2 * end + 3 if end == self.count - 1 else 2 * end + 2  # to the text's end, or token ``end``
        # The parts may be lower-cased: what is shown is cut from the text by their lengths.
        at = sum(map(len, parts[:first]))
        marks = iter(_merged(self.matches, start, end))
        mark = next(marks, None)
        out = ["…"] if start > 0 else []
        for k in range(first, stop):
            token = k // 2 if k % 2 else -1
            if mark is not None and token == mark[0]:
                out.append("**")
            out.append(_clip(self.text[at : at + len(parts[k])]))
            at += len(parts[k])
            if mark is not None and token == mark[1]:
                out.append("**")
                mark = next(marks, None)
        if end < self.count - 1:
            out.append("…")
        return "".join(out)


def _folded_tokens(tokens: list[str]) -> list[str]:
    """Each token folded; each distinct token once (a long text repeats its words)."""
    folded = {token: _fold_text(token) for token in set(tokens)}
    return [folded[t] for t in tokens]


def _candidates(folded: list[str], head: str, prefix: bool, low: int, high: int) -> Iterator[int]:
    """Tokens in ``[low, high)`` where a term's first word may match: equal to ``head``, or
    beginning with it for a one-word prefix term. ``list.index`` finds equal ones at C speed."""
    if prefix:
        yield from (i for i, t in enumerate(folded[low:high], low) if t.startswith(head))
        return
    at = low - 1
    while True:
        try:
            at = folded.index(head, at + 1, high)
        except ValueError:
            return
        yield at


def _ends_sentence(gap: str) -> bool:
    return gap[-1] in " \t\n\r" and _SENTENCE_GAP.search(gap) is not None


class _Chars(_Column):
    """One column as the trigram index sees it: a token at every character but the last two.

    ``shortest`` is the shortest term looked for: 3 for the trigram index, which cannot
    match less; a substring scan (``ILIKE``) finds shorter terms too, each one token."""

    __slots__ = ("_sentences", "lowered", "shortest")

    def __init__(self, text: str, shortest: int = 3) -> None:
        # Shorter terms can match in the last two characters: then every character is a token.
        super().__init__(text, max(0, len(text) - 2) if shortest >= 3 else len(text))
        self.shortest = shortest
        lowered = text.lower()
        if len(lowered) != len(text):  # a character that lower-cases to two ('İ'): keep offsets
            lowered = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
        self.lowered = lowered
        self._sentences: tuple[list[int], list[int]] | None = None

    def wanted(self, term: str) -> bool:
        return len(term) >= max(1, self.shortest)

    def size(self, term: str) -> int:
        return max(1, len(term) - 2)

    def starts(self, term: str, low: int, high: int, limit: int) -> list[int]:
        """Where the term occurs (overlapping ones too), from ``low`` up to ``high``."""
        out, end = [], min(high, self.count) + len(term) - 1
        at = self.lowered.find(term, low, end)
        while at >= 0 and len(out) < limit:
            out.append(at)
            at = self.lowered.find(term, at + 1, end)
        return out

    def sentence_before(self, i: int) -> int:
        """As :meth:`_Words.sentence_before`, where every character after ". " up to the next
        non-space is a token that starts a sentence."""
        if self._sentences is None:
            runs = [(m.start() + 2, m.end()) for m in _SENTENCE_END.finditer(self.text)]
            self._sentences = ([r[0] for r in runs], [r[1] for r in runs])
        lows, highs = self._sentences
        at = bisect_right(lows, i)
        return min(i, highs[at - 1]) if at else 0

    def render(self, start: int, tokens: int) -> str:
        # A token spans three characters, so the window is a short run of text.
        text, end = self.text, min(start + tokens, self.count) - 1
        stop = end + 3  # past the window's last character
        # As _merged, in characters: matches that share one are joined (FTS5 joins only
        # those sharing a token, and then repeats text between touching ones).
        marks: list[list[int]] = []
        for first, _size, index in self.matches:
            if first > end:
                break
            high = first + len(self.terms[index])
            if marks and first < marks[-1][1]:
                marks[-1][1] = max(marks[-1][1], high)
            else:
                marks.append([first, high])
        out = ["…"] if start > 0 else []
        cursor = start
        for low, high in marks:
            if low >= start:
                out += [text[cursor:low], "**", text[low : min(high, stop)], "**"]
                cursor = min(high, stop)
        out += [text[cursor:]] if end == self.count - 1 else [text[cursor:stop], "…"]
        return "".join(out)


class _Span:
    """The matches beginning in a window ``[start, start + tokens)`` that only moves forward,
    with how many there are of each term: each match enters and leaves once."""

    def __init__(self, matches: list[Match], tokens: int) -> None:
        self.matches, self.tokens = matches, tokens
        self.low = self.high = self.distinct = 0
        self.counts: dict[int, int] = {}

    def at(self, start: int) -> tuple[int, int, int]:
        """Score of the window at ``start`` (1000 per term, 1 per repeat), and the first and
        past-the-last token its matches cover (-1 when it holds none)."""
        matches, counts = self.matches, self.counts
        while self.high < len(matches) and matches[self.high][0] < start + self.tokens:
            term = matches[self.high][2]
            counts[term] = counts.get(term, 0) + 1
            self.distinct += counts[term] == 1
            self.high += 1
        while self.low < self.high and matches[self.low][0] < start:
            term = matches[self.low][2]
            counts[term] -= 1
            self.distinct -= counts[term] == 0
            self.low += 1
        held = self.high - self.low
        if not held:
            return 0, -1, -1
        last = matches[self.high - 1]
        return 1000 * self.distinct + held - self.distinct, matches[self.low][0], last[0] + last[1]


def _window(column: _Column, tokens: int) -> tuple[int, int]:
    """``(score, first token)`` of the column's best window; ``(0, 0)`` without matches.

    As FTS5 does: a window starting at each match, its matches centred; and, in a text
    longer than the window, one starting at the sentence before the match, with a bonus.
    Match starts and their sentences only grow, so each window slides forward."""
    best = (0, 0)
    count = column.count
    ahead, behind = _Span(column.matches, tokens), _Span(column.matches, tokens)
    for first, _size, _index in column.matches:
        score, low, high = ahead.at(first)
        if score > best[0]:
            # Centred as C divides, toward zero: matches wider than the window start at the first.
            best = (score, max(0, min(low - int((tokens - (high - low)) / 2), count - tokens)))
        if count > tokens:
            sentence = column.sentence_before(first)
            if sentence < first:
                score = behind.at(sentence)[0] + (120 if sentence == 0 else 100)
                if score > best[0]:
                    best = (score, sentence)
    return best


class _Tree:
    """The query as nested tuples of term indexes, to tell which terms a row matched."""

    def __init__(self) -> None:
        self.terms: list[Any] = []

    def index(self, node: QueryNode, key: Any) -> Any:
        if isinstance(node, Term):
            term = key(node)
            if term not in self.terms:
                self.terms.append(term)
            return self.terms.index(term)
        if isinstance(node, Not):
            return ("not", self.index(node.keep, key), self.index(node.drop, key))
        return ("and" if isinstance(node, And) else "or", *(self.index(p, key) for p in node.parts))


def _active(tree: Any, present: set[int]) -> set[int] | None:
    """The terms taking part in the row's match, or None when ``tree`` does not match."""
    if isinstance(tree, int):
        return {tree} if tree in present else None
    kind, *parts = tree
    if kind == "not":
        keep = _active(parts[0], present)
        return keep if keep is not None and _active(parts[1], present) is None else None
    found = [_active(p, present) for p in parts]
    if kind == "and" and None in found:
        return None
    matched = [f for f in found if f is not None]
    return set().union(*matched) if matched else None


class Highlighter:
    """Cuts word-index snippets for one query: its terms folded once, then :meth:`snippet` per row."""

    def __init__(self, node: QueryNode | None) -> None:
        tree = _Tree()
        self._tree = tree.index(node, self._term) if node is not None else None
        self.terms: list[Any] = tree.terms

    @staticmethod
    def _term(node: Term) -> Any:
        return (tuple(_fold(t) for t in _SPLIT.split(node.text)[1::2]), node.prefix)

    def _column(self, text: str) -> _Column:
        return _Words(text)

    def snippet(self, texts: Sequence[str | None], tokens: int = SNIPPET_TOKENS) -> str:
        """The snippet of one row given its indexed columns (content, tool name, tool arguments)."""
        if tokens < 1:
            raise ValueError(f"a snippet needs at least 1 token, not {tokens}")
        columns = [self._column(t or "") for t in texts]
        for column in columns:
            if column.count:
                column.find(self.terms, tokens)
        present = {m[2] for c in columns for m in c.matches}
        active = _active(self._tree, present) if self._tree is not None else None
        best: tuple[int, int, _Column] | None = None
        for column in columns:
            if column.matches:
                column.matches = [m for m in column.matches if active and m[2] in active]
            score, start = _window(column, tokens)
            if best is None or score > best[0]:
                best = (score, start, column)
        return best[2].render(best[1], tokens) if best is not None and best[2].count else ""


class SubstringHighlighter(Highlighter):
    """Cuts snippets the way FTS5 does over the trigram index: substrings, case-insensitive,
    each term whole (a ``*`` means nothing to substrings); overlapping matches marked once.
    ``shortest``: terms shorter than this are not looked for (3, as the trigram index)."""

    def __init__(self, node: QueryNode | None, shortest: int = 3) -> None:
        super().__init__(node)
        self.shortest = shortest

    @staticmethod
    def _term(node: Term) -> Any:
        return node.text.lower()

    def _column(self, text: str) -> _Column:
        return _Chars(text, self.shortest)


def snippet_by(highlighter: Highlighter, texts: Sequence[str | None], deadline: float | None = None) -> str:
    """The highlighter's snippet of a row, or, once ``time.monotonic()`` is past ``deadline``,
    the start of its first non-empty column, unmarked: a search out of time still names its
    hits without reading them through."""
    if deadline is None or time.monotonic() < deadline:
        return highlighter.snippet(texts)
    text = next((t for t in texts if t), "")
    return text if len(text) <= PLAIN_SNIPPET_CHARS else text[:PLAIN_SNIPPET_CHARS] + "…"
