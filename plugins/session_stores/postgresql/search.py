"""Search for the PostgreSQL backend: the kernel's query language compiled to ``tsquery`` and ``ILIKE``.

The SQL shape comes from the parsed query tree and fixed fragments only; every
piece of user text travels as a parameter (``phraseto_tsquery('simple', %s)``),
so the database's own parser splits words exactly as it did for the stored
``tsvector``. Words rank with ``ts_rank`` over every match (content weighs
more than tool name and arguments, as BM25's column weights do on SQLite).
When nothing matches and some term is no word of the index, ``pg_trgm``
answers substring and CJK queries, newest first. Snippets, context and lineage roots take one statement each.
"""

from __future__ import annotations

import re
from typing import Any

from hermes.kernel.store import SearchHit
from hermes.kernel.store.query import And, Not, Or, QueryNode, Term, parse_query
from hermes.kernel.store.search import CONTEXT_CHARS, build_hits
from hermes.kernel.store.titles import escape_like

__all__ = ["search"]

MAX_DEPTH = 10_000
# ts_rank weights for D, C, B, A: content (A) over tool name and arguments (B).
_WEIGHTS = "{0.1, 0.2, 0.5, 1.0}"
_TEXT = "(coalesce(m.content, '') || ' ' || coalesce(m.tool_name, '') || ' ' || coalesce(m.tool_args, ''))"
_HEADLINE = "StartSel=**, StopSel=**, MaxWords=12, MinWords=4, ShortWord=1, MaxFragments=1, FragmentDelimiter=…"
# A short text is shown whole (ts_headline would otherwise drop its edges and punctuation).
_WHOLE = "StartSel=**, StopSel=**, HighlightAll=true"
_SHORT = 120


def _tsquery(node: QueryNode, params: list[Any]) -> str:
    if isinstance(node, Term):
        params.append(node.text)
        return "hermes_prefix_tsquery(%s)" if node.prefix else "phraseto_tsquery('simple', %s)"
    if isinstance(node, Not):
        return f"({_tsquery(node.keep, params)} && !!{_tsquery(node.drop, params)})"
    glue = " && " if isinstance(node, And) else " || "
    return "(" + glue.join(_tsquery(p, params) for p in node.parts) + ")"


def _substring(node: QueryNode, params: list[Any]) -> str:
    if isinstance(node, Term):
        params.append("%" + escape_like(node.text) + "%")
        return f"{_TEXT} ILIKE %s ESCAPE '\\'"
    if isinstance(node, Not):
        return f"(({_substring(node.keep, params)}) AND NOT ({_substring(node.drop, params)}))"
    glue = " AND " if isinstance(node, And) else " OR "
    return "(" + glue.join(_substring(p, params) for p in node.parts) + ")"


def _filters(source: str | None, role: str | None, session_id: str | None) -> tuple[str, list[Any]]:
    sql, params = "", []
    for column, value in (("s.source", source), ("m.role", role), ("m.session_id", session_id)):
        if value is not None:
            sql += f" AND {column} = %s"
            params.append(value)
    return sql, params


def _leaves(node: QueryNode) -> list[Term]:
    if isinstance(node, Term):
        return [node]
    if isinstance(node, Not):
        return _leaves(node.keep) + _leaves(node.drop)
    return [t for part in node.parts for t in _leaves(part)]


def _all_words_known(conn: Any, node: QueryNode) -> bool:
    """True when every term matches the word index on its own (one statement): the query
    just has no match, so the substring scan is skipped. Parts of words and CJK still get it."""
    params: list[Any] = []
    checks = ", ".join(f"EXISTS (SELECT 1 FROM messages WHERE tsv @@ {_tsquery(t, params)})" for t in _leaves(node))
    return all(conn.execute(f"SELECT {checks}", params, prepare=False).fetchone())


def _first_term(node: QueryNode) -> str:
    while not isinstance(node, Term):
        node = node.keep if isinstance(node, Not) else node.parts[0]
    return node.text


def _substring_snippet(text: str, needle: str, width: int = 60) -> str:
    found = re.search(re.escape(needle), text, re.IGNORECASE)
    if found is None:
        return text[: width * 2]
    start, end = max(0, found.start() - width), min(len(text), found.end() + width)
    return (
        ("…" if start else "")
        + text[start : found.start()]
        + "**"
        + found.group(0)
        + "**"
        + text[found.end() : end]
        + ("…" if end < len(text) else "")
    )


