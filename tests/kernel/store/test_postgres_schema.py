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
