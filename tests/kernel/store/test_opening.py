"""Which store config chooses, and opening it (kernel/store/opening.py)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from hermes.kernel.errors import ConfigError
from hermes.kernel.store import SessionStore
from hermes.kernel.store.opening import DEFAULT_BACKEND, STORE_GROUP, StoreSettings, open_store, redact_url, store_settings


def test_names() -> None:
    assert (STORE_GROUP, DEFAULT_BACKEND) == ("hermes.session_stores", "sqlite")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (None, None),
        ("", ""),
        ("/var/lib/hermes/state.db", "/var/lib/hermes/state.db"),
        ("postgresql://app@db/hermes", "postgresql://app@db/hermes"),
        ("postgresql://app:s3cret@db:5432/hermes?sslmode=require", "postgresql://app:***@db:5432/hermes?sslmode=require"),
        ("postgresql://app:p@ss@db/hermes", "postgresql://app:***@db/hermes"),
        ("postgresql://:only@db/x", "postgresql://:***@db/x"),
    ],
)
def test_redact_url_hides_only_the_password(url: str | None, shown: str | None) -> None:
    assert redact_url(url) == shown


@pytest.mark.parametrize(
    ("config", "env", "url", "expected"),
    [
        ({}, {}, None, ("sqlite", None)),
        (None, {}, None, ("sqlite", None)),
        ({"store": {"url": "/tmp/x.db"}}, {}, None, ("sqlite", "/tmp/x.db")),
        ({"store": {"url": "postgresql://h/db"}}, {}, None, ("postgresql", "postgresql://h/db")),
        ({"store": {"url": "postgres://h/db"}}, {}, None, ("postgresql", "postgres://h/db")),
        ({"store": {"url": "postgresql+psycopg://h/db"}}, {}, None, ("postgresql", "postgresql+psycopg://h/db")),
        ({"store": {"url": "SQLite:///tmp/y.db"}}, {}, None, ("sqlite", "SQLite:///tmp/y.db")),
        ({"store": {"url": "mystore://z"}}, {}, None, ("mystore", "mystore://z")),
        ({"store": {"backend": "postgresql", "url": "postgresql://h/db"}}, {}, None, ("postgresql", "postgresql://h/db")),
        ({"store": {"backend": "postgresql"}}, {}, None, ("postgresql", None)),
        ({"store": {"url": "/a.db"}}, {"HERMES_STORE_URL": "postgresql://env/db"}, None, ("postgresql", "postgresql://env/db")),
        ({"store": {"url": "/a.db"}}, {"HERMES_STORE_URL": ""}, None, ("sqlite", "/a.db")),
        ({"store": {"url": "/a.db"}}, {"HERMES_STORE_URL": "postgresql://env/db"}, "/b.db", ("sqlite", "/b.db")),
        # An explicit URL speaks for itself, whatever backend config names.
        ({"store": {"backend": "postgresql", "url": "postgresql://h/db"}}, {}, "/b.db", ("sqlite", "/b.db")),
        ({"store": {"backend": "postgresql"}}, {}, "postgresql://to/db", ("postgresql", "postgresql://to/db")),
    ],
)
def test_store_settings_choose_backend_and_url(config, env, url, expected) -> None:  # type: ignore[no-untyped-def]
    settings = store_settings(config, env, url=url)
    assert isinstance(settings, StoreSettings)
    assert (settings.backend, settings.url) == expected
    assert settings.options == dict((config or {}).get("store", {}))


def test_store_settings_read_the_process_environment_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_STORE_URL", "postgresql://from-env/db")
    assert store_settings({}) == StoreSettings("postgresql", "postgresql://from-env/db", {})


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"store": "postgresql"}, "store must be a mapping with backend and url; see docs/session-stores.md"),
        ({"store": {"url": 5}}, "store.url must be a text URL such as postgresql://user@host/db"),
        (
            {"store": {"backend": "sqlite2", "url": "postgres://h/db"}},
            "store.backend is 'sqlite2' but store.url is a postgres:// URL; fix one of them (`hermes config set store.backend postgresql`)",
        ),
    ],
)
def test_bad_store_config_is_one_line(config, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError) as err:
        store_settings(config, {})
    assert str(err.value) == message


def test_open_store_opens_sqlite_at_the_homes_state_db(tmp_path: Path) -> None:
    home = SimpleNamespace(state_db=tmp_path / "state.db")
    store = open_store({}, home)
    try:
        assert isinstance(store, SessionStore)
        assert store.path == tmp_path / "state.db"
    finally:
        store.close()
    other = open_store({"store": {"url": str(tmp_path / "x.db")}}, home)
    try:
        assert other.path == tmp_path / "x.db"
    finally:
        other.close()
    with open_store({}, home, url=f"sqlite:///{tmp_path / 'y.db'}") as third:
        assert third.path == tmp_path / "y.db"


def test_open_store_names_an_unknown_backend(tmp_path: Path) -> None:
    from hermes.kernel.errors import HermesError

    with pytest.raises(HermesError, match="hermes.session_stores") as err:
        open_store({"store": {"backend": "nosuch"}}, SimpleNamespace(state_db=tmp_path / "s.db"))
    assert "nosuch" in str(err.value)


def test_the_contract_called_directly_warns_and_opens_the_default_backend_from_the_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes.kernel.store import SQLiteSessionStore, opening

    with pytest.warns(DeprecationWarning, match=r"SessionStore\(path\) is deprecated; open a store with .*open_store"):
        store = SessionStore(tmp_path / "state.db", synchronous="FULL")
    with store:
        assert type(store) is SQLiteSessionStore and store.path == tmp_path / "state.db"
        assert store.conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # the arguments reached it
    # Resolved through hermes.session_stores, not an import: another registered default is used.
    class Other(SQLiteSessionStore):
        pass

    asked: list[tuple[str, str]] = []
    fake_host = SimpleNamespace(driver=lambda group, name: asked.append((group, name)) or Other)
    monkeypatch.setattr(opening, "_own_host", lambda: fake_host)
    opening.default_backend.cache_clear()
    try:
        with pytest.warns(DeprecationWarning), SessionStore(tmp_path / "other.db") as other:
            assert type(other) is Other
        assert asked == [(STORE_GROUP, DEFAULT_BACKEND)]
    finally:
        opening.default_backend.cache_clear()


def test_a_backend_class_opens_without_a_warning(tmp_path: Path, recwarn: pytest.WarningsRecorder) -> None:
    from hermes.kernel.store import SQLiteSessionStore

    SQLiteSessionStore(tmp_path / "a.db").close()
    open_store({}, SimpleNamespace(state_db=tmp_path / "b.db")).close()
    assert [w for w in recwarn if issubclass(w.category, DeprecationWarning)] == []


def test_open_store_readonly_opens_the_sqlite_file_for_reading_only(tmp_path: Path) -> None:
    import sqlite3

    home = SimpleNamespace(state_db=tmp_path / "state.db")
    with open_store({}, home) as store:
        sid = store.create_session()
    with open_store({}, home, readonly=True) as store:
        assert store.readonly is True and store.get_session(sid) is not None
        with pytest.raises(sqlite3.OperationalError, match="readonly database"):
            store.create_session()


def test_the_contract_module_imports_no_backend() -> None:
    import ast

    import hermes.kernel.store.contract as contract

    tree = ast.parse(Path(contract.__file__).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert imported.isdisjoint({"session_store", "sqlite_bulk", "importing", "hermes.kernel.store.session_store"})
    assert "opening" in imported  # the default backend comes through the entry-point group
