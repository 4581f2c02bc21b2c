"""``hermes sessions migrate`` into a store that already has sessions: titles taken there, a SIGKILL mid-copy.

Each test runs the real CLI in a subprocess against a real SQLite file or
PostgreSQL server and checks the exit code, the one summary line, what is
stored and that running it again changes nothing.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hermes.kernel.store import SQLiteSessionStore

TAKEN = ("topic 3", "topic 7")  # titles another session already has in the target


def _sid(n: int) -> str:
    # Explicit ids: sessions are copied in id order, so every run numbers the same way.
    return f"20990101_000000_{n:06x}"


class Target:
    """The store a test migrates into: a SQLite file or a PostgreSQL database, with raw SQL for assertions."""

    def __init__(self, kind: str, tmp_path: Path, postgres_url: str | None) -> None:
        self.kind = kind
        self.path = tmp_path / "target.db"
        self.url = postgres_url if kind == "postgresql" else f"sqlite:///{self.path}"
        assert self.url is not None

    def open(self) -> Any:
        if self.kind == "sqlite":
            return SQLiteSessionStore(self.path)
        from hermes.plugins.session_stores.postgresql import PostgresSessionStore

        return PostgresSessionStore(self.url, pool_size=1)

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        if self.kind == "sqlite":
            with sqlite3.connect(self.path, timeout=30) as conn:
                return conn.execute(sql).fetchall()
        with psycopg.connect(self.url) as conn:
            return conn.execute(sql).fetchall()


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Target]:
    url = request.getfixturevalue("postgres_url") if request.param == "postgresql" else None
    made = Target(request.param, tmp_path, url)
    with made.open() as store:  # the target's own sessions, holding the taken titles
        for n, title in enumerate(TAKEN):
            store.create_session(session_id=f"20980101_000000_{n:06x}", title=title, source="theirs")
    yield made


def _fill(hermes_home: Path, count: int, title: str) -> None:
    """``count`` sessions titled ``title.format(n)`` with two messages each, in the local state.db."""
    with SQLiteSessionStore(hermes_home / "state.db") as store:
        for start in range(0, count, 500):
            batch = [({"id": _sid(n), "source": "cli", "started_at": 1000.0 + n, "title": title.format(n=n)},
                      [{"role": "user", "content": f"question {n}"}, {"role": "assistant", "content": f"answer {n}"}])
                     for n in range(start, min(count, start + 500))]  # fmt: skip
            assert len(store.import_sessions(batch).imported) == len(batch)


def _titles(target: Target) -> dict[str, str | None]:
    return dict(target.rows("SELECT id, title FROM sessions"))  # type: ignore[arg-type]


def _messages(target: Target) -> tuple[int, int]:
    """(messages, distinct (session, content) pairs): equal when no message was copied twice."""
    total, distinct = target.rows("SELECT count(*), count(DISTINCT session_id || '|' || content) FROM messages")[0]
    return total, distinct


def test_titles_taken_in_the_target_are_renumbered_once(hermes, hermes_home: Path, target: Target) -> None:  # type: ignore[no-untyped-def]
    _fill(hermes_home, 10, "topic {n}")
    first = hermes("sessions", "migrate", "--to", target.url)
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines() == [first.stdout.strip()]  # one summary line
    assert first.stdout.startswith(
        "copied 10 sessions, 0 already there, 2 titles renumbered (taken in the target); "
        "10 sessions and 20 messages verified in "
    ), first.stdout
    titles = _titles(target)
    assert titles == {
        **{_sid(n): f"topic {n}" for n in range(10) if n not in (3, 7)},
        _sid(3): "topic 3 #2", _sid(7): "topic 7 #2",
        "20980101_000000_000000": "topic 3", "20980101_000000_000001": "topic 7",
    }  # fmt: skip
    assert _messages(target) == (20, 20)
    with target.open() as store:
        assert [m["content"] for m in store.get_messages(_sid(3))] == ["question 3", "answer 3"]
    again = hermes("sessions", "migrate", "--to", target.url)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("copied 0 sessions, 10 already there, 0 titles renumbered"), again.stdout
    assert _titles(target) == titles and _messages(target) == (20, 20)
    # And back again: into the original store every session is there already, under its own title.
    back = hermes("sessions", "migrate", "--from", target.url, "--to", str(hermes_home / "copy.db"), "--json")
    assert back.returncode == 0, back.stderr
    with SQLiteSessionStore(hermes_home / "copy.db") as copy:
        assert copy.get_session(_sid(3))["title"] == "topic 3 #2" and copy.counts() == {"sessions": 12, "messages": 20}


def test_a_migrate_killed_mid_copy_goes_on_with_nothing_lost_or_doubled(hermes, hermes_home: Path, target: Target) -> None:  # type: ignore[no-untyped-def]
    count = 4_000  # twenty batches: a kill after the first commit lands mid-copy
    _fill(hermes_home, count, "topic {n}")
    before = len(TAKEN)
    proc = subprocess.Popen(
        [sys.executable, "-m", "hermes.kernel", "sessions", "migrate", "--to", target.url, "--json"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while target.rows("SELECT count(*) FROM sessions")[0][0] == before:
            assert proc.poll() is None and time.monotonic() < deadline, "migrate ended before a first batch was seen"
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    copied = target.rows("SELECT count(*) FROM sessions")[0][0] - before
    assert 0 < copied < count  # killed mid-copy: whole batches only
    assert _messages(target) == (2 * copied, 2 * copied)
    result = hermes("sessions", "migrate", "--to", target.url)
    assert result.returncode == 0, result.stderr
    assert f"{count} sessions and {2 * count} messages verified" in result.stdout
    assert result.stdout.startswith(f"copied {count - copied} sessions, {copied} already there, ")
    titles = _titles(target)
    assert titles == {
        **{_sid(n): f"topic {n}" for n in range(count) if n not in (3, 7)},
        _sid(3): "topic 3 #2", _sid(7): "topic 7 #2",  # renumbered once, by whichever run copied them
        "20980101_000000_000000": "topic 3", "20980101_000000_000001": "topic 7",
    }  # fmt: skip
    assert _messages(target) == (2 * count, 2 * count)
    again = hermes("sessions", "migrate", "--to", target.url)
    assert again.returncode == 0 and again.stdout.startswith(f"copied 0 sessions, {count} already there, 0 titles renumbered")
    assert _titles(target) == titles and _messages(target) == (2 * count, 2 * count)


def test_tenants_are_carried_to_the_target(hermes, hermes_home: Path, target: Target) -> None:  # type: ignore[no-untyped-def]
    with SQLiteSessionStore(hermes_home / "state.db") as store:
        owned = store.create_session(session_id=_sid(1), tenant="acme", title="acme work")
        store.append_message(owned, {"role": "user", "content": "acme's words"})
        child = store.compression_child(owned, [{"role": "user", "content": "acme summary"}], child_id=_sid(2))
        plain = store.create_session(session_id=_sid(3))
    result = hermes("sessions", "migrate", "--to", target.url)
    assert result.returncode == 0, result.stderr
    assert dict(target.rows(f"SELECT id, tenant FROM sessions WHERE id IN ('{owned}', '{child}', '{plain}')")) == {
        owned: "acme", child: "acme", plain: None}  # fmt: skip
    with target.open() as store:
        assert {s["id"] for s in store.list_sessions(tenant="acme")} == {owned, child}
        assert [h.session_id for h in store.search("acme's words", tenant="acme")] == [owned]
