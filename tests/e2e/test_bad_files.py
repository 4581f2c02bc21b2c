"""Files that are not what they should be, met through the real CLI: one line, nothing lost, the next command works."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401

from .test_chat import chat_env, hermes_chat


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.mark.parametrize("name", ["config.yaml", ".env", "auth.json"])
def test_non_utf8_file_is_one_line_naming_file_and_offset(hermes, hermes_home: Path, name: str) -> None:
    hermes_home.mkdir(parents=True)
    (hermes_home / name).write_bytes(b"model:\n  name: caf\xe9\n" if name == "config.yaml" else b"A=caf\xe9\n")
    assert hermes("--help").returncode == 0
    args = ("auth", "list") if name == "auth.json" else ("config", "show")
    line = one_error_line(hermes(*args))
    assert str(hermes_home / name) in line and "not UTF-8" in line and "byte " in line
    (hermes_home / name).unlink()
    assert hermes(*args).returncode == 0  # removing the file is the fix the line names


def _filled_store(path: Path, sessions: int = 40, per_session: int = 25) -> list[str]:
    ids = []
    with SQLiteSessionStore(path) as store:
        for n in range(sessions):
            sid = store.create_session(title=f"session {n}")
            store.append_messages(sid, [{"role": "user" if i % 2 == 0 else "assistant",
                                         "content": f"note {n}-{i} " + "lorem ipsum " * 40} for i in range(per_session)])  # fmt: skip
            store.end_session(sid, "user_exit")
            ids.append(sid)
    return ids


def _pages_of(path: Path, table: str) -> list[int]:
    with sqlite3.connect(path) as conn:
        try:
            return [r[0] for r in conn.execute("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf'", (table,))]
        except sqlite3.OperationalError:  # no dbstat in this build: take pages from the middle of the file
            count = conn.execute("PRAGMA page_count").fetchone()[0]
            return list(range(count // 2, count // 2 + 3))


def test_truncated_state_db_points_at_doctor_fix(fake_model_server: FakeModelServer, hermes, hermes_home: Path, tmp_path: Path) -> None:
    hermes_home.mkdir(parents=True)
    db = hermes_home / "state.db"
    _filled_store(db, sessions=3, per_session=4)
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])
    for args in (("sessions", "list"), ("usage",), ("sessions", "search", "note")):
        line = one_error_line(hermes(*args))
        assert str(db) in line and "hermes doctor --fix" in line
    chat = hermes_chat("-q", "hi", env=chat_env(fake_model_server), cwd=tmp_path)
    assert "hermes doctor --fix" in one_error_line(chat)
    assert fake_model_server.requests == []  # nothing was sent that could not be stored
    doctor = hermes("doctor", "--json", env={"OPENAI_API_KEY": "sk-test"})
    assert doctor.returncode == 1 and json.loads(doctor.stdout)["database"]["damaged"]
    fixed = hermes("doctor", "--fix", env={"OPENAI_API_KEY": "sk-test"})
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "fixed: state.db" in fixed.stdout
    assert hermes("sessions", "list").returncode == 0
    assert [p.name for p in hermes_home.glob("state.db.broken-*")]


def test_doctor_fix_saves_every_readable_session_and_message(hermes, hermes_home: Path) -> None:
    hermes_home.mkdir(parents=True)
    db = hermes_home / "state.db"
    ids = _filled_store(db)
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        total = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
    victim = _pages_of(db, "messages")[len(_pages_of(db, "messages")) // 2]
    original = db.read_bytes()
    with open(db, "r+b") as fh:  # one damaged page of messages in the middle of the file
        fh.seek((victim - 1) * page_size)
        fh.write(b"\xde\xad\xbe\xef" * (page_size // 4))
    assert "damaged" in hermes("doctor", env={"OPENAI_API_KEY": "sk-test"}).stdout
    result = hermes("doctor", "--fix", "--json", env={"OPENAI_API_KEY": "sk-test"})
    report = json.loads(result.stdout)
    assert result.returncode == 0 and report["ok"], report["problems"]
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        saved = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
        sessions = {r[0] for r in conn.execute("SELECT id FROM sessions")}
        counts = conn.execute("SELECT sum(message_count) FROM sessions").fetchone()[0]
    # Everything but the rows of the one damaged page survives (a page holds a handful of these rows).
    assert total - 10 <= saved < total and counts == saved
    assert sessions == set(ids)
    broken = next(hermes_home.glob("state.db.broken-*"))
    assert broken.stat().st_size == len(original)  # the damaged file is kept beside, as it was
    hits = json.loads(hermes("sessions", "search", "note 39-24", "--json").stdout)
    assert [h["session_id"] for h in hits] == [ids[39]]  # the FTS index was rebuilt
    assert hermes("doctor", env={"OPENAI_API_KEY": "sk-test"}).returncode == 0


def test_doctor_repairs_fts_permissions_and_stale_leases(hermes, hermes_home: Path) -> None:
    hermes_home.mkdir(parents=True)
    ids = _filled_store(hermes_home / "state.db", sessions=2, per_session=2)
    with sqlite3.connect(hermes_home / "state.db") as conn:
        conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('delete-all')")
    (hermes_home / ".env").write_text("OPENAI_API_KEY=sk-test-0123456789abcdef\n")
    os.chmod(hermes_home / ".env", 0o644)
    (hermes_home / "auth.json").write_text(json.dumps(
        {"version": 1, "credentials": {}, "state": {}, "leases": {"abc": {"l1": 1.0, "l2": 9e12}}}))  # fmt: skip
    os.chmod(hermes_home / "auth.json", 0o600)
    report = json.loads(hermes("doctor", "--json").stdout)
    problems = "\n".join(report["problems"])
    assert "search index out of step" in problems and "mode 0644" in problems and "1 stale key lease" in problems
    fixed = hermes("doctor", "--fix")
    assert fixed.returncode == 0, fixed.stdout
    assert stat.S_IMODE(os.stat(hermes_home / ".env").st_mode) == 0o600
    assert json.loads((hermes_home / "auth.json").read_text())["leases"] == {"abc": {"l2": 9e12}}
    hits = json.loads(hermes("sessions", "search", "note 1-1", "--json").stdout)
    assert [h["session_id"] for h in hits] == [ids[1]]


def test_doctor_flags_typos_and_missing_plugins_in_the_file(hermes, hermes_home: Path) -> None:
    hermes_home.mkdir(parents=True)
    (hermes_home / "config.yaml").write_text(
        "config_version: 1\nagent:\n  max_iterationz: 5\ncontext:\n  engine: nope\nmodel:\n  provider: anthropic\n"
    )
    result = hermes("doctor")
    assert result.returncode == 1
    assert "unknown key 'agent.max_iterationz' (did you mean agent.max_iterations?)" in result.stdout
    assert "context.engine: no hermes.context_engines plugin named 'nope'" in result.stdout
    assert "no API key for anthropic: set ANTHROPIC_API_KEY" in result.stdout
    assert "everything looks fine" not in result.stdout


def _readonly_runner(home: Path):
    """Run hermes so that ``home`` cannot be written, also when the suite runs as root."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv, "running as root needs setpriv (util-linux) to drop CAP_DAC_OVERRIDE for this test"
        prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*prefix, sys.executable, "-m", "hermes.kernel", *args],
                              capture_output=True, text=True, timeout=120)  # fmt: skip

    return run


