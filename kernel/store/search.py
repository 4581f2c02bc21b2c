"""Full-text search over messages: query language, FTS5/trigram/LIKE, context, lineage roots.

Any user text is a valid query (:mod:`.query`): ``OR``, ``NOT``, ``"phrases"``,
``prefix*`` and parentheses work as in FTS5, everything else is literal. Word
search (unicode61, BM25 over every match, or newest first) runs first; when it
finds nothing and some term is no word of the index, the trigram index finds
substrings and CJK text (newest first; the messages it has not indexed yet
are read from the table, see :mod:`.substring_index`), and where the SQLite
build lacks trigram a bounded ``LIKE`` scan does. "Newest
first" is insertion order (message id). A word search costs two statements
however many hits it returns: the ids, then the hits with their sessions and
neighbours, whose snippets are cut in Python (:mod:`.snippets`, for substring hits too); a third finds
lineage roots when a hit's session has a parent.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from .lineage import MAX_DEPTH
from .query import MAX_QUERY_CHARS, MAX_TERMS, And, Not, Or, Term, parse_query, to_fts5
from .schema import has_trigram_index
from .snippets import Highlighter, SubstringHighlighter, snippet_by
from .substring_index import indexed_through
from .titles import escape_like

__all__ = [
    "CONTEXT_CHARS",
    "MAX_QUERY_CHARS",
    "MAX_TERMS",
    "SearchHit",
    "SortOrder",
    "build_hits",
    "fts_query",
    "search_messages",
]

CONTEXT_CHARS = 300
# Weights for (content, tool_name, tool_args): what was said outranks plumbing.
_BM25 = "1.0, 0.5, 0.5"

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


def fts_query(query: str) -> str | None:
    """A safe FTS5 MATCH expression for any text, or None if nothing searchable is left."""
    node = parse_query(query)
    return to_fts5(node) if node is not None else None


def _filters(
    source: str | None, role: str | None, session_id: str | None, tenant: str | None = None
) -> tuple[str, list[Any]]:
    sql, params = "", []
    for column, value in (("s.source", source), ("m.role", role), ("m.session_id", session_id), ("s.tenant", tenant)):
        if value is not None:
            sql += f" AND {column} = ?"
            params.append(value)
    return sql, params


def _run(conn: sqlite3.Connection, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    try:
        rows.extend(conn.execute(sql, params))
    except sqlite3.OperationalError as exc:
        message = str(exc).lower()
        if "interrupted" in message:
            return rows  # past the deadline (_stopped_at): the rows read by then
        # A query sanitising missed must not take the caller down: no hits.
        if "fts5" in message or "syntax" in message:
            return []
        raise
    return rows


@contextmanager
def _stopped_at(conn: sqlite3.Connection, deadline: float | None) -> Iterator[None]:
    """Statements run in here are interrupted once ``time.monotonic()`` passes ``deadline``
    (SQLite asks every 1,000 virtual-machine steps); :func:`_run` keeps what they had read."""
    if deadline is None:
        yield
        return
    conn.set_progress_handler(lambda: time.monotonic() > deadline, 1_000)
    try:
        yield
    finally:
        conn.set_progress_handler(None, 0)


def _fts_rows(
    conn: sqlite3.Connection,
    table: str,
    match: str,
    where: str,
    params: list[Any],
    order: SortOrder,
    limit: int,
    highlighter: Highlighter,
    context: bool = False,
    deadline: float | None = None,
) -> list[tuple[Any, ...]]:
    # Two steps: choose the top ``limit`` ids, then read those rows.
    return _hit_rows(conn, _fts_ids(conn, table, match, where, params, order, limit), highlighter, context, deadline)


def _fts_ids(
    conn: sqlite3.Connection, table: str, match: str, where: str, params: list[Any], order: SortOrder, limit: int
) -> list[int]:
    """The top ``limit`` ids: BM25 over every match, or rowid order, which FTS5 walks
    backwards and stops at ``limit``."""
    # CROSS JOIN fixes the join order (SQLite's rule): the full-text index drives,
    # rows are looked up by key. Left to itself the planner may walk sessions first.
    joins = f" CROSS JOIN messages m ON m.id = {table}.rowid CROSS JOIN sessions s ON s.id = m.session_id" if where else ""
    matches = f"FROM {table}{joins} WHERE {table} MATCH ?{where}"
    if order == "rank":
        sql = f"SELECT {table}.rowid {matches} ORDER BY bm25({table}, {_BM25}), {table}.rowid DESC LIMIT ?"
    else:
        sql = f"SELECT {table}.rowid {matches} ORDER BY {table}.rowid DESC LIMIT ?"
    return [row[0] for row in _run(conn, sql, [match, *params, limit])]


def _hit_rows(
    conn: sqlite3.Connection, ids: list[int], highlighter: Highlighter, context: bool, deadline: float | None
) -> list[tuple[Any, ...]]:
    """The hit rows of ``ids`` (in that order): session columns, a snippet, neighbours when asked."""
    if not ids:
        return []
    values = ",".join(["(?)"] * len(ids))
    # Snippets cut in Python from the row (snippets.py): FTS5's snippet() would seek every
    # hit with the whole query again, which costs as much as choosing them, and its time
    # grows with the square of the matches in one message. The neighbours come in the same
    # statement when asked for.
    detail = (
        f"WITH ids(id) AS (VALUES {values}) "
        "SELECT m.id, m.session_id, m.role, m.timestamp, s.source, s.title, s.parent_session_id, "
        f"m.content, m.tool_name, m.tool_args{_NEIGHBOUR_COLUMNS if context else ''} "
        "FROM ids CROSS JOIN messages m ON m.id = ids.id CROSS JOIN sessions s ON s.id = m.session_id"
        f"{_NEIGHBOUR_JOINS if context else ''}"
    )
    found = {row[0]: (*row[:6], snippet_by(highlighter, row[7:10], deadline), row[6], *row[10:]) for row in _run(conn, detail, ids)}
    return [found[i] for i in ids if i in found]


# What a substring search reads: the columns the word index holds.
_LIKE_COLUMNS = ("m.content", "m.tool_name", "m.tool_args")


def _like(node: Any, params: list[Any]) -> str:
    """The query tree as substring tests on a message's text, tool name and arguments (LIKE), so the
    fallback answers OR and NOT as the index does. ``ifnull``: a NULL inside NOT would drop the row."""
    if isinstance(node, Term):
        pattern = "%" + escape_like(node.text) + "%"
        params += [pattern] * len(_LIKE_COLUMNS)
        return "(" + " OR ".join(f"ifnull({c}, '') LIKE ? ESCAPE '\\'" for c in _LIKE_COLUMNS) + ")"
    if isinstance(node, Not):
        return f"({_like(node.keep, params)} AND NOT {_like(node.drop, params)})"
    glue = " AND " if isinstance(node, And) else " OR "
    return "(" + glue.join(_like(part, params) for part in node.parts) + ")"


def _substring_rows(
    conn: sqlite3.Connection,
    node: Any,
    where: str,
    params: list[Any],
    limit: int,
    context: bool,
    deadline: float | None,
) -> list[tuple[Any, ...]]:
    """Substring hits, newest first: messages the batch indexer has not reached yet
    (:mod:`.substring_index`) read from the table, then the trigram index for the rest."""
    through = indexed_through(conn)
    fresh: list[int] = []
    if through is not None:
        like_params: list[Any] = []
        likes = _like(node, like_params)
        # The id range drives (CROSS JOIN): only the messages above the mark are scanned.
        sql = (
            "SELECT m.id FROM messages m CROSS JOIN sessions s ON s.id = m.session_id "
            f"WHERE m.id > ? AND {likes}{where} ORDER BY m.id DESC LIMIT ?"
        )
        fresh = [row[0] for row in _run(conn, sql, [through, *like_params, *params, limit])]
    older: list[int] = []
    if len(fresh) < limit:  # prefix stars mean nothing to trigrams (every substring matches already)
        older = _fts_ids(conn, "messages_trigram", to_fts5(_unstarred(node)), where, params, "time", limit - len(fresh))
    return _hit_rows(conn, fresh + older, SubstringHighlighter(node), context, deadline)


def _like_rows(conn: sqlite3.Connection, node: Any, where: str, params: list[Any], limit: int) -> list[tuple[Any, ...]]:
    # Fallback without a trigram index (or for terms under three characters): a scan,
    # newest first, stopped at ``limit``.
    like_params: list[Any] = []
    likes = _like(node, like_params)
    sql = (
        "SELECT m.id, m.session_id, m.role, m.timestamp, s.source, s.title, substr(m.content, 1, 200), s.parent_session_id "
        f"FROM messages m JOIN sessions s ON s.id = m.session_id WHERE {likes}{where} "
        "ORDER BY m.id DESC LIMIT ?"
    )
    return _run(conn, sql, [*like_params, *params, limit])


def _cut(row: tuple[Any, ...] | None) -> dict[str, Any] | None:
    if row is None:
        return None
    content = row[2] or ""
    if len(content) > CONTEXT_CHARS:
        content = content[:CONTEXT_CHARS] + "…"
    return {"message_id": row[0], "role": row[1], "content": content, "tool_name": row[3]}


# A hit's neighbours in its session, as columns of the statement that reads the hit.
_NEIGHBOUR_COLUMNS = (
    f", b.id, b.role, substr(b.content, 1, {CONTEXT_CHARS + 1}), b.tool_name"
    f", a.id, a.role, substr(a.content, 1, {CONTEXT_CHARS + 1}), a.tool_name"
)
_NEIGHBOUR_JOINS = (
    " LEFT JOIN messages b ON b.id = (SELECT max(id) FROM messages WHERE session_id = m.session_id AND id < m.id)"
    " LEFT JOIN messages a ON a.id = (SELECT min(id) FROM messages WHERE session_id = m.session_id AND id > m.id)"
)


def _neighbours(conn: sqlite3.Connection, hits: list[tuple[str, int]]) -> dict[tuple[int, str], tuple[Any, ...]]:
    """``{(hit id, "before"|"after"): (id, role, content, tool_name)}`` for every hit, in one statement."""
    values = ",".join("(?, ?)" for _ in hits)
    sql = (
        f"WITH h(sid, mid) AS (VALUES {values}), "
        "n(mid, side, nid) AS ("
        "SELECT mid, 'before', (SELECT max(id) FROM messages WHERE session_id = h.sid AND id < h.mid) FROM h "
        "UNION ALL "
        "SELECT mid, 'after', (SELECT min(id) FROM messages WHERE session_id = h.sid AND id > h.mid) FROM h) "
        f"SELECT n.mid, n.side, m.id, m.role, substr(m.content, 1, {CONTEXT_CHARS + 1}), m.tool_name "
        "FROM n JOIN messages m ON m.id = n.nid"
    )
    params = [p for hit in hits for p in hit]
    return {(row[0], row[1]): row[2:] for row in conn.execute(sql, params)}


# ``{scope}`` and ``{parent_scope}`` keep a tenant's walk inside its own sessions: an ancestor of
# another tenant's is never reached, so neither its id nor its title comes back as a root.
_ROOTS_SQL = """
WITH RECURSIVE up(start, id, parent_session_id, depth) AS (
    SELECT id, id, parent_session_id, 0 FROM sessions WHERE id IN ({marks})
    UNION ALL
    SELECT up.start, s.id, s.parent_session_id, up.depth + 1
    FROM sessions s JOIN up ON s.id = up.parent_session_id
    WHERE up.depth < ?{scope}
)
SELECT up.start, up.id, s.title FROM up JOIN sessions s ON s.id = up.id
WHERE up.parent_session_id IS NULL OR up.depth = ?
  OR NOT EXISTS (SELECT 1 FROM sessions p WHERE p.id = up.parent_session_id{parent_scope})
