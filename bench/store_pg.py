"""``python -m bench store --backend postgresql``: the PostgreSQL store against raw psycopg (issue 17).

One run, on a throwaway durable cluster (fsync on) started from the machine's
binaries, over its Unix socket:

* appends, one process, one transaction each: the store against raw psycopg
  running the same statements (``UPDATE sessions ... RETURNING`` then
  ``INSERT ... RETURNING id``, commit); target >= 0.8 x;
* 8 processes, each with its own pool, appending into 4 shared sessions
  while one searches: worst single append (target <= 100 ms), and a check
  that every session's ``seq`` is gap-free;
* both of those once durable (the store at ``store.synchronous`` NORMAL,
  raw psycopg at ``synchronous_commit=on``) and once not (OFF against
  ``synchronous_commit=off``), which separates the disk's flush time from
  the store's own queueing;
* search p50 on 1,000,000 messages (``HERMES_BENCH_PG_MESSAGES`` to change):
  the store against the raw ``tsvector`` query (ranked with ``ts_rank`` over
  every match, ``ts_headline`` for the top 20, one context statement per
  hit); each query runs once untimed, so both find the same pages cached,
  then both are timed, taking turns going first; target <= 1.0 x;
* search over one huge message, as on SQLite (:func:`bench.store_huge.huge_message`,
  a fresh database per case); target <= 1 s.
"""

from __future__ import annotations

import json
import os
import random
import time
from typing import Any

from bench.store_data import child, collect, pct, ratio, texts, vocabulary
from bench.store_huge import huge_message, print_huge

APPEND_RATIO_TARGET = 0.8
WORST_APPEND_TARGET_MS = 100.0
SEARCH_RATIO_TARGET = 1.0

_UPDATE = "UPDATE sessions SET message_count = message_count + 1, tool_call_count = tool_call_count + 0, updated_at = %s WHERE id = %s RETURNING message_count"
_INSERT = (
    "INSERT INTO messages (seq, session_id, role, content, content_parts, tool_calls, tool_call_id, tool_name, "
    "reasoning, finish_reason, token_count, timestamp, tool_args) VALUES (%s, %s, 'user', %s, NULL, NULL, NULL, NULL, "
    "NULL, NULL, NULL, %s, NULL) RETURNING id"
)


def _store(url: str, pool_size: int = 2, synchronous: str = "NORMAL") -> Any:
    from hermes.plugins.session_stores.postgresql import PostgresSessionStore

    return PostgresSessionStore(url, pool_size=pool_size, synchronous=synchronous)


def _raw_append(conn: Any, sid: str, text: str) -> None:
    now = time.time()
    (count,) = conn.execute(_UPDATE, (now, sid)).fetchone()
    conn.execute(_INSERT, (count, sid, text, now)).fetchone()
    conn.commit()


def _no_commit_wait(cluster: Any, url: str) -> None:
    """Raw psycopg on this database commits without waiting for the disk (synchronous_commit=off)."""
    import psycopg
    from psycopg import sql

    name = url.split("?", 1)[0].rsplit("/", 1)[1]
    with psycopg.connect(cluster.url(), autocommit=True) as conn:
        conn.execute(sql.SQL("ALTER DATABASE {} SET synchronous_commit = off").format(sql.Identifier(name)))


def _appends(cluster: Any, n: int, durable: bool = True) -> dict[str, Any]:
    import psycopg

    batch = texts(n, seed=1)
    url = cluster.create_database()
    if not durable:
        _no_commit_wait(cluster, url)
    with _store(url, synchronous="NORMAL" if durable else "OFF") as store:
        raw_sid, store_sid = store.create_session(source="bench"), store.create_session(source="bench")
        with psycopg.connect(url) as conn:
            for text in batch[:50]:  # warm both paths (prepared statements, caches)
                _raw_append(conn, raw_sid, text)
                store.append_message(store_sid, {"role": "user", "content": text})
            start = time.perf_counter()
            for text in batch:
                _raw_append(conn, raw_sid, text)
            raw = n / (time.perf_counter() - start)
        start = time.perf_counter()
        for text in batch:
            store.append_message(store_sid, {"role": "user", "content": text})
        mine = n / (time.perf_counter() - start)
    return {"messages": n, "raw_per_s": round(raw), "store_per_s": round(mine), "ratio": ratio(mine, raw)}


def _writer(url: str, sessions: str, count: int, seed: int, raw: bool, durable: bool = True) -> None:
    """Child process: append ``count`` messages round-robin over ``sessions``; print latencies."""
    batch = texts(count, seed)
    ids = sessions.split(",")
    latencies, errors = [], []
    if raw:
        import psycopg

        conn = psycopg.connect(url)
        append = lambda sid, text: _raw_append(conn, sid, text)  # noqa: E731
    else:
        store = _store(url, synchronous="NORMAL" if durable else "OFF")
        append = lambda sid, text: store.append_message(sid, {"role": "user", "content": text})  # noqa: E731
    for i, text in enumerate(batch):
        start = time.perf_counter()
        try:
            append(ids[i % len(ids)], f"w{seed} {text}")
        except Exception as exc:  # counted, never expected
            errors.append(repr(exc))
        latencies.append((time.perf_counter() - start) * 1000)
    print(json.dumps({"latencies": latencies, "errors": errors}))


