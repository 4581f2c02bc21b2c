"""Session store speed against raw drivers doing the same statements (issues 4 and 17).

``python -m bench store`` (SQLite), in one run against raw ``sqlite3`` on the
same schema, indexes and triggers:

* appends, one process, one transaction each, at ``synchronous=FULL`` and
  ``NORMAL`` (store and raw at the same setting; target: report both);
* 4 writer processes and a searcher on an empty and on a 200,000-message
  file: worst single append (target <= 100 ms); raw takes a blocking ``flock``
  around the same transaction;
* loading a 10,000-message session (target <= 1.1 x raw);
* search on 1,000,000 messages: p50 (target <= 1.0 x raw, which ranks with
  BM25 over every match, builds snippets in the same statement and reads
  context with one statement per hit: 21 statements), and ``OR`` / phrase /
  prefix queries returning the same rows as raw FTS5 given the same text;
* search over one message of a million characters matched throughout (a log,
  one line of words, of substrings, one without spaces): p50 (target <= 1 s;
  FTS5's snippet() costs the square of the matches: over 10 minutes).

``python -m bench store --backend postgresql`` runs :mod:`bench.store_pg`.
Big files are built once with bulk inserts and cached in bench/results/.
Measured here only, never asserted in tests.

Run it on an otherwise idle machine, at normal priority. The worst-append
figures measure scheduling as much as the store: under real-time round-robin
(``chrt -r``) a writer waits out whole 100 ms quanta of the searcher and the
database server, and both backends then show stalls of 300-600 ms that no
change to the store affects.
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
BIG_DB = RESULTS / "store-1m.db"
MID_DB = RESULTS / "store-200k.db"
BIG_MESSAGES = 1_000_000
MID_MESSAGES = 200_000
WORST_APPEND_TARGET_MS = 100.0
LOAD_RATIO_TARGET = 1.1
SEARCH_RATIO_TARGET = 1.0
HUGE_MESSAGE_TARGET_MS = 1000.0
_INSERT = (
    "INSERT INTO messages (session_id, role, content, content_parts, tool_calls, tool_call_id, tool_name, "
    "reasoning, finish_reason, token_count, timestamp, tool_args) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
)

_WORDS: list[str] | None = None


def _vocabulary() -> list[str]:
    """5,000 pronounceable words; drawn with a Zipf-like skew, like real text."""
    global _WORDS
    if _WORDS is None:
        rng = random.Random(7)
        syllables = ["ka", "lo", "mi", "ra", "te", "su", "no", "vi", "der", "pan", "gor", "lin", "tas", "ber", "qui", "zo"]
        words: set[str] = set()
        while len(words) < 5000:
            words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
        _WORDS = sorted(words)
    return _WORDS


def _weights(n: int) -> list[float]:
    return [1 / (rank + 10) for rank in range(n)]


def _texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words = _vocabulary()
    weights = _weights(len(words))
    lengths = [rng.randint(5, 30) for _ in range(count)]
    flat = rng.choices(words, weights=weights, k=sum(lengths))
    out, at = [], 0
    for n in lengths:
        out.append(" ".join(flat[at : at + n]))
        at += n
    return out


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _build_big(path: Path, total: int) -> float:
    """Bulk-build ``total`` messages in 10,000 sessions: triggers off, then index rebuilds."""
    from hermes.kernel.store import SessionStore

    start = time.perf_counter()
    tmp = path.with_suffix(".building")
    for suffix in ("", "-wal", "-shm", ".lock", ".lock-queue"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    SessionStore(tmp).close()
    conn = sqlite3.connect(tmp, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")
    triggers = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
    for name, _ in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    sessions = 10_000
    per = total // sessions
    now = time.time() - 86400 * 365
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO sessions (id, source, started_at, updated_at, message_count, title) VALUES (?, ?, ?, ?, ?, ?)",
        [(f"20250101_{s:06d}_bench0", "cli" if s % 3 else "api", now + s * 3000, now + s * 3000, per, f"bench {s}")
         for s in range(sessions)],
    )  # fmt: skip
    conn.execute("COMMIT")
    chunk = 100_000
    for offset in range(0, total, chunk):
        texts = _texts(chunk, seed=offset)
        rows = []
        for i, text in enumerate(texts):
            n = offset + i
            s = n // per
            rows.append((f"20250101_{s:06d}_bench0", "user" if n % 2 == 0 else "assistant", text, now + s * 3000 + n % per))
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)", rows)
        conn.execute("COMMIT")
    for table in ("messages_fts", "messages_trigram"):
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone():
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")  # offline: nobody else writes
    for _, sql in triggers:
        conn.execute(sql)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    os.replace(tmp, path)
    for suffix in ("-wal", "-shm", ".lock", ".lock-queue"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    return time.perf_counter() - start


def _ratio(a: float, b: float) -> float:
    return round(a / b, 3) if b else float("nan")


# -- appends, one process ------------------------------------------------------------


def _store_appends(path: Path, texts: list[str], synchronous: str) -> float:
    from hermes.kernel.store import SessionStore

    with SessionStore(path, synchronous=synchronous) as store:
        sid = store.create_session(source="bench")
        start = time.perf_counter()
        for text in texts:
            store.append_message(sid, {"role": "user", "content": text})
        return len(texts) / (time.perf_counter() - start)


def _raw_append(conn: sqlite3.Connection, sid: str, text: str) -> None:
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE sessions SET message_count = message_count + 1, updated_at = ? WHERE id = ?", (time.time(), sid))
    conn.execute(_INSERT, (sid, "user", text, None, None, None, None, None, None, None, time.time(), None))
    conn.execute("COMMIT")


def _raw_conn(path: Path | str, synchronous: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"PRAGMA synchronous = {synchronous}")
    return conn


def _raw_appends(path: Path, texts: list[str], synchronous: str) -> float:
    from hermes.kernel.store import SessionStore

    with SessionStore(path) as store:  # the same schema, indexes and triggers
        sid = store.create_session(source="bench")
    conn = _raw_conn(path, synchronous)
    start = time.perf_counter()
    for text in texts:
        _raw_append(conn, sid, text)
    rate = len(texts) / (time.perf_counter() - start)
    conn.close()
    return rate


def _single_process(n: int) -> dict[str, Any]:
    texts = _texts(n, seed=1)
    out: dict[str, Any] = {"messages": n}
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for sync in ("FULL", "NORMAL"):
            raw = _raw_appends(d / f"raw-{sync}.db", texts, sync)
            store = _store_appends(d / f"store-{sync}.db", texts, sync)
            out[sync] = {"raw_per_s": round(raw), "store_per_s": round(store), "ratio": _ratio(store, raw)}
        out["store_NORMAL_vs_raw_FULL"] = _ratio(out["NORMAL"]["store_per_s"], out["FULL"]["raw_per_s"])
    return out


# -- contending processes ------------------------------------------------------------


def _writer(db: str, count: int, seed: int, raw: bool = False) -> None:
    """Child process: append ``count`` messages, print latencies (ms) as JSON."""
    texts = _texts(count, seed)
    latencies, errors = [], []
    if raw:
        conn = _raw_conn(db, "NORMAL")
        lock = os.open(db + ".rawlock", os.O_RDWR | os.O_CREAT, 0o600)
        sid = f"raw_{seed}"
        conn.execute("INSERT INTO sessions (id, source, started_at, updated_at) VALUES (?, 'bench', ?, ?)", (sid, time.time(), time.time()))
        for text in texts:
            start = time.perf_counter()
            fcntl.flock(lock, fcntl.LOCK_EX)  # blocking: the kernel queues the writers
            try:
                _raw_append(conn, sid, text)
            except Exception as exc:  # counted, never expected
                errors.append(repr(exc))
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
            latencies.append((time.perf_counter() - start) * 1000)
    else:
        from hermes.kernel.store import SessionStore

        with SessionStore(db) as store:
            sid = store.create_session(source="bench")
            for text in texts:
                start = time.perf_counter()
                try:
                    store.append_message(sid, {"role": "user", "content": text})
                except Exception as exc:  # counted, never expected
                    errors.append(repr(exc))
                latencies.append((time.perf_counter() - start) * 1000)
    print(json.dumps({"latencies": latencies, "errors": errors}))


def _searcher(db: str, seconds: float, raw: bool = False) -> None:
    words = _vocabulary()
    rng = random.Random(3)
    done, errors = 0, []
    searcher = _RawSearch(db) if raw else None
    from hermes.kernel.store import SessionStore

    store = None if raw else SessionStore(db)
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        try:
            (searcher.search if searcher else store.search)(rng.choice(words[:500]), limit=10)  # type: ignore[union-attr]
            done += 1
        except Exception as exc:
            errors.append(repr(exc))
        time.sleep(0.005)
    if store is not None:
        store.close()
    print(json.dumps({"searches": done, "errors": errors}))


def _child(code: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _contending(source: Path | None, writers: int, per_writer: int, raw: bool) -> dict[str, Any]:
    import shutil

    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "state.db")
        if source is not None:
            shutil.copyfile(source, db)
        from hermes.kernel.store import SessionStore

        SessionStore(db).close()  # schema first, so the timing covers appends only
        before = sqlite3.connect(db).execute("SELECT count(*) FROM messages").fetchone()[0]
        start = time.perf_counter()
        procs = [_child(f"from bench.store import _writer; _writer({db!r}, {per_writer}, {n}, raw={raw})") for n in range(writers)]
        searcher = _child(f"from bench.store import _searcher; _searcher({db!r}, 3.0, raw={raw})")
        results = []
        for p in procs:
            out, err = p.communicate(timeout=900)
            if p.returncode != 0:
                raise RuntimeError(err)
            results.append(json.loads(out))
        elapsed = time.perf_counter() - start
        s_out, s_err = searcher.communicate(timeout=120)
        if searcher.returncode != 0:
            raise RuntimeError(s_err)
        search = json.loads(s_out)
        conn = sqlite3.connect(db)
        stored = conn.execute("SELECT count(*) FROM messages").fetchone()[0] - before
        conn.close()
    latencies = [ms for r in results for ms in r["latencies"]]
    return {
        "messages": writers * per_writer,
        "stored": stored,
        "errors": sum(len(r["errors"]) for r in results) + len(search["errors"]),
        "appends_per_s": round(writers * per_writer / elapsed),
        "p50_ms": round(_pct(latencies, 0.5), 2),
        "p99_ms": round(_pct(latencies, 0.99), 2),
        "max_ms": round(max(latencies), 2),
        "searches": search["searches"],
    }


# -- search ------------------------------------------------------------------------


class _RawSearch:
    """The straightforward search over the same schema: BM25 over every match, snippets in the
    same statement (for the top ``limit`` only), context with one statement per hit."""

    def __init__(self, db: str | Path) -> None:
        self.conn = sqlite3.connect(db, isolation_level=None)

    def search(self, query: str, limit: int = 20) -> list[tuple[Any, ...]]:
        rows = self.conn.execute(
            "SELECT m.id, m.session_id, m.role, m.timestamp, snippet(messages_fts, -1, '**', '**', '…', 12) "
            "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
            "WHERE messages_fts MATCH ? AND messages_fts.rowid IN (SELECT rowid FROM messages_fts "
            "WHERE messages_fts MATCH ? ORDER BY bm25(messages_fts, 1.0, 0.5, 0.5) LIMIT ?)",
            (query, query, limit),
        ).fetchall()
        out = []
        for row in rows:
            context = self.conn.execute(
                "SELECT (SELECT content FROM messages WHERE session_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT 1), "
                "(SELECT content FROM messages WHERE session_id = ?1 AND id > ?2 ORDER BY id LIMIT 1)",
                (row[1], row[0]),
            ).fetchone()
            out.append((*row, *context))
        return out

    def ids(self, query: str, limit: int) -> list[int]:
        sql = "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid DESC LIMIT ?"
        return [r[0] for r in self.conn.execute(sql, (query, limit))]


def _timed_pair(store_fn: Any, raw_fn: Any, queries: list[str]) -> tuple[float, float]:
    """p50 of each, interleaved query by query and taking turns at going first, so both see
    the same page cache and the same machine load (run one after the other, the second
    read the pages the first had just brought in)."""
    times: dict[int, list[float]] = {0: [], 1: []}
    for i, q in enumerate(queries):
        order = ((0, store_fn), (1, raw_fn)) if i % 2 == 0 else ((1, raw_fn), (0, store_fn))
        for key, fn in order:
            start = time.perf_counter()
            fn(q)
            times[key].append((time.perf_counter() - start) * 1000)
    return _pct(times[0], 0.5), _pct(times[1], 0.5)


def _timed(fn: Any, queries: list[str]) -> float:
    times = []
    for q in queries:
        start = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - start) * 1000)
    return _pct(times, 0.5)


def _search_big(queries: int) -> dict[str, Any]:
    from hermes.kernel.store import SessionStore

    build_s = _ensure(BIG_DB, BIG_MESSAGES)
    words = _vocabulary()
    rng = random.Random(11)
    cases = {
        "one word": [rng.choice(words) for _ in range(queries)],
        "two words": [f"{rng.choice(words)} {rng.choice(words[:500])}" for _ in range(queries)],
        "frequent word": [rng.choice(words[:50]) for _ in range(queries)],
    }
    out: dict[str, Any] = {"messages": BIG_MESSAGES, "built_in_s": build_s}
    raw = _RawSearch(BIG_DB)
    with SessionStore(BIG_DB) as store:
        store.search("warmup")
        raw.search("warmup")
        for name, qs in cases.items():
            store_p50, raw_p50 = _timed_pair(lambda q: store.search(q, limit=20), lambda q: raw.search(q, limit=20), qs)
            out[name] = {"queries": len(qs), "store_p50_ms": round(store_p50, 2), "raw_p50_ms": round(raw_p50, 2), "ratio": _ratio(store_p50, raw_p50)}
        substring = [rng.choice(words[200:])[1:-1] for _ in range(queries // 4)]
        out["substring (trigram)"] = {"queries": len(substring), "store_p50_ms": round(_timed(lambda q: store.search(q), substring), 2)}
        # The query language against FTS5 itself, given the same text.
        same = {}
        text = store.conn.execute("SELECT content FROM messages WHERE id = 4242").fetchone()[0].split()
        for label, q in (
            ("OR", f"{words[300]} OR {words[301]}"),
            ("phrase", f'"{text[1]} {text[2]}"'),
            ("prefix", f"{words[700][:4]}*"),
            ("NOT", f"{words[20]} NOT {words[21]}"),
        ):
            mine = [h.message_id for h in store.search(q, sort="time", limit=1000)]
            same[label] = {"query": q, "rows": len(mine), "same_rows_as_fts5": mine == raw.ids(q, 1000)}
        out["semantics"] = same
    return out


# -- one huge message -------------------------------------------------------------------


def _huge_texts(chars: int) -> dict[str, tuple[str, str]]:
    """``{case: (message, query)}``: the shapes that made snippets quadratic (issue 27)."""
    lines, at = [], 0
    while at < chars * 2 // 5:  # a 400 KB log (at 1M): one 'error' line in 20 characters
        line = f"E{len(lines):05d} error, step {len(lines) % 97}"[:19]
        lines.append(line)
        at += len(line) + 1
    return {
        "log, a match a line": ("\n".join(lines), "error"),
        "one line, words": (("error ok " * (chars // 9 + 1))[:chars], "error"),
        "one line, substring": (("xerrorx " * (chars // 8 + 1))[:chars], "rror"),
        "one line, no spaces": ("error" + "a" * (chars - 10) + "error", "error"),
    }


def huge_message(runs: int, chars: int = 1_000_000, open_store: Any = None) -> dict[str, Any]:
    """Search p50 over one stored message of ``chars`` characters matched throughout (target:
    <= 1 s at a million): the snippet is all the work, so this times its cut. ``open_store()``
    gives a fresh, empty store per case (default: SQLite in a temporary folder)."""
    from hermes.kernel.store import SessionStore

    out: dict[str, Any] = {"chars": chars, "runs": runs, "target_ms": HUGE_MESSAGE_TARGET_MS}
    with tempfile.TemporaryDirectory() as tmp:
        fresh = open_store or (lambda: SessionStore(Path(tmp) / f"huge-{len(out)}.db"))
        for name, (text, query) in _huge_texts(chars).items():
            with fresh() as store:
                sid = store.create_session()
                store.append_message(sid, {"role": "tool", "tool_call_id": "c1", "tool_name": "terminal", "content": text})
                times, hits = [], []
                for _ in range(runs):
                    start = time.perf_counter()
                    hits = store.search(query)
                    times.append((time.perf_counter() - start) * 1000)
            snippet = hits[0].snippet if hits else ""
            out[name] = {
                "message_chars": len(text),
                "matches": text.count(query),
                "p50_ms": round(statistics.median(times), 1),
                "hits": len(hits),
                "snippet_chars": len(snippet),
                "highlighted": f"**{query}**" in snippet,
            }
    return out


# -- loading a long session ------------------------------------------------------------


def _load_session(n: int, runs: int) -> dict[str, Any]:
    from hermes.kernel.store import SessionStore
    from hermes.kernel.store.content import decode_content

    texts = _texts(n, seed=5)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.db"
        with SessionStore(path) as store:
            sid = store.create_session()
            msgs: list[dict[str, Any]] = []
            for i, text in enumerate(texts):
                if i % 10 == 1:
                    msgs.append({"role": "assistant", "content": None, "tool_calls": [
                        {"id": f"c{i}", "type": "function", "function": {"name": "read_file", "arguments": json.dumps({"path": text[:20]})}}]})  # fmt: skip
                elif i % 10 == 2:
                    msgs.append({"role": "tool", "tool_call_id": f"c{i - 1}", "tool_name": "read_file", "content": [{"type": "text", "text": text}]})
                else:
                    msgs.append({"role": "user" if i % 2 == 0 else "assistant", "content": text})
            for i in range(0, n, 1000):
                store.append_messages(sid, msgs[i : i + 1000])
            conn = sqlite3.connect(path, isolation_level=None)

            def raw_load() -> list[dict[str, Any]]:
                # The same result: the session row, then each message as a chat dict, JSON decoded.
                conn.execute("SELECT * FROM sessions WHERE id = ?", (sid,)).fetchone()
                out = []
                for role, content, parts, calls, call_id, tool_name, reasoning in conn.execute(
                    "SELECT role, content, content_parts, tool_calls, tool_call_id, tool_name, reasoning "
                    "FROM messages WHERE session_id = ? ORDER BY id", (sid,)):  # fmt: skip
                    m: dict[str, Any] = {"role": role, "content": decode_content(content, parts)}
                    if calls is not None:
                        m["tool_calls"] = json.loads(calls)
                    if call_id is not None:
                        m["tool_call_id"] = call_id
                    if tool_name is not None:
                        m["tool_name"] = tool_name
                    if reasoning is not None:
                        m["reasoning"] = reasoning
                    out.append(m)
                return out

            store_times, raw_times = [], []
            for run in range(runs):
                # Taking turns at going first, like the search timings.
                for first in (run % 2 == 0, run % 2 != 0):
                    start = time.perf_counter()
                    if first:
                        conversation = store.resume(sid)
                        store_times.append((time.perf_counter() - start) * 1000)
                    else:
                        raw_messages = raw_load()
                        raw_times.append((time.perf_counter() - start) * 1000)
            assert conversation.messages == raw_messages
            conn.close()
    store_ms, raw_ms = statistics.median(store_times), statistics.median(raw_times)
    return {"messages": n, "runs": runs, "store_ms": round(store_ms, 2), "raw_ms": round(raw_ms, 2), "ratio": _ratio(store_ms, raw_ms)}


def _ensure(path: Path, total: int) -> float | str:
    RESULTS.mkdir(parents=True, exist_ok=True)
    if path.exists():
        return "cached"
    return round(_build_big(path, total), 1)


def run(runs: int | None = None, backend: str = "sqlite") -> dict[str, Any]:
    if backend != "sqlite":
        from bench import store_pg

        return store_pg.run(runs=runs)
    runs = runs or 7
    result: dict[str, Any] = {"benchmark": "store", "backend": "sqlite", "sqlite_version": sqlite3.sqlite_version}
    result["single_process"] = _single_process(2000)
    _ensure(MID_DB, MID_MESSAGES)
    result["contending"] = {
        f"{label}, {kind}": _contending(source, 4, 500, raw=kind == "raw")
        for label, source in (("empty", None), ("200k", MID_DB))
        for kind in ("store", "raw")
    }
    result["load_10k_session"] = _load_session(10_000, runs)
    result["search_1m"] = _search_big(200)
    result["huge_message"] = huge_message(runs)
    _print(result)
    return result


def _print(result: dict[str, Any]) -> None:
    sp = result["single_process"]
    print(f"store (SQLite {result['sqlite_version']}), one run")
    print("  appends, one process, one transaction each:")
    for sync in ("FULL", "NORMAL"):
        r = sp[sync]
        print(f"    synchronous={sync:<6}  raw {r['raw_per_s']:>6}/s   store {r['store_per_s']:>6}/s   {r['ratio']:.2f} x raw")
    print(f"    store at NORMAL vs raw at FULL: {sp['store_NORMAL_vs_raw_FULL']:.2f} x")
    print("  4 writer processes + 1 searcher (worst append target <= 100 ms):")
    for name, c in result["contending"].items():
        print(f"    {name:<14} {c['appends_per_s']:>5}/s  p50 {c['p50_ms']:>6} ms  p99 {c['p99_ms']:>7} ms  max {c['max_ms']:>7} ms"
              f"  {c['stored']}/{c['messages']} stored, {c['errors']} errors, {c['searches']} searches")  # fmt: skip
    ld = result["load_10k_session"]
    print(f"  load a {ld['messages']:,}-message session: store {ld['store_ms']} ms, raw {ld['raw_ms']} ms, {ld['ratio']} x (target <= {LOAD_RATIO_TARGET})")
    s = result["search_1m"]
    print(f"  search on {s['messages']:,} messages (build: {s['built_in_s']}), p50 store vs raw (target <= {SEARCH_RATIO_TARGET} x):")
    for name, r in s.items():
        if isinstance(r, dict) and "store_p50_ms" in r:
            ratio = f"   {r['ratio']:.2f} x" if "ratio" in r else ""
            raw = f"raw {r['raw_p50_ms']:>7.2f} ms" if "raw_p50_ms" in r else " " * 14
            print(f"    {name:<20} store {r['store_p50_ms']:>7.2f} ms  {raw}{ratio}")
    for label, r in s["semantics"].items():
        print(f"    {label:<7} {r['query']!r}: {r['rows']} rows, same as FTS5: {r['same_rows_as_fts5']}")
    _print_huge(result["huge_message"])


def _print_huge(h: dict[str, Any]) -> None:
    print(f"  search over one huge message, p50 of {h['runs']} (target <= {h['target_ms']:.0f} ms):")
    for name, r in h.items():
        if isinstance(r, dict):
            print(f"    {name:<21} {r['message_chars']:>9,} chars, {r['matches']:>7,} matches: {r['p50_ms']:>7.1f} ms"
                  f"  snippet {r['snippet_chars']} chars, highlighted: {r['highlighted']}")  # fmt: skip