def test_read_only_home_keeps_reading_commands_working(hermes, hermes_home: Path) -> None:
    hermes_home.mkdir(parents=True)
    assert hermes("config", "set", "agent.max_iterations", "40").returncode == 0
    (sid,) = _filled_store(hermes_home / "state.db", sessions=1, per_session=2)
    before = {p.name: p.read_bytes() for p in hermes_home.iterdir() if p.is_file()}
    run = _readonly_runner(hermes_home)
    os.chmod(hermes_home, 0o555)
    try:
        assert run("sessions", "list").returncode == 0
        assert sid in run("sessions", "list", "--json").stdout
        assert run("sessions", "show", sid).returncode == 0
        assert json.loads(run("sessions", "search", "note", "--json").stdout)
        assert run("sessions", "export", sid).stdout.startswith("{")
        assert json.loads(run("usage", "--json").stdout)["api_calls"] == 0
        assert run("config", "get", "agent.max_iterations").stdout == "40\n"
        doctor = run("doctor", "--json")
        assert "Traceback" not in doctor.stderr and json.loads(doctor.stdout)["database"]["sessions"] == 1
        for args in (("memory", "status"), ("skills", "list"), ("plugin", "list"), ("auth", "list"), ("config", "show")):
            result = run(*args)
            assert result.returncode == 0 and "Traceback" not in result.stderr, (args, result.stderr)
        for args in (("config", "set", "agent.max_iterations", "7"), ("sessions", "delete", sid, "--yes")):
            line = one_error_line(run(*args))
            assert "cannot write" in line and str(hermes_home) in line
    finally:
        os.chmod(hermes_home, 0o700)
    after = {p.name: p.read_bytes() for p in hermes_home.iterdir() if p.is_file() and p.name in before}
    assert after == before  # nothing lost, nothing half-written
    assert hermes("sessions", "delete", sid, "--yes").returncode == 0  # writable again: works