def _searcher(url: str, seconds: float) -> None:
    words = vocabulary()
    rng = random.Random(3)
    done = 0
    with _store(url, pool_size=1) as store:
        stop = time.monotonic() + seconds
        while time.monotonic() < stop:
            store.search(rng.choice(words[:500]), limit=10)
            done += 1
            time.sleep(0.005)
    print(json.dumps({"searches": done}))


def _contending(cluster: Any, writers: int, per_writer: int, raw: bool, durable: bool = True) -> dict[str, Any]:
    import psycopg

    url = cluster.create_database()
    if not durable:  # commits stop waiting for the disk: what is left is the store's own queueing
        _no_commit_wait(cluster, url)
    with _store(url) as store:
        sessions = ",".join(store.create_session(source="bench") for _ in range(4))
    start = time.perf_counter()
    procs = [child(f"from bench.store_pg import _writer; _writer({url!r}, {sessions!r}, {per_writer}, {n}, {raw}, {durable})") for n in range(writers)]
    searcher = child(f"from bench.store_pg import _searcher; _searcher({url!r}, 3.0)")
    results, search, done = collect(procs, searcher)
    elapsed = done - start
    with psycopg.connect(url) as conn:
        stored = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
        gaps = conn.execute(
            "SELECT count(*) FROM (SELECT session_id, max(seq) AS top, count(*) AS n, count(DISTINCT seq) AS d "
            "FROM messages GROUP BY session_id) s WHERE top != n OR d != n"
        ).fetchone()[0]
    latencies = [ms for r in results for ms in r["latencies"]]
    return {
        "messages": writers * per_writer,
        "stored": stored,
        "sessions_with_gaps": gaps,
        "errors": sum(len(r["errors"]) for r in results),
        "appends_per_s": round(writers * per_writer / elapsed),
        "p50_ms": round(pct(latencies, 0.5), 2),
        "p99_ms": round(pct(latencies, 0.99), 2),
        "max_ms": round(max(latencies), 2),
        "searches": search["searches"],
    }


