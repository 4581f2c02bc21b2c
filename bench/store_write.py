"""Writes: the SQLite store against hand-written ``sqlite3`` (issues 4, 17 and 28).

One run reports:

* contended: 4 writer processes and 1 searcher, on an empty file and on a
  200,000-message file; the baseline is hand-written sqlite3 with the same two
  FTS5 indexes (words and trigram) kept by plain triggers, and a blocking
  ``fcntl.flock`` around each write transaction. Throughput (store / raw;
  target >= 1.0) and the worst single append (target <= 100 ms);
* one writer at ``synchronous=FULL``: the store against a one-index schema
  (words only; target >= 0.8 x) and the two-index schema, and at ``NORMAL``
  against the two-index schema;
* the WAL's size after each single-writer burst, and the statements one
  append runs (triggers included).

Each process times its own appends, so interpreter start-up is not counted.
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.store_data import MID_DB, MID_MESSAGES, RawSearch, child, collect, ensure, open_sqlite, pct, ratio, texts, vocabulary

__all__ = ["CONTENDED_RATIO_TARGET", "FULL_RATIO_TARGET", "WORST_APPEND_TARGET_MS", "print_writes", "run_writes"]

WORST_APPEND_TARGET_MS = 100.0
CONTENDED_RATIO_TARGET = 1.0
FULL_RATIO_TARGET = 0.8

_INSERT = (
    "INSERT INTO messages (session_id, role, content, content_parts, tool_calls, tool_call_id, tool_name, "
    "reasoning, finish_reason, token_count, timestamp, tool_args) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
)
_RAW_TABLES = """
CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, started_at REAL NOT NULL,
    updated_at REAL, message_count INTEGER NOT NULL DEFAULT 0, title TEXT);
CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
    content TEXT, content_parts TEXT, tool_calls TEXT, tool_call_id TEXT, tool_name TEXT, reasoning TEXT,
    finish_reason TEXT, token_count INTEGER, timestamp REAL NOT NULL, tool_args TEXT);
CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, id);
"""
_INDEXES = {"messages_fts": "unicode61 remove_diacritics 2", "messages_trigram": "trigram"}


def _plain_triggers(table: str) -> list[str]:
    cols, new, old = "content, tool_name, tool_args", "new.content, new.tool_name, new.tool_args", "old.content, old.tool_name, old.tool_args"
    return [
        f"CREATE TRIGGER {table}_ai AFTER INSERT ON messages BEGIN INSERT INTO {table}(rowid, {cols}) VALUES (new.id, {new}); END",
        f"CREATE TRIGGER {table}_ad AFTER DELETE ON messages BEGIN INSERT INTO {table}({table}, rowid, {cols}) "
        f"VALUES ('delete', old.id, {old}); END",
    ]


def raw_schema(conn: sqlite3.Connection, indexes: int) -> None:
    """The hand-written schema with the first ``indexes`` FTS indexes, each kept by plain triggers.

    On a store's file it keeps the tables and replaces the store's triggers (the 200k copy)."""
    conn.executescript(_RAW_TABLES)
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'messages'").fetchall():
        conn.execute(f"DROP TRIGGER {name}")
    for table, tokenize in list(_INDEXES.items())[:indexes]:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone():
            conn.execute(f"CREATE VIRTUAL TABLE {table} USING fts5(content, tool_name, tool_args, content='messages', "
                         f"content_rowid='id', tokenize=\"{tokenize}\")")  # fmt: skip
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")
        for sql in _plain_triggers(table):
            conn.execute(sql)


def _raw_conn(path: Path | str, synchronous: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"PRAGMA synchronous = {synchronous}")
    return conn


def _raw_append(conn: sqlite3.Connection, sid: str, text: str) -> None:
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE sessions SET message_count = message_count + 1, updated_at = ? WHERE id = ?", (time.time(), sid))
    conn.execute(_INSERT, (sid, "user", text, None, None, None, None, None, None, None, time.time(), None))
    conn.execute("COMMIT")


def _raw_session(conn: sqlite3.Connection, sid: str) -> None:
    conn.execute("INSERT INTO sessions (id, source, started_at, updated_at) VALUES (?, 'bench', ?, ?)", (sid, time.time(), time.time()))


def _wal_mb(path: Path | str) -> float:
    wal = Path(str(path) + "-wal")
    return round(wal.stat().st_size / 2**20, 2) if wal.exists() else 0.0


# -- one writer ---------------------------------------------------------------------------


def _store_burst(path: Path, lines: list[str], synchronous: str) -> tuple[float, float]:
    """Seconds for the appends and the close (which indexes what waits), and the WAL's size
    (MiB) right after the appends."""
    with open_sqlite(path, synchronous=synchronous) as store:
        sid = store.create_session(source="bench")
        start = time.perf_counter()
        for text in lines:
            store.append_message(sid, {"role": "user", "content": text})
        wal = _wal_mb(path)
    return time.perf_counter() - start, wal


def _raw_burst(path: Path, lines: list[str], synchronous: str, indexes: int) -> tuple[float, float]:
    conn = _raw_conn(path, synchronous)
    raw_schema(conn, indexes)
    _raw_session(conn, "raw")
    start = time.perf_counter()
    for text in lines:
        _raw_append(conn, "raw", text)
    wal = _wal_mb(path)
    conn.close()
    return time.perf_counter() - start, wal


def _deferred_index(path: Path) -> dict[str, float]:
    """What a burst left to the substring index (kernel/store/substring_index.py), and the time the
    next writer's indexer takes for it, off anyone's append: the cost moved, not removed."""
    from hermes.kernel.store.substring_index import CATCH_UP_BATCH, catch_up, lag

    conn = sqlite3.connect(path, isolation_level=None)
    try:
        waiting = lag(conn)
        start = time.perf_counter()
        while True:
            conn.execute("BEGIN IMMEDIATE")
            done = catch_up(conn)
            conn.execute("COMMIT")
            if done < CATCH_UP_BATCH:
                break
        return {"messages": waiting, "ms": round((time.perf_counter() - start) * 1000, 1)}
    finally:
        conn.close()


def _statements_per_append(path: Path) -> dict[str, float]:
    """Statements one append runs on the writer connection: SQL programs (trigger bodies included)
    and the statements FTS5 runs inside them to keep its indexes (traced as ``-- ...``)."""
    seen: list[str] = []
    with open_sqlite(path) as store:
        sid = store.create_session(source="bench")
        store.conn.set_trace_callback(seen.append)
        for i in range(10):
            store.append_message(sid, {"role": "user", "content": f"counted append {i}"})
        store.conn.set_trace_callback(None)
    internal = sum(1 for s in seen if s.startswith("--"))
    return {"statements": (len(seen) - internal) / 10, "fts_internal": internal / 10}


def single_writer(full: int, normal: int, rounds: int = 4) -> dict[str, Any]:
    """One process, one transaction per append: the store against the hand-written schemas.

    Each kind writes ``rounds`` bursts to fresh files, taking turns at going first, so a
    machine whose disk or load changes during the run slows all of them alike (on a
    shared machine the same run alone varies twofold). Rates are over all bursts; WAL
    sizes the largest seen after a burst."""
    kinds = {"FULL": ("store", "raw_1_index", "raw_2_index"), "NORMAL": ("store", "raw_2_index")}
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for sync, n in (("FULL", full), ("NORMAL", normal)):
            lines = texts(n // rounds, seed=1)
            spent = dict.fromkeys(kinds[sync], 0.0)
            wal = dict.fromkeys(kinds[sync], 0.0)
            for turn in range(rounds):
                order = kinds[sync][turn % len(kinds[sync]) :] + kinds[sync][: turn % len(kinds[sync])]
                for kind in order:
                    path = d / f"{kind}-{sync}-{turn}.db"
                    if kind == "store":
                        seconds, mb = _store_burst(path, lines, sync)
                    else:
                        seconds, mb = _raw_burst(path, lines, sync, int(kind[4]))
                    spent[kind] += seconds
                    wal[kind] = max(wal[kind], mb)
            r: dict[str, Any] = {"messages": len(lines) * rounds, "rounds": rounds}
            r["index_left_for_later"] = _deferred_index(d / f"store-{sync}-{rounds - 1}.db")
            for kind in kinds[sync]:
                r[f"{kind}_per_s"] = round(len(lines) * rounds / spent[kind], 1)
                r[f"{kind}_wal_mb"] = wal[kind]
            for kind in kinds[sync][1:]:
                r[f"ratio_vs_{kind[4]}_index"] = ratio(r["store_per_s"], r[f"{kind}_per_s"])
            out[sync] = r
        out["per_append"] = _statements_per_append(d / "counted.db")
    return out


# -- contending processes -----------------------------------------------------------------


def _writer(db: str, count: int, seed: int, raw: bool = False) -> None:
    """Child process: append ``count`` messages; print latencies (ms) and the span (epoch s) as JSON."""
    lines = texts(count, seed)
    latencies: list[float] = []
    errors: list[str] = []
    if raw:
        conn = _raw_conn(db, "NORMAL")
        lock = os.open(db + ".rawlock", os.O_RDWR | os.O_CREAT, 0o600)
        sid = f"raw_{seed}"
        _raw_session(conn, sid)
        began = time.time()
        for text in lines:
            start = time.perf_counter()
            fcntl.flock(lock, fcntl.LOCK_EX)  # blocking: the kernel queues the writers
            try:
                _raw_append(conn, sid, text)
            except Exception as exc:  # counted, never expected
                errors.append(repr(exc))
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
            latencies.append((time.perf_counter() - start) * 1000)
        ended = time.time()
    else:
        with open_sqlite(db) as store:
            sid = store.create_session(source="bench")
            began = time.time()
            for text in lines:
                start = time.perf_counter()
                try:
                    store.append_message(sid, {"role": "user", "content": text})
                except Exception as exc:  # counted, never expected
                    errors.append(repr(exc))
                latencies.append((time.perf_counter() - start) * 1000)
            ended = time.time()
    print(json.dumps({"latencies": latencies, "errors": errors, "began": began, "ended": ended}))


def _searcher(db: str, seconds: float, raw: bool = False) -> None:
    words = vocabulary()
    rng = random.Random(3)
    done, errors = 0, []
    store = None if raw else open_sqlite(db)
    search = RawSearch(db).search if store is None else store.search
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        try:
            search(rng.choice(words[:500]), limit=10)
            done += 1
        except Exception as exc:
            errors.append(repr(exc))
        time.sleep(0.005)
    if store is not None:
        store.close()
    print(json.dumps({"searches": done, "errors": errors}))


def _contending(source: Path | None, writers: int, per_writer: int, raw: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "state.db")
        if source is not None:
            shutil.copyfile(source, db)
        if raw:  # schema first, so the timing covers appends only
            conn = _raw_conn(db, "NORMAL")
            raw_schema(conn, 2)
            conn.close()
        else:
            open_sqlite(db).close()
        before = sqlite3.connect(db).execute("SELECT count(*) FROM messages").fetchone()[0]
        procs = [child(f"from bench.store_write import _writer; _writer({db!r}, {per_writer}, {n}, raw={raw})") for n in range(writers)]
        searcher = child(f"from bench.store_write import _searcher; _searcher({db!r}, 3.0, raw={raw})")
        results, search, _ = collect(procs, searcher)
        conn = sqlite3.connect(db)
        stored = conn.execute("SELECT count(*) FROM messages").fetchone()[0] - before
        conn.close()
    latencies = [ms for r in results for ms in r["latencies"]]
    span = max(r["ended"] for r in results) - min(r["began"] for r in results)
    return {
        "messages": writers * per_writer,
        "stored": stored,
        "errors": sum(len(r["errors"]) for r in results) + len(search["errors"]),
        "appends_per_s": round(writers * per_writer / span),
        "p50_ms": round(pct(latencies, 0.5), 2),
        "p99_ms": round(pct(latencies, 0.99), 2),
        "max_ms": round(max(latencies), 2),
        "searches": search["searches"],
    }


def contended(writers: int = 4, per_writer: int = 500) -> dict[str, Any]:
    """Store and raw on an empty and on the 200,000-message file, with the throughput ratio."""
    ensure(MID_DB, MID_MESSAGES)
    out: dict[str, Any] = {}
    for label, source in (("empty", None), ("200k", MID_DB)):
        store = _contending(source, writers, per_writer, raw=False)
        raw = _contending(source, writers, per_writer, raw=True)
        out[label] = {"store": store, "raw": raw, "throughput_ratio": ratio(store["appends_per_s"], raw["appends_per_s"])}
    return out


def run_writes(full: int = 1000, normal: int = 2000) -> dict[str, Any]:
    """Every figure this module measures, in one run."""
    return {"contended": contended(), "single_writer": single_writer(full, normal)}


def print_writes(result: dict[str, Any]) -> None:
    print(f"  4 writer processes + 1 searcher (targets: >= {CONTENDED_RATIO_TARGET} x raw, worst append <= {WORST_APPEND_TARGET_MS:g} ms):")
    for label, c in result["contended"].items():
        for kind in ("store", "raw"):
            r = c[kind]
            print(f"    {label:<5} {kind:<5} {r['appends_per_s']:>5}/s  p50 {r['p50_ms']:>6} ms  p99 {r['p99_ms']:>7} ms  max {r['max_ms']:>7} ms"
                  f"  {r['stored']}/{r['messages']} stored, {r['errors']} errors, {r['searches']} searches")  # fmt: skip
        print(f"    {label:<5} throughput store / raw: {c['throughput_ratio']:.2f} x")
    sw = result["single_writer"]
    full, normal = sw["FULL"], sw["NORMAL"]
    print(f"  one writer, synchronous=FULL ({full['messages']} appends; target >= {FULL_RATIO_TARGET} x one index):")
    print(f"    store {full['store_per_s']:.0f}/s   raw one index {full['raw_1_index_per_s']:.0f}/s ({full['ratio_vs_1_index']:.2f} x)"
          f"   raw two indexes {full['raw_2_index_per_s']:.0f}/s ({full['ratio_vs_2_index']:.2f} x)")  # fmt: skip
    left = full["index_left_for_later"]
    print(f"    a burst leaves {left['messages']:g} messages to the substring index; the next writer indexes them"
          f" in {left['ms']:g} ms, off the append path")  # fmt: skip
    print(f"  one writer, synchronous=NORMAL ({normal['messages']} appends): store {normal['store_per_s']:.0f}/s"
          f"   raw two indexes {normal['raw_2_index_per_s']:.0f}/s ({normal['ratio_vs_2_index']:.2f} x)")  # fmt: skip
    print(f"  WAL after the burst: FULL store {full['store_wal_mb']} MiB, raw {full['raw_2_index_wal_mb']} MiB;"
          f" NORMAL store {normal['store_wal_mb']} MiB, raw {normal['raw_2_index_wal_mb']} MiB")  # fmt: skip
    pa = sw["per_append"]
    print(f"  one append runs {pa['statements']:g} SQL programs (triggers included) and {pa['fts_internal']:g} FTS5-internal statements")
