"""Migrations: a blank database and one made by the oldest migration both reach the current schema."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel.store.schema import MIGRATION_SET, apply_migrations, migrations, trigram_available


def _schema(path: Path) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(path)
    try:
        return sorted(
            (row[0], row[1], " ".join((row[2] or "").split()))
            for row in conn.execute("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
        )
    finally:
        conn.close()


def _applied(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT name FROM _sqlite_migrations WHERE migration_set = ? ORDER BY id", (MIGRATION_SET,)
        ).fetchall()
        return [r[0] for r in rows]
    finally:
        conn.close()


def test_blank_and_oldest_databases_end_at_the_current_schema(tmp_path: Path) -> None:
    names = [m.name for m in migrations()._migrations]
    assert names[0] == "m001_sessions_and_messages" and len(names) >= 5

    blank = tmp_path / "blank.db"
    SQLiteSessionStore(blank).close()

    oldest = tmp_path / "oldest.db"
    conn = sqlite3.connect(oldest, isolation_level=None)
    apply_migrations(conn, stop_before=names[1])
    conn.execute(
        "INSERT INTO sessions (id, source, started_at, title) VALUES ('20250101_000000_abcdef', 'cli', 1.0, 'Old one')"
    )
    conn.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) "
        "VALUES ('20250101_000000_abcdef', 'user', 'legacy searchable words', 1.0)"
    )
    conn.execute(
        "INSERT INTO messages (session_id, role, tool_calls, timestamp) VALUES ('20250101_000000_abcdef', "
        """'assistant', '[{"function": {"name": "f", "arguments": "{\\"path\\": \\"old_vault.py\\"}"}}, 7]', 2.0)"""
    )
    conn.close()
    assert _applied(oldest) == names[:1]
    assert _schema(oldest) != _schema(blank)

    with SQLiteSessionStore(oldest) as store:
        # Rows written under the oldest schema are indexed and accounted by the newer ones.
        hits = store.search("legacy searchable")
        assert [h.session_id for h in hits] == ["20250101_000000_abcdef"]
        # The backfill extracts tool-call arguments exactly as new writes do.
        from hermes.kernel.store.content import tool_args_text

        [old_call] = [m for m in store.get_messages("20250101_000000_abcdef") if m["tool_calls"]]
        stored = store.conn.execute("SELECT tool_args FROM messages WHERE id = ?", (old_call["id"],)).fetchone()[0]
        assert stored == tool_args_text(old_call["tool_calls"]) == '{"path": "old_vault.py"}'
        assert [h.role for h in store.search("old_vault")] == ["assistant"]
        assert store.usage("20250101_000000_abcdef").api_calls == 0
        assert store.get_session("20250101_000000_abcdef")["updated_at"] == 1.0

    assert _applied(oldest) == _applied(blank) == names
    assert _schema(oldest) == _schema(blank)


def test_reopening_applies_nothing_twice(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    SQLiteSessionStore(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    assert apply_migrations(conn) == []
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_trigram_index_is_created_only_where_available_and_wanted(tmp_path: Path) -> None:
    probe = sqlite3.connect(":memory:")
    with SQLiteSessionStore(tmp_path / "a.db") as store:
        names = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master")}
        assert ("messages_trigram" in names) == trigram_available(probe)
        assert "messages_fts" in names
    with SQLiteSessionStore(tmp_path / "b.db", trigram=False) as store:
        names = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master")}
        assert "messages_trigram" not in names and "messages_fts" in names
    assert _applied(tmp_path / "a.db") == _applied(tmp_path / "b.db")


def test_the_migration_set_is_built_once_and_kept(monkeypatch) -> None:
    from hermes.kernel.store import schema

    monkeypatch.setattr(schema, "_migrations", None)  # as in a fresh process
    first = migrations()
    assert type(first).__name__ == "Migrations" and first.name == MIGRATION_SET
    assert migrations() is first


def test_a_file_from_before_tenants_reads_every_session_as_no_tenant(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    conn = sqlite3.connect(path, isolation_level=None)
    apply_migrations(conn, stop_before="m008_tenants")
    conn.execute("INSERT INTO sessions (id, source, started_at, title) VALUES ('20250101_000000_abcdef', 'api', 1.0, 'Old')")
    conn.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES ('20250101_000000_abcdef', 'user', 'old words', 1.0)")
    columns = {row[1] for row in conn.execute("PRAGMA table_info(sessions)")}
    conn.close()
    assert "tenant" not in columns and _applied(path)[-1] == "m007_markers_and_compactions"

    with SQLiteSessionStore(path) as store:
        assert store.get_session("20250101_000000_abcdef")["tenant"] is None
        assert store.list_sessions(tenant="acme") == [] and store.search("old words", tenant="acme") == []
        assert [h.session_id for h in store.search("old words")] == ["20250101_000000_abcdef"]
        assert "idx_sessions_tenant" in {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert [r[2] for r in store.conn.execute("PRAGMA index_info(idx_sessions_tenant)")] == ["tenant", "started_at"]
    assert _applied(path)[-2:] == ["m008_tenants", "m009_substring_index_off_the_write_path"]


def test_the_names_checked_on_open_are_every_migration_in_order(tmp_path) -> None:
    import sqlite3

    from sqlite_utils import Database

    from hermes.kernel.store.schema import MIGRATION_NAMES, apply_migrations, is_up_to_date, migrations

    assert tuple(p.name for p in migrations().pending(Database(memory=True))) == MIGRATION_NAMES
    conn = sqlite3.connect(tmp_path / "new.db")
    assert not is_up_to_date(conn)  # no migrations table
    apply_migrations(conn, stop_before=MIGRATION_NAMES[-1])
    assert not is_up_to_date(conn)  # one pending
    apply_migrations(conn)
    assert is_up_to_date(conn)


def test_opening_an_up_to_date_file_does_not_import_sqlite_utils(tmp_path) -> None:
    import subprocess
    import sys

    SQLiteSessionStore(tmp_path / "state.db").close()
    code = ("import sys; from hermes.kernel.store import SQLiteSessionStore; "
            f"s = SQLiteSessionStore({str(tmp_path / 'state.db')!r}); s.append_messages(s.create_session(), "
            "[{'role': 'user', 'content': 'hi'}]); s.close(); print('sqlite_utils' in sys.modules)")  # fmt: skip
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