def _build(cluster: Any, total: int) -> tuple[str, float]:
    """``total`` messages in 10,000 sessions by COPY, indexes built after the load."""
    import psycopg

    start = time.perf_counter()
    url = cluster.create_database()
    _store(url).close()  # the store's own schema and migrations
    sessions = 10_000
    per = max(1, total // sessions)
    now = time.time() - 86400 * 365
    with psycopg.connect(url) as conn:
        conn.execute("DROP INDEX idx_messages_tsv, idx_messages_trgm")
        with conn.cursor().copy("COPY sessions (id, source, started_at, updated_at, message_count, title) FROM STDIN") as copy:
            for s in range(sessions):
                copy.write_row((f"20250101_{s:06d}_bench0", "cli" if s % 3 else "api", now + s * 3000, now + s * 3000, per, f"bench {s}"))
        chunk = 100_000
        for offset in range(0, total, chunk):
            batch = texts(min(chunk, total - offset), seed=offset)
            with conn.cursor().copy("COPY messages (session_id, seq, role, content, timestamp) FROM STDIN") as copy:
                for i, text in enumerate(batch):
                    n = offset + i
                    s = min(n // per, sessions - 1)
                    copy.write_row((f"20250101_{s:06d}_bench0", n - s * per + 1, "user" if n % 2 == 0 else "assistant", text, now + s * 3000 + n % per))
            conn.commit()
        conn.execute("SET maintenance_work_mem = '512MB'")
        conn.execute("CREATE INDEX idx_messages_tsv ON messages USING gin (tsv)")
        conn.execute(
            "CREATE INDEX idx_messages_trgm ON messages USING gin ((coalesce(content, '') || ' ' || "
            "coalesce(tool_name, '') || ' ' || coalesce(tool_args, '')) gin_trgm_ops)"
        )
        conn.commit()
        conn.autocommit = True
        conn.execute("VACUUM ANALYZE messages")
        conn.execute("VACUUM ANALYZE sessions")
    return url, time.perf_counter() - start


class _RawSearch:
    def __init__(self, url: str) -> None:
        import psycopg

        self.conn = psycopg.connect(url, autocommit=True)

    def search(self, query: str, limit: int = 20) -> list[tuple[Any, ...]]:
        rows = self.conn.execute(
            "SELECT m.id, m.session_id, m.seq, ts_headline('simple', m.content, q, "
            "'StartSel=**, StopSel=**, MaxWords=12, MinWords=4, MaxFragments=1') "
            "FROM messages m, plainto_tsquery('simple', %s) q WHERE m.tsv @@ q "
            "ORDER BY ts_rank(m.tsv, q) DESC LIMIT %s",
            (query, limit),
        ).fetchall()
        out = []
        for row in rows:
            context = self.conn.execute(
                "SELECT (SELECT content FROM messages WHERE session_id = %s AND seq = %s), "
                "(SELECT content FROM messages WHERE session_id = %s AND seq = %s)",
                (row[1], row[2] - 1, row[1], row[2] + 1),
            ).fetchone()
            out.append((*row, *context))
        return out


def _search(cluster: Any, total: int, queries: int) -> dict[str, Any]:
    url, built = _build(cluster, total)
    words = vocabulary()
    rng = random.Random(11)
    cases = {
        "one word": [rng.choice(words) for _ in range(queries)],
        "two words": [f"{rng.choice(words)} {rng.choice(words[:500])}" for _ in range(queries)],
        "frequent word": [rng.choice(words[:50]) for _ in range(queries // 2)],
    }
    out: dict[str, Any] = {"messages": total, "built_in_s": round(built, 1)}
    raw = _RawSearch(url)
    with _store(url) as store:
        for q in cases["one word"][:20]:  # warm caches and prepared statements on both
            store.search(q)
            raw.search(q)
        for name, qs in cases.items():
            times: dict[str, list[float]] = {"store": [], "raw": []}
            for i, q in enumerate(qs):
                # The table is larger than shared_buffers: whichever runs a query first reads its
                # pages in for the other. An untimed run warms them for both, then the two take
                # turns going first.
                raw.search(q, limit=20)
                turns = (("store", store.search), ("raw", raw.search))
                for label, fn in turns if i % 2 == 0 else turns[::-1]:
                    start = time.perf_counter()
                    fn(q, limit=20)
                    times[label].append((time.perf_counter() - start) * 1000)
            s50, r50 = pct(times["store"], 0.5), pct(times["raw"], 0.5)
            out[name] = {"queries": len(qs), "store_p50_ms": round(s50, 2), "raw_p50_ms": round(r50, 2), "ratio": ratio(s50, r50)}
    return out


def run(runs: int | None = None) -> dict[str, Any]:
    from hermes.kernel.testing.postgres import PostgresCluster

    total = int(os.environ.get("HERMES_BENCH_PG_MESSAGES", "1000000"))
    result: dict[str, Any] = {"benchmark": "store", "backend": "postgresql"}
    with PostgresCluster(durable=True) as cluster:
        import psycopg

        with psycopg.connect(cluster.url()) as conn:
            result["server_version"] = conn.execute("SHOW server_version").fetchone()[0]
        result["appends"] = {
            f"store {_MODES[durable][0]} vs raw {_MODES[durable][1]}": _appends(cluster, 2000, durable) for durable in (True, False)
        }
        result["contending"] = {
            f"{kind}, {_MODES[durable][kind == 'raw']}": _contending(cluster, 8, 300, raw=kind == "raw", durable=durable)
            for durable in (True, False)
            for kind in ("store", "raw")
        }
        result["search"] = _search(cluster, total, 200)
        result["huge_message"] = huge_message(runs or 7, open_store=lambda: _store(cluster.create_database()))
    _print(result)
    return result


# (store's store.synchronous, raw's synchronous_commit) for durable and not.
_MODES = {True: ("synchronous NORMAL", "synchronous_commit on"), False: ("synchronous OFF", "synchronous_commit off")}


def _print(result: dict[str, Any]) -> None:
    print(f"store (PostgreSQL {result['server_version']}, durable throwaway cluster), one run")
    for modes, a in result["appends"].items():
        print(f"  appends, one process, {modes}: raw psycopg {a['raw_per_s']}/s, "
              f"store {a['store_per_s']}/s, {a['ratio']:.2f} x (target >= {APPEND_RATIO_TARGET})")  # fmt: skip
    print(f"  8 processes into 4 shared sessions + 1 searcher (worst append target <= {WORST_APPEND_TARGET_MS:g} ms):")
    for kind, c in result["contending"].items():
        print(f"    {kind:<31} {c['appends_per_s']:>5}/s  p50 {c['p50_ms']:>6} ms  p99 {c['p99_ms']:>7} ms  max {c['max_ms']:>7} ms"
              f"  {c['stored']}/{c['messages']} stored, {c['sessions_with_gaps']} sessions with gaps, {c['errors']} errors")  # fmt: skip
    s = result["search"]
    print(f"  search on {s['messages']:,} messages (built in {s['built_in_s']} s), p50 (target <= {SEARCH_RATIO_TARGET} x raw):")
    for name, r in s.items():
        if isinstance(r, dict):
            print(f"    {name:<14} store {r['store_p50_ms']:>7.2f} ms   raw {r['raw_p50_ms']:>7.2f} ms   {r['ratio']:.2f} x")
    print_huge(result["huge_message"])
