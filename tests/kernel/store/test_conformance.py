"""The conformance suite from hermes.kernel.testing, run against both built-in backends."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hermes.kernel.store import SessionStore, SQLiteSessionStore
from hermes.kernel.testing.store_suite import SessionStoreConformance


class TestSQLite(SessionStoreConformance):
    @pytest.fixture
    def make_store(self, tmp_path: Path) -> Callable[[], SessionStore]:
        return lambda: SQLiteSessionStore(tmp_path / "state.db")


class TestPostgreSQL(SessionStoreConformance):
    @pytest.fixture
    def make_store(self, postgres_url: str) -> Callable[[], SessionStore]:
        from hermes.plugins.session_stores.postgresql import PostgresSessionStore

        return lambda: PostgresSessionStore(postgres_url, pool_size=2)


class TestSQLiteWithoutTrigram(SessionStoreConformance):
    """A SQLite build without the trigram tokenizer: every substring search takes the LIKE scan."""

    @pytest.fixture
    def make_store(self, tmp_path: Path) -> Callable[[], SessionStore]:
        return lambda: SQLiteSessionStore(tmp_path / "state.db", trigram=False)
