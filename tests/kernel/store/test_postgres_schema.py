"""PostgreSQL migrations: a blank database gets them all; an older one is upgraded with its rows kept."""

from __future__ import annotations

import psycopg

from hermes.plugins.session_stores.postgresql import PostgresSessionStore
from hermes.plugins.session_stores.postgresql.schema import MIGRATIONS, pending_migrations


def test_a_database_from_before_markers_is_upgraded_in_place(postgres_url: str) -> None:
    # The schema as issue 17 shipped it (m001, m002), holding one session with a message.
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE hermes_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
        for name, statements in MIGRATIONS[:2]:
            for statement in statements:
                conn.execute(statement)
            conn.execute("INSERT INTO hermes_migrations (name) VALUES (%s)", (name,))
        conn.execute("INSERT INTO sessions (id, source, started_at, message_count) VALUES ('old', 'cli', 1.0, 1)")
        conn.execute("INSERT INTO messages (session_id, seq, role, content, timestamp) VALUES ('old', 1, 'user', 'kept', 1.0)")
        assert pending_migrations(conn) == [name for name, _ in MIGRATIONS[2:]]
    with PostgresSessionStore(postgres_url, pool_size=1) as store:
        assert [(m["content"], m["marker"]) for m in store.get_messages("old")] == [("kept", None)]
        store.append_message("old", {"role": "user", "content": "[handoff]", "marker": "handoff"})
        assert [m["marker"] for m in store.get_messages("old")] == [None, "handoff"]
        store.record_compaction("old", parent_session_id=None, engine="compressor", fidelity=1.0)
        assert store.compaction("old")["fidelity"] == 1.0
        assert {c.name: c.ok for c in store.health()}["migrations"] is True
    with psycopg.connect(postgres_url) as conn:
        assert pending_migrations(conn) == []


def test_a_database_from_before_tenants_reads_every_session_as_no_tenant(postgres_url: str) -> None:
    names = [name for name, _ in MIGRATIONS]
    before = names.index("m004_tenants")
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE hermes_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
        for name, statements in MIGRATIONS[:before]:
            for statement in statements:
                conn.execute(statement)
            conn.execute("INSERT INTO hermes_migrations (name) VALUES (%s)", (name,))
        conn.execute("INSERT INTO sessions (id, source, started_at, message_count) VALUES ('old', 'api', 1.0, 1)")
        conn.execute("INSERT INTO messages (session_id, seq, role, content, timestamp) VALUES ('old', 1, 'user', 'old words', 1.0)")
        assert pending_migrations(conn) == names[before:]
    with PostgresSessionStore(postgres_url, pool_size=1) as store:
        assert store.get_session("old")["tenant"] is None
        assert store.list_sessions(tenant="acme") == [] and store.search("old words", tenant="acme") == []
        assert [h.session_id for h in store.search("old words")] == ["old"]
    with psycopg.connect(postgres_url) as conn:
        assert pending_migrations(conn) == []
        columns = conn.execute(
            "SELECT a.attname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n) ON true "
            "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum "
            "WHERE c.relname = 'idx_sessions_tenant' ORDER BY k.n"
        ).fetchall()
        assert [c[0] for c in columns] == ["tenant", "started_at"]
