"""Fixtures for end-to-end tests that install real packages."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import overlay_venv
from hermes.kernel.store import SQLiteSessionStore

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def venv_hermes(tmp_path: Path, hermes_home: Path):
    """``hermes`` in a virtual environment of the test's own that also sees the suite's packages.

    ``hermes plugin install`` there never changes the environment running the
    suite. Call it as ``venv_hermes(*args, input=None, extra=None, cwd=ROOT)``;
    ``.python`` and ``.env`` give its interpreter and environment.
    """
    python = overlay_venv(tmp_path / "venv")
    env = {k: v for k, v in os.environ.items() if k not in ("HERMES_LOAD_PLUGINS", "PYTHONPATH")}

    def run(
        *args: str, input: str | None = None, extra: dict[str, str] | None = None, cwd: Path = ROOT
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(python), "-m", "hermes.kernel", *args],
            capture_output=True, text=True, env={**env, **(extra or {})}, cwd=cwd, input=input, timeout=300,
        )  # fmt: skip

    run.python = python  # type: ignore[attr-defined]
    run.env = env  # type: ignore[attr-defined]
    return run


class StoreBackend:
    """The session store the ``hermes`` subprocesses of one test use, and raw SQL on it for assertions."""

    def __init__(self, name: str, home: Path, url: str | None) -> None:
        self.name, self.home, self.url = name, home, url

    def open(self):  # type: ignore[no-untyped-def]

        if self.url is None:
            return SQLiteSessionStore(self.home / "state.db")
        from hermes.plugins.session_stores.postgresql import PostgresSessionStore

        return PostgresSessionStore(self.url, pool_size=1)

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        if self.url is None:
            import sqlite3

            with sqlite3.connect(self.home / "state.db") as conn:
                return conn.execute(sql, params).fetchall()
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            cur = conn.execute(sql.replace("?", "%s"), params)
            return [tuple(r) for r in cur.fetchall()] if cur.description else []


@pytest.fixture(params=["sqlite", "postgresql"])
def store_backend(request: pytest.FixtureRequest, hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> StoreBackend:
    """Each test twice: on state.db, and with ``HERMES_STORE_URL`` naming a fresh PostgreSQL database."""
    url = None
    if request.param == "postgresql":
        url = request.getfixturevalue("postgres_url")
        monkeypatch.setenv("HERMES_STORE_URL", url)
    return StoreBackend(request.param, hermes_home, url)
