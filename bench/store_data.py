"""What the store benchmarks share: generated text, percentiles, the cached big files, a raw searcher.

Imported by :mod:`bench.store`, :mod:`bench.store_write`, :mod:`bench.store_huge`
and :mod:`bench.store_pg`, none of which imports another's internals.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from hermes.kernel.store import open_store
from hermes.kernel.store.salvage import rebuild_fts

__all__ = [
    "BIG_DB", "BIG_MESSAGES", "MID_DB", "MID_MESSAGES", "RESULTS", "ROOT", "RawSearch",
    "build_big", "ensure", "open_sqlite", "pct", "ratio", "texts", "vocabulary",
]  # fmt: skip

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
BIG_DB = RESULTS / "store-1m.db"
MID_DB = RESULTS / "store-200k.db"
BIG_MESSAGES = 1_000_000
MID_MESSAGES = 200_000


def open_sqlite(path: Path | str, **options: Any) -> Any:
    """The SQLite store on ``path`` the way kernel code opens one (``open_store``), ``options``
    as the ``store`` config section (``synchronous=...``)."""
    return open_store({"store": options}, None, url=str(path))


_WORDS: list[str] | None = None


def vocabulary() -> list[str]:
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


def texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words = vocabulary()
    weights = _weights(len(words))
    lengths = [rng.randint(5, 30) for _ in range(count)]
    flat = rng.choices(words, weights=weights, k=sum(lengths))
    out, at = [], 0
    for n in lengths:
        out.append(" ".join(flat[at : at + n]))
        at += n
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def build_big(path: Path, total: int) -> float:
    """Bulk-build ``total`` messages in 10,000 sessions: triggers off, then index rebuilds."""
    start = time.perf_counter()
    tmp = path.with_suffix(".building")
    for suffix in ("", "-wal", "-shm", ".lock", ".lock-queue"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    open_sqlite(tmp).close()
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
        lines = texts(chunk, seed=offset)
        rows = []
        for i, text in enumerate(lines):
            n = offset + i
            s = n // per
            rows.append((f"20250101_{s:06d}_bench0", "user" if n % 2 == 0 else "assistant", text, now + s * 3000 + n % per))
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)", rows)
        conn.execute("COMMIT")
    for _, sql in triggers:
        conn.execute(sql)
    conn.close()
    # The store's own rebuild, which also records how far the substring index reaches.
    tables = rebuild_fts(tmp)
    conn = sqlite3.connect(tmp, isolation_level=None)
    for table in tables:
        conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")  # offline: nobody else writes
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    os.replace(tmp, path)
    for suffix in ("-wal", "-shm", ".lock", ".lock-queue"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    return time.perf_counter() - start


def ratio(a: float, b: float) -> float:
    return round(a / b, 3) if b else float("nan")


def ensure(path: Path, total: int) -> float | str:
    RESULTS.mkdir(parents=True, exist_ok=True)
    if path.exists():
        return "cached"
    return round(build_big(path, total), 1)



class RawSearch:
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


def child(code: str) -> subprocess.Popen[str]:
    """A Python process running ``code`` from the repository root, its output piped."""
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def collect(writers: list[subprocess.Popen[str]], searcher: subprocess.Popen[str]) -> tuple[list[Any], Any, float]:
    """Each writer's JSON report, the searcher's, and when the last writer was done (``perf_counter``).

    A process that failed raises with its stderr."""
    results = []
    done = 0.0
    for proc in [*writers, searcher]:
        if proc is searcher:
            done = time.perf_counter()
        out, err = proc.communicate(timeout=900)
        if proc.returncode != 0:
            raise RuntimeError(err)
        results.append(json.loads(out))
    return results[:-1], results[-1], done
