from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel.store import SessionStore


@pytest.fixture(scope="module")
def fts() -> Iterator[sqlite3.Connection]:
    """An in-memory FTS5 table with the store's columns and tokenizer: FTS5's own snippet()
    to compare the Python-cut snippets with."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(content, tool_name, tool_args, tokenize='unicode61 remove_diacritics 2')")
    yield conn
    conn.close()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    """A store on a real file (trigram index present)."""
    with SQLiteSessionStore(tmp_path / "state.db") as s:
        yield s


@pytest.fixture
def store_without_trigram(tmp_path: Path) -> Iterator[SessionStore]:
    """A store created as if the SQLite build had no trigram tokenizer."""
    with SQLiteSessionStore(tmp_path / "plain.db", trigram=False) as s:
        yield s
