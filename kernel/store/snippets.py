"""Search snippets cut in Python from rows the search already read.

FTS5's ``snippet()`` needs a full-text cursor positioned on the row, so a search
that picks its top hits first would run the whole query again, once per hit, just
to mark words: about as long as choosing the hits. The words to mark are known
from the parsed query, so the snippet is cut here instead, the way FTS5 cuts it:
the best window of :data:`SNIPPET_TOKENS` tokens of the best column (a term's
first match scores 1000, a repeat 1; a window may also start at a sentence),
every match wrapped in ``**``, ``…`` where text was left out, and a term of an
``OR`` branch the row did not match left unmarked. Tokens follow the word index's
``unicode61 remove_diacritics 2`` tokenizer: runs of letters, digits and combining
marks, compared after lower-casing and removing accents. tests/kernel/store/
test_snippets.py compares the result with FTS5's own on generated text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from itertools import accumulate
from typing import Any

from .query import And, Not, QueryNode, Term

__all__ = ["SNIPPET_TOKENS", "Highlighter"]

SNIPPET_TOKENS = 12
# One group, so re.split returns [gap, token, gap, token, ..., gap] in one call.
_SPLIT = re.compile(r"((?:[^\W_]|[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f])+)")
_SPLIT_ASCII = re.compile(r"([a-z0-9]+)")
_SPACE = " \t\n\r"

# (first token, token count, term index) of one match.
Match = tuple[int, int, int]


@lru_cache(maxsize=8192)
def _fold(word: str) -> str:
    """A token as unicode61 compares it: lower case, accents removed."""
    decomposed = unicodedata.normalize("NFD", word.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


class _Column:
    """One column's text split into tokens and the gaps between them, and the tokens folded."""

    __slots__ = ("folded", "lowered", "matches", "parts", "text", "tokens")

    def __init__(self, text: str) -> None:
        self.text = text
        if text.isascii():
            # ASCII folds by lower-casing alone, which keeps every offset.
            self.lowered = text.lower()
            parts = _SPLIT_ASCII.split(self.lowered)
            self.tokens = self.folded = parts[1::2]
        else:
            self.lowered = ""
            parts = _SPLIT.split(text)
            self.tokens = parts[1::2]
            self.folded = []  # folded on first use: most columns match no term
        self.parts = parts  # gap, token, gap, ..., token, gap
        self.matches: list[Match] = []

    def offsets(self) -> list[int]:
        """Where each token starts in the text."""
        return list(accumulate(map(len, self.parts), initial=0))[1::2]

    def sentence_before(self, i: int) -> int:
        """The last token at or before ``i`` that FTS5 takes for a sentence start: token 0, or one
        that follows a ``.`` or ``:`` and white space."""
        parts = self.parts
        while i > 0:
            gap = parts[2 * i]
            if len(gap) > 1:  # a '.' or ':' and at least one space
                stripped = gap.rstrip(_SPACE)
                if len(stripped) < len(gap) and stripped[-1:] in (".", ":"):
                    return i
            i -= 1
        return 0


_EMPTY = _Column("")


