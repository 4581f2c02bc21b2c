"""Many processes, each with its own pool, append to the same PostgreSQL sessions while one searches."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psycopg

from hermes.plugins.session_stores.postgresql import PostgresSessionStore

ROOT = Path(__file__).resolve().parents[3]
WRITERS, PER_WRITER, SESSIONS = 8, 500, 4


def test_eight_processes_lose_and_duplicate_nothing_and_leave_no_gap(postgres_url: str) -> None:
    with PostgresSessionStore(postgres_url, pool_size=1) as store:
        sessions = [store.create_session(source="shared") for _ in range(SESSIONS)]
    worker = [sys.executable, "-m", "tests.kernel.store._shared_worker", postgres_url]
    procs = [
        subprocess.Popen([*worker, f"w{n}", str(PER_WRITER), ",".join(sessions)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for n in range(WRITERS)
    ]
    searcher = subprocess.Popen([*worker, "search", "5", ",".join(sessions)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for p in [*procs, searcher]:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-2000:]
    assert json.loads(out)["done"] > 0  # the searcher ran throughout
    with psycopg.connect(postgres_url) as conn:
        total = conn.execute("SELECT count(*), count(DISTINCT content) FROM messages").fetchone()
        assert total == (WRITERS * PER_WRITER, WRITERS * PER_WRITER)  # 0 lost, 0 duplicated
        for sid in sessions:
            seqs = [r[0] for r in conn.execute("SELECT seq FROM messages WHERE session_id = %s ORDER BY seq", (sid,))]
            count = conn.execute("SELECT message_count FROM sessions WHERE id = %s", (sid,)).fetchone()[0]
            assert seqs == list(range(1, len(seqs) + 1)) and count == len(seqs)  # gap-free
    with PostgresSessionStore(postgres_url, pool_size=1) as store:
        for sid in sessions:
            contents = [m["content"] for m in store.get_messages(sid)]
            for n in range(WRITERS):  # each writer's messages to this session in its own order
                mine = [int(c.split()[0].split("-")[1]) for c in contents if c.startswith(f"w{n}-")]
                assert mine == sorted(mine)
