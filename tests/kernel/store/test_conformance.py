"""The conformance suite from hermes.kernel.testing, run against both built-in backends."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hermes.kernel.store import SessionStore, SQLiteSessionStore
from hermes.kernel.store.schema import apply_migrations
from hermes.kernel.testing.store_suite import SessionStoreConformance
from hermes.kernel.testing.store_tenants import LEGACY_SESSION_ID, LEGACY_TEXT, TenantConformance

# The session and message a database from before tenants holds (the suite's LEGACY_* names).
_LEGACY_SESSION = (
    "INSERT INTO sessions (id, source, started_at, title, message_count, updated_at) "
    "VALUES ('{sid}', 'cli', 1000.0, 'Legacy', 1, 1000.0)"
).format(sid=LEGACY_SESSION_ID)


def previous_sqlite_schema(path: Path, *, trigram: bool = True) -> None:
    """Write ``path`` as the schema before ``m008_tenants`` left it, holding the legacy session."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        apply_migrations(conn, trigram=trigram, stop_before="m008_tenants")
        conn.execute(_LEGACY_SESSION)
        conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, 1000.0)",
            (LEGACY_SESSION_ID, LEGACY_TEXT),
        )
    finally:
        conn.close()


def previous_postgres_schema(url: str) -> None:
    """Create the schema before ``m004_tenants`` on the empty database ``url``, holding the legacy session."""
    import psycopg

    from hermes.plugins.session_stores.postgresql.schema import MIGRATIONS

    names = [name for name, _ in MIGRATIONS]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE hermes_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
        for name, statements in MIGRATIONS[: names.index("m004_tenants")]:
            for statement in statements:
                conn.execute(statement)
            conn.execute("INSERT INTO hermes_migrations (name) VALUES (%s)", (name,))
        conn.execute(_LEGACY_SESSION)
        conn.execute(
            "INSERT INTO messages (session_id, seq, role, content, timestamp) VALUES (%s, 1, 'user', %s, 1000.0)",
            (LEGACY_SESSION_ID, LEGACY_TEXT),
        )


class TestSQLite(SessionStoreConformance):
    @pytest.fixture
    def make_store(self, tmp_path: Path) -> Callable[[], SessionStore]:
        return lambda: SQLiteSessionStore(tmp_path / "state.db")

    @pytest.fixture
    def make_previous_schema_store(self, tmp_path: Path, make_store: Callable[[], SessionStore]) -> Callable[[], SessionStore]:
        previous_sqlite_schema(tmp_path / "state.db")
        return make_store


class TestPostgreSQL(SessionStoreConformance):
    @pytest.fixture
    def make_store(self, postgres_url: str) -> Callable[[], SessionStore]:
        from hermes.plugins.session_stores.postgresql import PostgresSessionStore

        return lambda: PostgresSessionStore(postgres_url, pool_size=2)

    @pytest.fixture
    def make_previous_schema_store(self, postgres_url: str, make_store: Callable[[], SessionStore]) -> Callable[[], SessionStore]:
        previous_postgres_schema(postgres_url)
        return make_store


class TestSQLiteWithoutTrigram(SessionStoreConformance):
    """A SQLite build without the trigram tokenizer: every substring search takes the LIKE scan."""

    @pytest.fixture
    def make_store(self, tmp_path: Path) -> Callable[[], SessionStore]:
        return lambda: SQLiteSessionStore(tmp_path / "state.db", trigram=False)

    @pytest.fixture
    def make_previous_schema_store(self, tmp_path: Path, make_store: Callable[[], SessionStore]) -> Callable[[], SessionStore]:
        previous_sqlite_schema(tmp_path / "state.db", trigram=False)
        return make_store


class TestTenantsWithTheDefaultLegacyFixture(TenantConformance):
    """The tenant half alone, with the suite's own ``make_previous_schema_store`` (for a backend
    without older schemas: a row imported without a tenant)."""

    @pytest.fixture
    def make_store(self, tmp_path: Path) -> Callable[[], SessionStore]:
        return lambda: SQLiteSessionStore(tmp_path / "state.db")

    @pytest.fixture
    def store(self, make_store: Callable[[], SessionStore]) -> Iterator[SessionStore]:
        with make_store() as s:
            yield s