"""


def _roots(
    conn: sqlite3.Connection, session_ids: set[str], tenant: str | None = None
) -> dict[str, tuple[str, str | None]]:
    """``{session id: (lineage root id, root title)}`` in one statement, within ``tenant`` when given."""
    if not session_ids:
        return {}
    ids = sorted(session_ids)
    scoped = tenant is not None
    sql = _ROOTS_SQL.format(
        marks=",".join("?" * len(ids)),
        scope=" AND s.tenant = ?" if scoped else "",
        parent_scope=" AND p.tenant = ?" if scoped else "",
    )
    params = [*ids, MAX_DEPTH, *([tenant] if scoped else []), MAX_DEPTH, *([tenant] if scoped else [])]
    return {row[0]: (row[1], row[2]) for row in conn.execute(sql, params)}


def build_hits(
    rows: list[tuple[Any, ...]],
    roots: dict[str, tuple[str, str | None]],
    neighbours: dict[tuple[int, str], tuple[Any, ...]] | None,
) -> list[SearchHit]:
    """SearchHits from ``(id, session_id, role, timestamp, source, title, snippet, ...)`` rows (any
    backend); columns after the seventh are ignored."""
    hits = []
    for message_id, sid, msg_role, timestamp, src, title, snippet, *_ in rows:
        root, root_title = roots.get(sid, (sid, title))
        hit = SearchHit(
            session_id=sid,
            root_session_id=root,
            message_id=message_id,
            role=msg_role,
            snippet=snippet or "",
            timestamp=timestamp,
            source=src,
            title=title,
            root_title=root_title,
        )
        if neighbours is not None:
            hit.before = _cut(neighbours.get((message_id, "before")))
            hit.after = _cut(neighbours.get((message_id, "after")))
        hits.append(hit)
    return hits


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
    tenant: str | None = None,
    deadline: float | None = None,
) -> list[SearchHit]:
    """Messages matching ``query`` (see :mod:`.query`); never raises on the query's text.

    ``trigram=None`` uses the trigram index when this database has one. ``tenant``
    limits everything to that tenant's sessions: the hits, their lineage roots,
    and the word check that decides whether to look for substrings. Past ``deadline``
    (a ``time.monotonic()`` value) a statement still running is interrupted and the rest of
    the hits get a plain snippet (:func:`.snippets.snippet_by`): what was found by then.
    """
    if sort not in ("rank", "time"):
        raise ValueError(f"sort must be 'rank' or 'time', not {sort!r}")
    limit = max(1, min(int(limit), 1_000))
    node = parse_query(query)
    if node is None:
        return []
    where, params = _filters(source, role, session_id, tenant)
    match = to_fts5(node)
    with _stopped_at(conn, deadline):
        rows = _fts_rows(conn, "messages_fts", match, where, params, sort, limit, Highlighter(node), context, deadline)
        if not rows and not _all_words_known(conn, _leaves(node), tenant):
            terms = _leaves(node)
            use_trigram = has_trigram_index(conn) if trigram is None else trigram and has_trigram_index(conn)
            # Trigram MATCH needs three characters per term; shorter terms go to LIKE.
            if use_trigram and all(len(t.text) >= 3 for t in terms):
                # Newest first even for sort="rank": BM25 over trigrams ranks poorly and
                # costs ~40 ms on a million messages; walking rowids backwards costs ~0.3 ms.
                rows = _substring_rows(conn, node, where, params, limit, context, deadline)
            else:
                rows = _like_rows(conn, node, where, params, limit)
    # Only a session with a parent can have another lineage root; most have none.
    roots = _roots(conn, {row[1] for row in rows if row[7] is not None}, tenant)
    if not (context and rows):
        neighbours = None
    elif len(rows[0]) > 8:  # read with the hits
        neighbours = {(row[0], side): row[at : at + 4] for row in rows for side, at in (("before", 8), ("after", 12)) if row[at] is not None}
    else:
        neighbours = _neighbours(conn, [(row[1], row[0]) for row in rows])
    return build_hits(rows, roots, neighbours)


def _all_words_known(conn: sqlite3.Connection, terms: list[Any], tenant: str | None = None) -> bool:
    """True when every term is a word of the word index on its own: the query just has no
    match, and a substring scan would only cost time. A term inside a longer word, or CJK
    text (one token per run), is not, so the substring index still answers those.

    With ``tenant``, words of that tenant's sessions only: whether a substring search runs
    must not depend on what another tenant wrote."""
    sql = "SELECT 1 FROM messages_fts WHERE messages_fts MATCH ? LIMIT 1"
    if tenant is not None:
        sql = (
            "SELECT 1 FROM messages_fts CROSS JOIN messages m ON m.id = messages_fts.rowid "
            "CROSS JOIN sessions s ON s.id = m.session_id WHERE messages_fts MATCH ? AND s.tenant = ? LIMIT 1"
        )
    for term in terms:
        rows = _run(conn, sql, [to_fts5(term), *([tenant] if tenant is not None else [])])
        if not rows:
            return False
    return True


def _leaves(node: Any) -> list[Any]:
    if isinstance(node, Term):
        return [node]
    if isinstance(node, Not):
        return _leaves(node.keep) + _leaves(node.drop)
    return [t for part in node.parts for t in _leaves(part)]


def _unstarred(node: Any) -> Any:
    if isinstance(node, Term):
        return Term(node.text, False, node.phrase)
    if isinstance(node, Not):
        return Not(_unstarred(node.keep), _unstarred(node.drop))
    return (And if isinstance(node, And) else Or)(tuple(_unstarred(p) for p in node.parts))
