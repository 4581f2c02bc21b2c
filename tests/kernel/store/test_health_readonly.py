"""``hermes doctor``'s store checks, and a store opened read-only (a HERMES_HOME that cannot be written)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel.store import HealthCheck, SessionStore
from hermes.kernel.store.concurrency import BUSY_TIMEOUT_MS
from hermes.kernel.store.schema import apply_migrations, migrations


def test_health_check_as_dict() -> None:
    assert HealthCheck("migrations", False, "pending: m002").as_dict() == {
        "name": "migrations", "ok": False, "detail": "pending: m002",
    }  # fmt: skip


def test_health_of_an_up_to_date_store(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SQLiteSessionStore(path) as store:
        assert store.health() == [
            HealthCheck("store", True, f"sqlite {path.resolve()}"),
            HealthCheck("migrations", True, "up to date"),
        ]
        # The contract's default, for backends without migrations: connectivity only.
        assert SessionStore.health(store) == [HealthCheck("store", True, f"sqlite {path.resolve()}")]


def test_health_names_pending_migrations_of_a_file_opened_read_only(tmp_path: Path) -> None:
    names = [m.name for m in migrations()._migrations]
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    apply_migrations(conn, stop_before=names[2])
    conn.close()
    with SQLiteSessionStore(path, readonly=True) as store:  # read-only: nothing is migrated
        [store_check, migrations_check] = store.health()
    assert store_check == HealthCheck("store", True, f"sqlite {path.resolve()}")
    assert migrations_check == HealthCheck("migrations", False, "pending: " + ", ".join(names[2:]))
    assert len(names[2:]) >= 2  # the list is joined with ", "


def test_for_home_opens_the_homes_state_db_with_options(tmp_path: Path) -> None:
    home = SimpleNamespace(state_db=tmp_path / "home" / "state.db")
    with SessionStore.for_home(home, trigram=False) as store:
        assert store.path == tmp_path / "home" / "state.db"
        tables = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master")}
        assert "messages_fts" in tables and "messages_trigram" not in tables


def _written(path: Path) -> str:
    with SQLiteSessionStore(path) as store:
        sid = store.create_session(title="Kept")
        store.append_messages(sid, [{"role": "user", "content": "hello"}])
    return sid


def _assert_reads_but_never_writes(store: SessionStore, sid: str) -> None:
    assert store.get_session(sid)["title"] == "Kept"
    assert [m["content"] for m in store.get_messages(sid)] == ["hello"]
    with pytest.raises(sqlite3.OperationalError, match="^attempt to write a readonly database$"):
        store.create_session()


# A folder name that a file: URI must quote ("?" starts the query, "#" a fragment).
@pytest.mark.parametrize("folder", ["plain", "odd ?name#1"])
def test_a_read_only_store_reads_and_refuses_writes(tmp_path: Path, folder: str) -> None:
    path = tmp_path / folder / "state.db"
    sid = _written(path)
    with SQLiteSessionStore(path, readonly=True) as store:
        _assert_reads_but_never_writes(store, sid)
        assert store.conn.isolation_level is None  # autocommit, as the writer's connection
        assert store.conn.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
        # Tool threads share the store's connection.
        seen: list[object] = []
        t = threading.Thread(target=lambda: seen.append(store.conn.execute("SELECT count(*) FROM sessions").fetchone()))
        t.start()
        t.join()
        assert seen == [(1,)]


def test_without_a_wal_index_it_reads_the_file_as_immutable(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    sid = _written(path)
    # A -shm that can be neither opened nor created (as in a folder without write access,
    # which root would still write): mode=ro fails, immutable=1 reads the checkpointed file.
    Path(str(path) + "-shm").symlink_to(tmp_path / "missing" / "shm")
    with pytest.raises(sqlite3.OperationalError):
        sqlite3.connect(f"file:{path}?mode=ro", uri=True).execute("SELECT count(*) FROM sqlite_master")
    with SQLiteSessionStore(path, readonly=True) as store:
        _assert_reads_but_never_writes(store, sid)


def test_a_missing_file_cannot_be_opened_read_only(tmp_path: Path) -> None:
    with pytest.raises(sqlite3.OperationalError, match="^unable to open database file$"):
        SQLiteSessionStore(tmp_path / "nowhere" / "state.db", readonly=True)
    assert not (tmp_path / "nowhere").exists()
