"""Session titles: sanitised, at most 100 characters, unique, numbered along a lineage.

``Refactor auth`` continued by compression or a branch becomes ``Refactor auth #2``,
then ``#3``. Existing numbers are found with ``LIKE`` whose wildcards in the
title itself are escaped, so ``100%_done`` never matches ``100xydone #2``.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata

__all__ = ["MAX_TITLE_CHARS", "base_title", "escape_like", "next_numbered_title", "next_title_among", "sanitize_title"]

MAX_TITLE_CHARS = 100
_NUMBERED = re.compile(r"^(?P<base>.*?) #(?P<n>\d+)$")


def sanitize_title(title: str | None) -> str | None:
    """One line of printable text, whitespace collapsed, at most 100 characters; None if empty."""
    if title is None:
        return None
    chars = [" " if unicodedata.category(c)[0] in "CZ" else c for c in title]
    text = " ".join("".join(chars).split())
    if len(text) > MAX_TITLE_CHARS:
        text = text[:MAX_TITLE_CHARS].rstrip()
    return text or None


def base_title(title: str) -> str:
    """``Refactor auth #3`` -> ``Refactor auth``."""
    match = _NUMBERED.match(title)
    return match.group("base") if match else title


def escape_like(text: str, escape: str = "\\") -> str:
    """``text`` as a literal inside a LIKE pattern using ``ESCAPE escape``."""
    return text.replace(escape, escape * 2).replace("%", escape + "%").replace("_", escape + "_")


def next_numbered_title(conn: sqlite3.Connection, title: str) -> str:
    """The next free ``<base> #N`` in the lineage of ``title`` (N >= 2)."""
    base = base_title(title)
    rows = conn.execute(
        "SELECT title FROM sessions WHERE title = ? OR title LIKE ? ESCAPE '\\'",
        (base, escape_like(base) + " #%"),
    ).fetchall()
    return next_title_among(title, [row[0] for row in rows])


def next_title_among(title: str, existing: list[str]) -> str:
    """The next free ``<base> #N`` for ``title`` given the ``existing`` titles of its lineage (any backend)."""
    base = base_title(title)
    highest = 1
    for name in existing:
        match = _NUMBERED.match(name)
        if match and match.group("base") == base:
            highest = max(highest, int(match.group("n")))
    suffix = f" #{highest + 1}"
    # Leave room for the suffix so a long base still fits in 100 characters.
    return base[: MAX_TITLE_CHARS - len(suffix)].rstrip() + suffix