class Highlighter:
    """Cuts snippets for one query: its terms folded once, then :meth:`snippet` per row."""

    def __init__(self, node: QueryNode | None) -> None:
        self.terms: list[tuple[tuple[str, ...], bool]] = []
        self._tree = self._index(node) if node is not None else None

    def _index(self, node: QueryNode) -> Any:
        # The query as nested tuples of term indexes, to tell which terms a row matched.
        if isinstance(node, Term):
            key = (tuple(_fold(t) for t in _SPLIT.split(node.text)[1::2]), node.prefix)
            if key not in self.terms:
                self.terms.append(key)
            return self.terms.index(key)
        if isinstance(node, Not):
            return ("not", self._index(node.keep), self._index(node.drop))
        return ("and" if isinstance(node, And) else "or", *(self._index(p) for p in node.parts))

    def _active(self, tree: Any, present: set[int]) -> set[int] | None:
        """The terms taking part in the row's match, or None when ``tree`` does not match."""
        if isinstance(tree, int):
            return {tree} if tree in present else None
        kind, *parts = tree
        if kind == "not":
            keep = self._active(parts[0], present)
            return keep if keep is not None and self._active(parts[1], present) is None else None
        found = [self._active(p, present) for p in parts]
        if kind == "and" and None in found:
            return None
        matched = [f for f in found if f is not None]
        return set().union(*matched) if matched else None

    def _find(self, column: _Column) -> None:
        """Every match of every term in ``column``, in token order."""
        folded = column.folded
        for index, (words, prefix) in enumerate(self.terms):
            # A substring test first (exact for ASCII text): most terms are in few columns.
            if not words or (column.lowered and words[0] not in column.lowered):
                continue
            if not folded:
                folded = column.folded = [_fold(t) for t in column.tokens]
            size, last = len(words), words[-1]
            for start in [i for i, t in enumerate(folded) if t == words[0] or (size == 1 and prefix and t.startswith(last))]:
                got = folded[start : start + size]
                if len(got) == size and got[:-1] == list(words[:-1]) and (got[-1].startswith(last) if prefix else got[-1] == last):
                    column.matches.append((start, size, index))
        column.matches.sort()

    def snippet(self, texts: Sequence[str | None], tokens: int = SNIPPET_TOKENS) -> str:
        """The snippet of one row given its indexed columns (content, tool name, tool arguments)."""
        if tokens < 1:
            raise ValueError(f"a snippet needs at least 1 token, not {tokens}")
        columns = [_Column(t) if t else _EMPTY for t in texts]
        for column in columns:
            if column.tokens:
                self._find(column)
        present = {m[2] for c in columns for m in c.matches}
        active = self._active(self._tree, present) if self._tree is not None else None
        best: tuple[int, int, _Column] | None = None
        for column in columns:
            if column.matches:
                column.matches = [m for m in column.matches if active and m[2] in active]
            score, start = _window(column, tokens)
            if best is None or score > best[0]:
                best = (score, start, column)
        return _render(best[2], best[1], tokens) if best is not None and best[2].tokens else ""


def _score(matches: list[Match], start: int, tokens: int) -> tuple[int, int, int]:
    """Score of the matches beginning in ``[start, start + tokens)``, and the tokens they cover."""
    seen: set[int] = set()
    score, low, high = 0, -1, -1
    for first, size, index in matches:
        if start <= first < start + tokens:
            score += 1 if index in seen else 1000
            seen.add(index)
            low = first if low < 0 else low
            high = first + size
    return score, low, high


def _window(column: _Column, tokens: int) -> tuple[int, int]:
    """``(score, first token)`` of the column's best window; ``(0, 0)`` without matches."""
    best = (0, 0)
    count = len(column.tokens)
    for first, _size, _index in column.matches:
        score, low, high = _score(column.matches, first, tokens)
        if score > best[0]:
            # The matches centred in the window, kept inside the text.
            best = (score, max(0, min(low - (tokens - (high - low)) // 2, count - tokens)))
        if count > tokens:
            sentence = column.sentence_before(first)
            if sentence < first:
                score = _score(column.matches, sentence, tokens)[0] + (120 if sentence == 0 else 100)
                if score > best[0]:
                    best = (score, sentence)
    return best


def _render(column: _Column, start: int, tokens: int) -> str:
    text, offsets = column.text, column.offsets()
    end = min(start + tokens, len(column.tokens)) - 1

    def stop(i: int) -> int:  # where token i ends
        return offsets[i] + len(column.tokens[i])

    out = ["…" if start > 0 else ""]
    cursor = offsets[start] if start > 0 else 0
    marks: list[list[int]] = []
    for first, size, _ in column.matches:  # overlapping matches are marked once
        last = first + size - 1
        if last < start or first > end:
            continue
        if marks and first <= marks[-1][1]:
            marks[-1][1] = max(marks[-1][1], last)
        else:
            marks.append([first, last])
    for first, last in marks:
        first, last = max(first, start), min(last, end)
        out += [text[cursor : offsets[first]], "**", text[offsets[first] : stop(last)], "**"]
        cursor = stop(last)
    out += [text[cursor:]] if end == len(column.tokens) - 1 else [text[cursor : stop(end)], "…"]
    return "".join(out)