# Both walks look rows up one by one through the primary key / (session_id, seq)
# index: LIMIT 1 in a LATERAL subquery keeps the planner from turning a handful
# of look-ups into a scan of the whole table.
_ROOTS = """
WITH RECURSIVE up(start, id, parent_session_id, depth) AS (
    SELECT s.id, s.id, s.parent_session_id, 0
    FROM unnest(%s::text[]) AS u(id)
    CROSS JOIN LATERAL (SELECT id, parent_session_id FROM sessions WHERE id = u.id LIMIT 1) s
    UNION ALL
    SELECT up.start, p.id, p.parent_session_id, up.depth + 1
    FROM up CROSS JOIN LATERAL (
        SELECT id, parent_session_id FROM sessions WHERE id = up.parent_session_id LIMIT 1
    ) p
    WHERE up.depth < %s
)
SELECT DISTINCT ON (up.start) up.start, up.id, t.title
FROM up CROSS JOIN LATERAL (SELECT title FROM sessions WHERE id = up.id LIMIT 1) t
ORDER BY up.start, up.depth DESC
"""

_CONTEXT = f"""
SELECT h.mid, n.side, m.id, m.role, left(m.content, {CONTEXT_CHARS + 1}), m.tool_name
FROM unnest(%s::bigint[], %s::text[], %s::int[]) AS h(mid, sid, seq)
CROSS JOIN LATERAL (VALUES ('before', h.seq - 1), ('after', h.seq + 1)) AS n(side, seq)
CROSS JOIN LATERAL (
    SELECT id, role, content, tool_name FROM messages WHERE session_id = h.sid AND seq = n.seq LIMIT 1
) m
"""


def search(
    conn: Any,
    query: str,
    *,
    limit: int,
    sort: str,
    source: str | None,
    role: str | None,
    session_id: str | None,
    context: bool,
) -> list[SearchHit]:
    """Messages matching ``query``; ``conn`` is a psycopg connection inside a transaction."""
    if sort not in ("rank", "time"):
        raise ValueError(f"sort must be 'rank' or 'time', not {sort!r}")
    limit = max(1, min(int(limit), 1_000))
    node = parse_query(query)
    if node is None:
        return []
    where, filter_params = _filters(source, role, session_id)
    q_params: list[Any] = []
    tsquery = _tsquery(node, q_params)
    order = f"ts_rank('{_WEIGHTS}'::real[], m.tsv, q.q) DESC, m.id DESC" if sort == "rank" else "m.id DESC"
    join = " JOIN sessions s ON s.id = m.session_id" if source is not None else ""
    # The statements whose selectivity swings from one row to millions are never prepared, so
    # each is planned for its own values; the look-ups by key below keep psycopg's prepared,
    # generic plans (replanning all four cost ~8 ms a search, more than a narrow query itself).
    ids = [
        r[0]
        for r in conn.execute(
            f"SELECT m.id FROM (SELECT {tsquery} AS q) q, messages m{join} "
            f"WHERE m.tsv @@ q.q{where} ORDER BY {order} LIMIT %s",
            [*q_params, *filter_params, limit],
            prepare=False,
        )
    ]
    rows: list[tuple[Any, ...]]
    if ids:
        detail = conn.execute(
            f"SELECT m.id, m.session_id, m.role, m.timestamp, s.source, s.title, "
            f"CASE WHEN length({_TEXT}) <= {_SHORT} THEN ts_headline('simple', btrim({_TEXT}), q.q, %s) "
            f"ELSE ts_headline('simple', {_TEXT}, q.q, %s) END, m.seq "
            f"FROM (SELECT {tsquery} AS q) q, messages m JOIN sessions s ON s.id = m.session_id "
            "WHERE m.id = ANY(%s)",
            [_WHOLE, _HEADLINE, *q_params, ids],
        ).fetchall()
        by_id = {row[0]: row for row in detail}
        rows = [by_id[i] for i in ids if i in by_id]
    elif not _all_words_known(conn, node):
        s_params: list[Any] = []
        condition = _substring(node, s_params)
        found = conn.execute(
            f"SELECT m.id, m.session_id, m.role, m.timestamp, s.source, s.title, {_TEXT}, m.seq "
            f"FROM messages m JOIN sessions s ON s.id = m.session_id WHERE {condition}{where} "
            "ORDER BY m.id DESC LIMIT %s",
            [*s_params, *filter_params, limit],
            prepare=False,
        ).fetchall()
        needle = _first_term(node)
        rows = [(*r[:6], _substring_snippet(r[6].strip(), needle), r[7]) for r in found]
    else:
        rows = []
    if not rows:
        return []
    sessions = sorted({row[1] for row in rows})
    roots = {r[0]: (r[1], r[2]) for r in conn.execute(_ROOTS, [sessions, MAX_DEPTH])}
    neighbours = None
    if context:
        neighbours = {
            (r[0], r[1]): tuple(r[2:])
            for r in conn.execute(_CONTEXT, [[r[0] for r in rows], [r[1] for r in rows], [r[7] for r in rows]])
        }
    return build_hits([row[:7] for row in rows], roots, neighbours)
