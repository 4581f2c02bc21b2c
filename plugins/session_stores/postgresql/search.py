"""Search for the PostgreSQL backend: the kernel's query language compiled to ``tsquery`` and ``ILIKE``.

The SQL shape comes from the parsed query tree and fixed fragments only; every
piece of user text travels as a parameter (``phraseto_tsquery('simple', %s)``),
so the database's own parser splits words exactly as it did for the stored
``tsvector``. Words rank with ``ts_rank`` over every match (content weighs
more than tool name and arguments, as BM25's column weights do on SQLite).
When nothing matches and some term is no word of the index, ``pg_trgm``
answers substring and CJK queries, newest first.

One statement chooses the hits and reads them with their sessions and their
neighbours; a second runs only when a hit's session has a parent (lineage
roots). Snippets are cut in Python from the rows read
(:mod:`hermes.kernel.store.snippets`), as on SQLite, in time linear in the text
however many matches it holds: ``ts_headline`` would parse every hit's text again
on the server.
"""

from __future__ import annotations

import time
from typing import Any

from hermes.kernel.store import SearchHit
from hermes.kernel.store.query import And, Not, QueryNode, Term, parse_query
from hermes.kernel.store.search import CONTEXT_CHARS, build_hits
from hermes.kernel.store.snippets import Highlighter, SubstringHighlighter, snippet_by
from hermes.kernel.store.titles import escape_like

__all__ = ["search"]

MAX_DEPTH = 10_000
# ts_rank weights for D, C, B, A: content (A) over tool name and arguments (B).
_WEIGHTS = "{0.1, 0.2, 0.5, 1.0}"
_TEXT = "(coalesce(m.content, '') || ' ' || coalesce(m.tool_name, '') || ' ' || coalesce(m.tool_args, ''))"


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


def _filters(
    source: str | None, role: str | None, session_id: str | None, tenant: str | None = None
) -> tuple[str, list[Any]]:
    sql, params = "", []
    for column, value in (("s.source", source), ("m.role", role), ("m.session_id", session_id), ("s.tenant", tenant)):
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


def _all_words_known(conn: Any, node: QueryNode, tenant: str | None = None) -> bool:
    """True when every term matches the word index on its own (one statement): the query
    just has no match, so the substring scan is skipped. Parts of words and CJK still get it.
    With ``tenant``, in that tenant's sessions only: another tenant's words change nothing."""
    params: list[Any] = []
    if tenant is None:
        checks = ", ".join(f"EXISTS (SELECT 1 FROM messages WHERE tsv @@ {_tsquery(t, params)})" for t in _leaves(node))
    else:
        parts = []
        for term in _leaves(node):
            parts.append(
                "EXISTS (SELECT 1 FROM messages m JOIN sessions s ON s.id = m.session_id "
                f"WHERE m.tsv @@ {_tsquery(term, params)} AND s.tenant = %s)"
            )
            params.append(tenant)
        checks = ", ".join(parts)
    return all(conn.execute(f"SELECT {checks}", params, prepare=False).fetchone())


# The hits (ids with their sort key, chosen by the statement in ``{hits}``) read with
# their sessions and, when asked, the messages either side (by (session_id, seq), the
# unique index). Every look-up is a LATERAL subquery with LIMIT 1: planned on its own,
# which halves the planning time of the statement (it is planned for each search).
_DETAIL = """
WITH hits AS MATERIALIZED ({hits})
SELECT m.id, m.session_id, m.role, m.timestamp, s.source, s.title, s.parent_session_id,
       m.content, m.tool_name, m.tool_args{neighbour_columns}
FROM hits h
CROSS JOIN LATERAL (
    SELECT id, session_id, seq, role, timestamp, content, tool_name, tool_args FROM messages WHERE id = h.id LIMIT 1
) m
CROSS JOIN LATERAL (SELECT source, title, parent_session_id FROM sessions WHERE id = m.session_id LIMIT 1) s{neighbour_joins}
ORDER BY h.r DESC, h.id DESC
"""
_NEIGHBOUR_COLUMNS = (
    f", b.id, b.role, left(b.content, {CONTEXT_CHARS + 1}), b.tool_name"
    f", a.id, a.role, left(a.content, {CONTEXT_CHARS + 1}), a.tool_name"
)
_NEIGHBOUR_JOINS = """
LEFT JOIN LATERAL (
    SELECT id, role, content, tool_name FROM messages WHERE session_id = m.session_id AND seq = m.seq - 1 LIMIT 1
) b ON true
LEFT JOIN LATERAL (
    SELECT id, role, content, tool_name FROM messages WHERE session_id = m.session_id AND seq = m.seq + 1 LIMIT 1
) a ON true"""

