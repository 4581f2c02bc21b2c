"""Session store throughput and latency (issue 4).

* append, one process: ``SessionStore.append_message`` (one transaction per
  message, as the loop flushes) against raw ``sqlite3`` ``executemany`` into
  the same schema, indexes and FTS triggers with the same per-append
  transaction, and the same for batches of 100; with and without the trigram
  index (FIELD-NOTES.md measured ~2.4 x for it);
* append, 4 contending processes plus one searching: total throughput and
  per-append latency (p50/p99/max), errors;
* search on 1,000,000 messages: p50/p95 (target p50 <= 20 ms); the file is
  built once with bulk inserts and index rebuilds and cached in bench/results/;
* loading a 10,000-message session (target <= 100 ms).

Measured here only, never asserted in tests.
"""

from __future__ import annotations

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
BIG_MESSAGES = 1_000_000
SEARCH_P50_TARGET_MS = 20.0
LOAD_TARGET_MS = 100.0

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


# -- single process appends -------------------------------------------------------


def _store_appends(path: Path, texts: list[str], *, trigram: bool, batch: int) -> float:
    from hermes.kernel.store import SessionStore

    with SessionStore(path, trigram=trigram) as store:
        sid = store.create_session(source="bench")
        start = time.perf_counter()
        for i in range(0, len(texts), batch):
            store.append_messages(sid, [{"role": "user", "content": t} for t in texts[i : i + batch]])
        return len(texts) / (time.perf_counter() - start)


def _raw_appends(path: Path, texts: list[str], *, batch: int) -> float:
    from hermes.kernel.store import SessionStore

    with SessionStore(path) as store:  # the same schema, indexes and triggers
        sid = store.create_session(source="bench")
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    sql = "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)"
    start = time.perf_counter()
    for i in range(0, len(texts), batch):
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(sql, [(sid, t, time.time()) for t in texts[i : i + batch]])
        conn.execute("UPDATE sessions SET message_count = message_count + ? WHERE id = ?", (batch, sid))
        conn.execute("COMMIT")
    rate = len(texts) / (time.perf_counter() - start)
    conn.close()
    return rate


def _single_process(n: int) -> dict[str, Any]:
    texts = _texts(n, seed=1)
    out: dict[str, Any] = {"messages": n}
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for batch in (1, 100):
            raw = _raw_appends(d / f"raw{batch}.db", texts, batch=batch)
            store = _store_appends(d / f"store{batch}.db", texts, trigram=True, batch=batch)
            plain = _store_appends(d / f"plain{batch}.db", texts, trigram=False, batch=batch)
            out[f"batch_{batch}"] = {
                "raw_sqlite_per_s": round(raw),
                "store_per_s": round(store),
                "ratio_store_vs_raw": round(store / raw, 3),
                "store_without_trigram_per_s": round(plain),
                "trigram_cost_x": round(plain / store, 2),
            }
    return out


# -- contending processes --------------------------------------------------------


def _writer(db: str, count: int, seed: int) -> None:
    """Child process: append ``count`` messages, print latencies (ms) as JSON."""
    from hermes.kernel.store import SessionStore

    texts = _texts(count, seed)
    latencies, errors = [], []
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


def _searcher(db: str, seconds: float) -> None:
    from hermes.kernel.store import SessionStore

    words = _vocabulary()
    rng = random.Random(3)
    done, errors = 0, []
    with SessionStore(db) as store:
        stop = time.monotonic() + seconds
        while time.monotonic() < stop:
            try:
                store.search(rng.choice(words), limit=10)
                done += 1
            except Exception as exc:
                errors.append(repr(exc))
            time.sleep(0.005)
    print(json.dumps({"searches": done, "errors": errors}))


