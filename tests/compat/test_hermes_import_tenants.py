"""Hermes Agent's history has no tenants: imported, every session belongs to none (and no tenant sees it)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hermes.compat.hermes.state_db import HermesStateDB
from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel.store.migrate import copy_sessions


def _hermes_state_db(path: Path) -> None:
    """The smallest state.db Hermes Agent's reader accepts (schema version 22), with one conversation."""
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE schema_version (version INTEGER);
        INSERT INTO schema_version VALUES (22);
        CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, user_id TEXT, model TEXT, parent_session_id TEXT,
                               started_at REAL, ended_at REAL, end_reason TEXT, title TEXT);
        CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT, timestamp REAL);
        INSERT INTO sessions (id, source, user_id, started_at, title) VALUES ('20261101_090000_root', 'telegram', 'u-42', 1.0, 'Chat');
        INSERT INTO messages (session_id, role, content, timestamp) VALUES ('20261101_090000_root', 'user', 'zinnia plans', 1.0);
        """
    )
    conn.commit()
    conn.close()


def test_imported_sessions_have_no_tenant(tmp_path: Path) -> None:
    _hermes_state_db(tmp_path / "hermes.db")
    source = HermesStateDB(tmp_path / "hermes.db")
    try:
        assert source.get_session("20261101_090000_root")["tenant"] is None  # a user id is not a tenant
        with SQLiteSessionStore(tmp_path / "state.db") as target:
            assert copy_sessions(source, target).ok
            assert target.get_session("20261101_090000_root")["tenant"] is None
            assert target.list_sessions(tenant="u-42") == [] and target.search("zinnia", tenant="u-42") == []
            assert [h.session_id for h in target.search("zinnia")] == ["20261101_090000_root"]
    finally:
        source.close()
