"""Full-text search over messages: query sanitising, FTS5/trigram/LIKE, context, lineage roots.

Any user text is a valid query. It is cut into whitespace-separated terms and
each becomes a quoted FTS5 phrase, so quotes, ``AND``/``OR``/``NOT``/``NEAR``,
``-``, ``.``, ``:``, ``*`` and parentheses are literal text, never syntax (a
trailing ``*`` still means a prefix). Word search (unicode61, BM25 or newest
first) runs first; when it finds nothing, the trigram index finds substrings
and CJK text (newest first), and where the SQLite build lacks trigram a
bounded ``LIKE`` scan does. "Newest first" is insertion order (message id).
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from .lineage import lineage_roots
from .schema import has_trigram_index
from .titles import escape_like

__all__ = ["MAX_QUERY_CHARS", "MAX_TERMS", "RANK_CANDIDATES", "SearchHit", "fts_query", "search_messages", "split_terms"]

MAX_QUERY_CHARS = 1_000
MAX_TERMS = 32
RANK_CANDIDATES = 20_000
CONTEXT_CHARS = 300
# Weights for (content, tool_name, tool_args): what was said outranks plumbing.
_BM25 = "1.0, 0.5, 0.5"
_WORD = re.compile(r"\w", re.UNICODE)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

SortOrder = Literal["rank", "time"]


@dataclass
class SearchHit:
    """One matching message, with a snippet, its neighbours and its lineage root."""

    session_id: str
    root_session_id: str
    message_id: int
    role: str
    snippet: str
    timestamp: float
    source: str | None = None
    title: str | None = None
    root_title: str | None = None
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("extra")
        return data


def split_terms(query: str) -> list[tuple[str, bool]]:
    """``(text, is_prefix)`` per usable term of ``query``; terms without a letter or digit are dropped."""
    text = _CONTROL.sub(" ", query[:MAX_QUERY_CHARS])
    terms: list[tuple[str, bool]] = []
    for chunk in text.split():
        prefix = chunk.endswith("*")
        chunk = chunk.replace('"', " ").strip("*").strip()
        if chunk and _WORD.search(chunk):
            terms.append((chunk, prefix))
        if len(terms) >= MAX_TERMS:
            break
    return terms


def _phrase(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def fts_query(query: str) -> str | None:
    """A safe FTS5 MATCH expression for any text (all terms must match), or None if nothing is left."""
    terms = split_terms(query)
    if not terms:
        return None
    return " ".join(_phrase(t) + ("*" if prefix else "") for t, prefix in terms)


def _filters(source: str | None, role: str | None, session_id: str | None) -> tuple[str, list[Any]]:
    sql, params = "", []
    for column, value in (("s.source", source), ("m.role", role), ("m.session_id", session_id)):
        if value is not None:
            sql += f" AND {column} = ?"
            params.append(value)
    return sql, params


def _run(conn: sqlite3.Connection, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError as exc:
        # A query sanitising missed must not take the caller down: no hits.
        if "fts5" in str(exc).lower() or "syntax" in str(exc).lower():
            return []
        raise


def _fts_rows(
    conn: sqlite3.Connection, table: str, match: str, where: str, params: list[Any], order: SortOrder, limit: int
) -> list[tuple[Any, ...]]:
    # Two steps: choose the top ``limit`` ids, then build snippets for those only
    # (SQLite would otherwise compute a snippet for every match before sorting).
    # Newest first is rowid order, which FTS5 walks backwards and stops at ``limit``.
    # BM25 ranks the newest RANK_CANDIDATES matches: a word in 240,000 of a million
    # messages costs ~60 ms to rank in full and ~19 ms this way, and for so common
    # a word the scores barely differ anyway.
    joins = (
        f" JOIN messages m ON m.id = {table}.rowid JOIN sessions s ON s.id = m.session_id" if where else ""
    )
    matches = f"FROM {table}{joins} WHERE {table} MATCH ?{where}"
    if order == "rank":
        sql = (
            f"SELECT id FROM (SELECT {table}.rowid AS id, bm25({table}, {_BM25}) AS score {matches} "
            f"ORDER BY {table}.rowid DESC LIMIT {RANK_CANDIDATES}) ORDER BY score LIMIT ?"
        )
    else:
        sql = f"SELECT {table}.rowid {matches} ORDER BY {table}.rowid DESC LIMIT ?"
    ids = [row[0] for row in _run(conn, sql, [match, *params, limit])]
    detail = (
        f"SELECT m.id, m.session_id, m.role, m.timestamp, s.source, s.title, "
        f"snippet({table}, -1, '**', '**', '…', 12) "
        f"FROM {table} JOIN messages m ON m.id = {table}.rowid JOIN sessions s ON s.id = m.session_id "
        f"WHERE {table} MATCH ? AND {table}.rowid = ?"
    )
    rows = []
    for message_id in ids:
        rows += _run(conn, detail, [match, message_id])
    return rows


def _like_rows(
    conn: sqlite3.Connection, terms: list[tuple[str, bool]], where: str, params: list[Any], limit: int
) -> list[tuple[Any, ...]]:
    # Fallback without a trigram index: a scan, newest first, stopped at ``limit``.
    likes = " AND ".join("(m.content LIKE ? ESCAPE '\\' OR m.tool_name LIKE ? ESCAPE '\\')" for _ in terms)
    like_params: list[Any] = []
    for text, _prefix in terms:
        pattern = "%" + escape_like(text) + "%"
        like_params += [pattern, pattern]
    sql = (
        "SELECT m.id, m.session_id, m.role, m.timestamp, s.source, s.title, substr(m.content, 1, 200) "
        f"FROM messages m JOIN sessions s ON s.id = m.session_id WHERE {likes}{where} "
        "ORDER BY m.id DESC LIMIT ?"
    )
    return _run(conn, sql, [*like_params, *params, limit])


def _neighbour(conn: sqlite3.Connection, session_id: str, message_id: int, before: bool) -> dict[str, Any] | None:
    op, order = ("<", "DESC") if before else (">", "ASC")
    row = conn.execute(
        f"SELECT id, role, content, tool_name FROM messages WHERE session_id = ? AND id {op} ? "
        f"ORDER BY id {order} LIMIT 1",
        (session_id, message_id),
    ).fetchone()
    if row is None:
        return None
    content = row[2] or ""
    if len(content) > CONTEXT_CHARS:
        content = content[:CONTEXT_CHARS] + "…"
    return {"message_id": row[0], "role": row[1], "content": content, "tool_name": row[3]}


def search_messages(
    conn: sqlite3.Connection,
    query: str,
    *,
    limit: int = 20,
    sort: SortOrder = "rank",
    source: str | None = None,
    role: str | None = None,
    session_id: str | None = None,
    context: bool = True,
    trigram: bool | None = None,
) -> list[SearchHit]:
    """Messages matching every term of ``query``; never raises on the query's text.

    ``trigram=None`` uses the trigram index when this database has one.
    """
    if sort not in ("rank", "time"):
        raise ValueError(f"sort must be 'rank' or 'time', not {sort!r}")
    terms = split_terms(query)
    limit = max(1, min(int(limit), 1_000))
    if not terms:
        return []
    where, params = _filters(source, role, session_id)
    rows = _fts_rows(conn, "messages_fts", fts_query(query), where, params, sort, limit)
    if not rows:
        use_trigram = has_trigram_index(conn) if trigram is None else trigram and has_trigram_index(conn)
        # Trigram MATCH needs three characters per term; shorter terms go to LIKE.
        if use_trigram and all(len(text) >= 3 for text, _ in terms):
            match = " ".join(_phrase(text) for text, _ in terms)
            # Newest first even for sort="rank": BM25 over trigrams ranks poorly and
            # costs ~40 ms on a million messages; walking rowids backwards costs ~0.3 ms.
            rows = _fts_rows(conn, "messages_trigram", match, where, params, "time", limit)
        else:
            rows = _like_rows(conn, terms, where, params, limit)
    roots = lineage_roots(conn, {row[1] for row in rows})
    titles = _titles(conn, set(roots.values()))
    hits = []
    for message_id, sid, msg_role, timestamp, src, title, snippet in rows:
        root = roots.get(sid, sid)
        hit = SearchHit(
            session_id=sid,
            root_session_id=root,
            message_id=message_id,
            role=msg_role,
            snippet=snippet or "",
            timestamp=timestamp,
            source=src,
            title=title,
            root_title=titles.get(root),
        )
        if context:
            hit.before = _neighbour(conn, sid, message_id, before=True)
            hit.after = _neighbour(conn, sid, message_id, before=False)
        hits.append(hit)
    return hits


def _titles(conn: sqlite3.Connection, ids: set[str]) -> dict[str, str | None]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    return dict(conn.execute(f"SELECT id, title FROM sessions WHERE id IN ({marks})", list(ids)).fetchall())
