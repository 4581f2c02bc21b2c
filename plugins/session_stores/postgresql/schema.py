"""The PostgreSQL schema as an append-only list of named, versioned migrations.

Applied on every open inside one transaction that first takes an advisory
lock, so many hosts opening a new database at once never race through the same
migration. A migration that has landed is never edited, only followed by a new
one; ``hermes_migrations`` records what ran.

Messages carry ``seq``, their 1-based position in their session, unique per
session: an append takes its numbers from ``sessions.message_count`` in the
same transaction that raises it (a row lock), so concurrent writers on many
hosts never leave a gap or a duplicate. ``tsv`` is a generated ``tsvector``
(``simple`` configuration, like FTS5's unicode61: no stemming) weighting
content over tool name and arguments, behind a GIN index; ``pg_trgm`` indexes
the same text for substrings and CJK.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LOCK_KEY", "MIGRATIONS", "apply_migrations", "pending_migrations"]

# Any constant works; this one spells "hermes" in ASCII.
LOCK_KEY = 0x6865726D6573

MIGRATIONS: list[tuple[str, tuple[str, ...]]] = [
    (
        "m001_sessions_and_messages",
        (
            """CREATE TABLE sessions (
                id text PRIMARY KEY,
                source text NOT NULL,
                model text,
                system_prompt text,
                parent_session_id text,
                started_at double precision NOT NULL,
                ended_at double precision,
                end_reason text,
                title text,
                message_count integer NOT NULL DEFAULT 0,
                tool_call_count integer NOT NULL DEFAULT 0,
                api_call_count integer NOT NULL DEFAULT 0,
                compression_count integer NOT NULL DEFAULT 0,
                input_tokens bigint NOT NULL DEFAULT 0,
                output_tokens bigint NOT NULL DEFAULT 0,
                cache_read_tokens bigint NOT NULL DEFAULT 0,
                cache_write_tokens bigint NOT NULL DEFAULT 0,
                reasoning_tokens bigint NOT NULL DEFAULT 0,
                estimated_cost_usd double precision NOT NULL DEFAULT 0,
                cost_status text,
                updated_at double precision
            )""",
            "CREATE INDEX idx_sessions_parent ON sessions (parent_session_id)",
            "CREATE INDEX idx_sessions_started ON sessions (started_at)",
            "CREATE INDEX idx_sessions_source ON sessions (source, started_at)",
            "CREATE UNIQUE INDEX idx_sessions_title ON sessions (title) WHERE title IS NOT NULL",
            """CREATE TABLE messages (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                seq integer NOT NULL,
                role text NOT NULL,
                content text,
                content_parts text,
                tool_calls text,
                tool_call_id text,
                tool_name text,
                reasoning text,
                finish_reason text,
                token_count integer,
                timestamp double precision NOT NULL,
                tool_args text,
                CONSTRAINT messages_session_seq UNIQUE (session_id, seq)
            )""",
        ),
    ),
    (
        "m002_search",
        (
            "CREATE EXTENSION IF NOT EXISTS pg_trgm",
            """ALTER TABLE messages ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
                setweight(to_tsvector('simple', coalesce(content, '')), 'A')
                || setweight(to_tsvector('simple', coalesce(tool_name, '') || ' ' || coalesce(tool_args, '')), 'B')
            ) STORED""",
            "CREATE INDEX idx_messages_tsv ON messages USING gin (tsv)",
            """CREATE INDEX idx_messages_trgm ON messages USING gin (
                (coalesce(content, '') || ' ' || coalesce(tool_name, '') || ' ' || coalesce(tool_args, ''))
                gin_trgm_ops
            )""",
            # A prefix query from a phrase, in SQL so user text only ever travels as a parameter.
            """CREATE FUNCTION hermes_prefix_tsquery(words text) RETURNS tsquery
                LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
                SELECT CASE WHEN numnode(phraseto_tsquery('simple', words)) = 0
                    THEN phraseto_tsquery('simple', words)
                    ELSE (phraseto_tsquery('simple', words)::text || ':*')::tsquery END
            $$""",
        ),
    ),
    (
        "m003_markers_and_compactions",
        (
            # Which kernel marker a message carries (a context handoff, a skipped result):
            # engines recognise their own messages by this field, never by their text.
            "ALTER TABLE messages ADD COLUMN marker text",
            # One row per compression, keyed by the session it created (like SQLite's m007).
            # No foreign key: a record may be written for a session another host is creating.
            """CREATE TABLE compactions (
                session_id text PRIMARY KEY,
                parent_session_id text,
                engine text,
                created_at double precision NOT NULL,
                fidelity double precision,
                missing text,
                handoff text,
                edited integer NOT NULL DEFAULT 0,
                details text
            )""",
            "CREATE INDEX idx_compactions_parent ON compactions (parent_session_id, created_at)",
        ),
    ),
    (
        "m004_tenants",
        (
            # The tenant a session belongs to (like SQLite's m008); NULL for every older row.
            "ALTER TABLE sessions ADD COLUMN tenant text",
            "CREATE INDEX idx_sessions_tenant ON sessions (tenant, started_at)",
        ),
    ),
]

_CREATE_LEDGER = """CREATE TABLE IF NOT EXISTS hermes_migrations (
    name text PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
)"""


def pending_migrations(conn: Any) -> list[str]:
    """Names not yet applied (all of them on an empty database)."""
    row = conn.execute("SELECT to_regclass('hermes_migrations')").fetchone()
    if row[0] is None:
        return [name for name, _ in MIGRATIONS]
    applied = {r[0] for r in conn.execute("SELECT name FROM hermes_migrations")}
    return [name for name, _ in MIGRATIONS if name not in applied]


def apply_migrations(conn: Any) -> list[str]:
    """Apply what is pending in one transaction under the advisory lock; return the names applied."""
    if not pending_migrations(conn):  # the common case: no lock, no write
        return []
    done: list[str] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        conn.execute(_CREATE_LEDGER)
        todo = set(pending_migrations(conn))  # again, under the lock: another host may have won
        for name, statements in MIGRATIONS:
            if name not in todo:
                continue
            for statement in statements:
                conn.execute(statement)
            conn.execute("INSERT INTO hermes_migrations (name) VALUES (%s)", (name,))
            done.append(name)
    return done
