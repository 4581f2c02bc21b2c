"""PostgreSQL backend specifics: store.synchronous, the durability barrier, snippets like SQLite's."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from hermes.kernel import HermesError
from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel.testing.store_suite import seed_search_corpus
from hermes.plugins.session_stores.postgresql import PostgresSessionStore
from hermes.plugins.session_stores.postgresql.store import _FLUSH


def _open(url: str, synchronous: str | None) -> PostgresSessionStore:
    options = {"pool_size": 1} | ({"synchronous": synchronous} if synchronous is not None else {})
    return PostgresSessionStore.from_config(url=url, home=None, options=options)


def test_store_synchronous_is_read_and_checked(postgres_url: str) -> None:
    with _open(postgres_url, None) as store:
        assert store.synchronous == "NORMAL"
    with _open(postgres_url, "off") as store:
        assert store.synchronous == "OFF"
        sid = store.create_session()
        assert store.append_messages(sid, [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
        assert [m["content"] for m in store.get_messages(sid)] == ["a", "b"]
    with pytest.raises(HermesError, match="store.synchronous must be one of OFF, NORMAL, FULL, EXTRA, not 'SOMETIMES'"):
        _open(postgres_url, "sometimes")


def test_commits_do_not_wait_while_locking_and_the_barrier_flushes_them(postgres_url: str) -> None:
    # The test cluster runs synchronous_commit=off: the barrier must still flush ("on").
    with _open(postgres_url, "FULL") as store:
        sid = store.create_session()
        with store.pool.connection() as conn:
            assert conn.execute("SHOW synchronous_commit").fetchone()[0] == "off"
            for n in range(20):
                conn.execute("UPDATE sessions SET title = %s WHERE id = %s", (f"t{n}", sid))  # commits unflushed
                committed = conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0]
                conn.execute(_FLUSH, ("on",))
                flushed = conn.execute("SELECT pg_current_wal_flush_lsn()").fetchone()[0]
                assert flushed >= committed


def test_an_append_that_fails_leaves_a_clean_connection(postgres_url: str) -> None:
    with _open(postgres_url, "NORMAL") as store:  # one pooled connection, reused after the failure
        sid = store.create_session()
        with psycopg.connect(postgres_url, autocommit=True) as conn:  # a seq taken behind the store's back
            conn.execute(
                "INSERT INTO messages (session_id, seq, role, content, timestamp) VALUES (%s, 1, 'user', 'x', 0)", (sid,)
            )
        with pytest.raises(HermesError, match="duplicate"):
            store.append_message(sid, {"role": "user", "content": "clash"})
        other = store.create_session()
        assert store.append_message(other, {"role": "user", "content": "fine"}) > 0
        assert store.get_session(sid)["message_count"] == 0  # the failed append changed nothing


def test_snippets_are_the_ones_sqlite_cuts(postgres_url: str, tmp_path: Path) -> None:
    queries = ["refactor auth", "tokens", "postgres OR mysql", "Refact*", '"checks tokens"', "login NOT mysql", "read_file"]
    with _open(postgres_url, None) as pg, SQLiteSessionStore(tmp_path / "state.db") as lite:
        seed_search_corpus(pg)
        seed_search_corpus(lite)
        for query in queries:
            pg_hits = {(h.role, h.before and h.before["content"]): h.snippet for h in pg.search(query)}
            lite_hits = {(h.role, h.before and h.before["content"]): h.snippet for h in lite.search(query)}
            assert pg_hits and pg_hits == lite_hits, query
            assert all("**" in s for s in pg_hits.values()), query