# Lineage roots of the sessions given, one row each. LIMIT 1 in the LATERAL subqueries
# keeps the planner from turning a handful of look-ups by key into a scan of the table.
# ``{scope}`` keeps a tenant's walk inside its sessions: another tenant's ancestor is never reached.
_ROOTS = """
WITH RECURSIVE up(start, id, parent_session_id, depth) AS (
    SELECT s.id, s.id, s.parent_session_id, 0
    FROM unnest(%s::text[]) AS u(id)
    CROSS JOIN LATERAL (SELECT id, parent_session_id FROM sessions WHERE id = u.id LIMIT 1) s
    UNION ALL
    SELECT up.start, p.id, p.parent_session_id, up.depth + 1
    FROM up CROSS JOIN LATERAL (
        SELECT id, parent_session_id FROM sessions WHERE id = up.parent_session_id{scope} LIMIT 1
    ) p
    WHERE up.depth < %s
)
SELECT DISTINCT ON (up.start) up.start, up.id, t.title
FROM up CROSS JOIN LATERAL (SELECT title FROM sessions WHERE id = up.id LIMIT 1) t
ORDER BY up.start, up.depth DESC
"""


def _detail(conn: Any, hits: str, params: list[Any], context: bool, deadline: float | None) -> list[tuple[Any, ...]]:
    sql = _DETAIL.format(
        hits=hits,
        neighbour_columns=_NEIGHBOUR_COLUMNS if context else "",
        neighbour_joins=_NEIGHBOUR_JOINS if context else "",
    )
    # Never prepared: how many rows match swings from none to millions with the words,
    # so the statement is planned for its own values each time.
    if deadline is None:
        return conn.execute(sql, params, prepare=False).fetchall()
    left = deadline - time.monotonic()
    if left <= 0:
        return []
    from psycopg import errors

    # The server cancels the statement at the deadline: one statement finds every hit, so
    # then there are none yet. Set and reset on this pooled connection only when asked.
    conn.execute("SELECT set_config('statement_timeout', %s, false)", [f"{max(1, int(left * 1000))}ms"])
    try:
        return conn.execute(sql, params, prepare=False).fetchall()
    except errors.QueryCanceled:
        return []
    finally:
        conn.execute("RESET statement_timeout")


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
    tenant: str | None = None,
    deadline: float | None = None,
) -> list[SearchHit]:
    """Messages matching ``query``; ``conn`` is a psycopg connection (autocommit is fine:
    the hits and their details come from one statement, so from one snapshot). ``tenant``
    limits the hits, their roots and the word check to that tenant's sessions. Past
    ``deadline`` (``time.monotonic()``) the statement is cancelled, and hits not yet
    highlighted keep a plain snippet."""
    if sort not in ("rank", "time"):
        raise ValueError(f"sort must be 'rank' or 'time', not {sort!r}")
    limit = max(1, min(int(limit), 1_000))
    node = parse_query(query)
    if node is None:
        return []
    where, filter_params = _filters(source, role, session_id, tenant)
    join = " JOIN sessions s ON s.id = m.session_id" if source is not None or tenant is not None else ""
    q_params: list[Any] = []
    tsquery = _tsquery(node, q_params)
    rank = f"ts_rank('{_WEIGHTS}'::real[], m.tsv, q.q)" if sort == "rank" else "0::real"
    words = (
        f"SELECT m.id, {rank} AS r FROM (SELECT {tsquery} AS q) q, messages m{join} "
        f"WHERE m.tsv @@ q.q{where} ORDER BY r DESC, m.id DESC LIMIT %s"
    )
    found = _detail(conn, words, [*q_params, *filter_params, limit], context, deadline)
    if found:
        highlighter = Highlighter(node)
        rows = [(*r[:6], snippet_by(highlighter, r[7:10], deadline), *r[6:7], *r[10:]) for r in found]
    elif (deadline is None or time.monotonic() < deadline) and not _all_words_known(conn, node, tenant):
        s_params: list[Any] = []
        condition = _substring(node, s_params)
        substrings = (
            f"SELECT m.id, 0::real AS r FROM messages m{join} WHERE {condition}{where} ORDER BY m.id DESC LIMIT %s"
        )
        found = _detail(conn, substrings, [*s_params, *filter_params, limit], context, deadline)
        # ILIKE finds terms of any length, so the highlighter looks for them all.
        substring = SubstringHighlighter(node, shortest=1)
        rows = [(*r[:6], snippet_by(substring, r[7:10], deadline), *r[6:7], *r[10:]) for r in found]
    else:
        return []
    if not rows:
        return []
    # Only a session with a parent can have another lineage root; most have none.
    parented = sorted({row[1] for row in rows if row[7] is not None})
    roots: dict[str, tuple[str, str | None]] = {}
    if parented:
        sql = _ROOTS.format(scope=" AND tenant = %s" if tenant is not None else "")
        params = [parented, *([tenant] if tenant is not None else []), MAX_DEPTH]
        roots = {r[0]: (r[1], r[2]) for r in conn.execute(sql, params)}
    neighbours = None
    if context:
        neighbours = {
            (row[0], side): row[at : at + 4]
            for row in rows
            for side, at in (("before", 8), ("after", 12))
            if row[at] is not None
        }
    return build_hits(rows, roots, neighbours)