def _child(code: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _contending(writers: int, per_writer: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "state.db")
        from hermes.kernel.store import SessionStore

        SessionStore(db).close()  # schema first, so the timing covers appends only
        start = time.perf_counter()
        procs = [_child(f"from bench.store import _writer; _writer({db!r}, {per_writer}, {n})") for n in range(writers)]
        searcher = _child(f"from bench.store import _searcher; _searcher({db!r}, 3.0)")
        results = []
        for p in procs:
            out, err = p.communicate(timeout=600)
            if p.returncode != 0:
                raise RuntimeError(err)
            results.append(json.loads(out))
        elapsed = time.perf_counter() - start
        s_out, _ = searcher.communicate(timeout=60)
        search = json.loads(s_out)
        conn = sqlite3.connect(db)
        stored = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
        conn.close()
    latencies = [ms for r in results for ms in r["latencies"]]
    return {
        "writers": writers,
        "messages": writers * per_writer,
        "stored": stored,
        "errors": sum(len(r["errors"]) for r in results) + len(search["errors"]),
        "appends_per_s": round(writers * per_writer / elapsed),
        "latency_ms": {"p50": round(_pct(latencies, 0.5), 2), "p99": round(_pct(latencies, 0.99), 2), "max": round(max(latencies), 2)},
        "concurrent_searches": search["searches"],
    }


# -- search on a big file ----------------------------------------------------------


def _build_big(path: Path, total: int) -> float:
    """Bulk-build ``total`` messages in 10,000 sessions: triggers off, then index rebuilds."""
    from hermes.kernel.store import SessionStore

    start = time.perf_counter()
    tmp = path.with_suffix(".building")
    for suffix in ("", "-wal", "-shm", ".lock"):
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
    for suffix in ("-wal", "-shm", ".lock"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    return time.perf_counter() - start


def _search_big(queries: int) -> dict[str, Any]:
    from hermes.kernel.store import SessionStore

    RESULTS.mkdir(parents=True, exist_ok=True)
    build_s = None
    if not BIG_DB.exists():
        build_s = _build_big(BIG_DB, BIG_MESSAGES)
    words = _vocabulary()
    rng = random.Random(11)
    common = words[:50]  # the Zipf head: each in ~1-2 % of messages
    cases = {
        "one word": [rng.choice(words) for _ in range(queries)],
        "two words": [f"{rng.choice(words)} {rng.choice(words[:500])}" for _ in range(queries)],
        "frequent word": [rng.choice(common) for _ in range(queries)],
        # The inside of a word is no word of its own: unicode61 finds nothing, trigram does.
        "substring (trigram)": [rng.choice(words[200:])[1:-1] for _ in range(queries)],
    }
    out: dict[str, Any] = {"messages": BIG_MESSAGES, "built_in_s": round(build_s, 1) if build_s else "cached"}
    with SessionStore(BIG_DB) as store:
        store.search("warmup")
        count = store.conn.execute("SELECT max(id) FROM messages").fetchone()[0]
        out["messages"] = count
        for name, qs in cases.items():
            times = []
            for q in qs:
                start = time.perf_counter()
                store.search(q, limit=20)
                times.append((time.perf_counter() - start) * 1000)
            out[name] = {"queries": len(qs), "p50_ms": round(_pct(times, 0.5), 2), "p95_ms": round(_pct(times, 0.95), 2)}
        times = []
        for q in cases["one word"][:100]:
            start = time.perf_counter()
            store.search(q, limit=20, sort="time")
            times.append((time.perf_counter() - start) * 1000)
        out["one word, newest first"] = {"queries": len(times), "p50_ms": round(_pct(times, 0.5), 2), "p95_ms": round(_pct(times, 0.95), 2)}
    return out


# -- loading a long session --------------------------------------------------------


def _load_session(n: int, runs: int) -> dict[str, Any]:
    from hermes.kernel.store import SessionStore

    texts = _texts(n, seed=5)
    with tempfile.TemporaryDirectory() as tmp:
        with SessionStore(Path(tmp) / "state.db") as store:
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
            times = []
            for _ in range(runs):
                start = time.perf_counter()
                conversation = store.resume(sid)
                times.append((time.perf_counter() - start) * 1000)
            assert len(conversation.messages) == n
    return {"messages": n, "runs": runs, "median_ms": round(statistics.median(times), 2), "max_ms": round(max(times), 2)}


def run(runs: int | None = None) -> dict[str, Any]:
    runs = runs or 5
    result: dict[str, Any] = {"benchmark": "store", "sqlite_version": sqlite3.sqlite_version}
    result["single_process"] = _single_process(2000)
    result["contending"] = _contending(4, 500)
    result["search_1m"] = _search_big(200)
    result["load_10k_session"] = _load_session(10_000, runs)

    sp = result["single_process"]
    print(f"store (SQLite {sqlite3.sqlite_version})")
    print("  append, one process           raw sqlite3   store    ratio   store w/o trigram  trigram cost")
    for key, label in (("batch_1", "1 message per transaction"), ("batch_100", "100 per transaction      ")):
        r = sp[key]
        print(f"    {label}   {r['raw_sqlite_per_s']:>8}/s {r['store_per_s']:>7}/s  {r['ratio_store_vs_raw']:>5.2f} x"
              f"  {r['store_without_trigram_per_s']:>9}/s        {r['trigram_cost_x']:.2f} x")  # fmt: skip
    c = result["contending"]
    lat = c["latency_ms"]
    print(f"  append, {c['writers']} processes + 1 searcher: {c['appends_per_s']}/s total, latency p50 {lat['p50']} ms,"
          f" p99 {lat['p99']} ms, max {lat['max']} ms; {c['stored']}/{c['messages']} stored, {c['errors']} errors,"
          f" {c['concurrent_searches']} searches")  # fmt: skip
    s = result["search_1m"]
    print(f"  search on {s['messages']:,} messages (build: {s['built_in_s']}{' s' if s['built_in_s'] != 'cached' else ''})")
    for name, r in s.items():
        if isinstance(r, dict):
            print(f"    {name:<24} p50 {r['p50_ms']:>7.2f} ms   p95 {r['p95_ms']:>7.2f} ms   ({r['queries']} queries)")
    verdict = "meets" if s["one word"]["p50_ms"] <= SEARCH_P50_TARGET_MS else "misses"
    print(f"    one-word p50 {verdict} target {SEARCH_P50_TARGET_MS:g} ms")
    ld = result["load_10k_session"]
    verdict = "meets" if ld["median_ms"] <= LOAD_TARGET_MS else "misses"
    print(f"  load a {ld['messages']:,}-message session: median {ld['median_ms']} ms, max {ld['max_ms']} ms ({verdict} target {LOAD_TARGET_MS:g} ms)")
    return result
