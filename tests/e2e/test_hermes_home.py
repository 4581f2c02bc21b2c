"""A home written by Hermes Agent itself (each release's own ``hermes_state``), driven through our CLI.

Every kernel command on Hermes Agent's ``state.db`` answers with one line that
names ``hermes import hermes``; the import copies sessions, lineage, titles,
tool calls, reasoning and usage into the kernel's own file, and Hermes Agent
still reads its file, unchanged, afterwards.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.e2e.test_chat import chat_env, hermes_chat
from tests.hermes_agent import LATEST, RELEASES, run_release

# Written with Hermes Agent's own SessionDB: a conversation compressed twice, a
# telegram chat with no title and an actual cost, tool calls, reasoning, usage.
BUILD_HOME = r"""
import json, sys, time
import hermes_state
db = hermes_state.SessionDB()
call = [{"id": "call_1", "type": "function", "function": {"name": "terminal", "arguments": json.dumps({"command": "pytest -q"})}}]
db.create_session("20261101_090000_root", "cli", model="gpt-4.1", system_prompt="You are Hermes.")
db.set_session_title("20261101_090000_root", "Refactor the parser")
db.append_message("20261101_090000_root", "user", "the parser chokes on quuxnested brackets")
db.append_message("20261101_090000_root", "assistant", None, tool_calls=call, reasoning="run the tests first", finish_reason="tool_calls")
db.append_message("20261101_090000_root", "tool", "3 failed", tool_call_id="call_1", tool_name="terminal")
db.append_message("20261101_090000_root", "assistant", "Three tests fail on nesting.", token_count=12, finish_reason="stop")
db.update_token_counts("20261101_090000_root", input_tokens=1200, output_tokens=300, model="gpt-4.1",
                       cache_read_tokens=800, estimated_cost_usd=0.0125, cost_status="estimated")
db.end_session("20261101_090000_root", "compression")
time.sleep(0.01)
db.create_session("20261101_091000_mid", "cli", model="gpt-4.1", parent_session_id="20261101_090000_root")
db.append_message("20261101_091000_mid", "user", "[summary] parser nesting bug, 3 failing tests")
db.append_message("20261101_091000_mid", "assistant", "Patched the recursion.")
db.update_token_counts("20261101_091000_mid", input_tokens=500, output_tokens=100, estimated_cost_usd=0.004, cost_status="estimated")
db.end_session("20261101_091000_mid", "compression")
time.sleep(0.01)
db.create_session("20261101_092000_tip", "cli", model="gpt-4.1", parent_session_id="20261101_091000_mid")
db.append_message("20261101_092000_tip", "user", "[summary] recursion patched; tipmarker pending review")
db.append_message("20261101_092000_tip", "assistant", "All green now.")
db.create_session("20261102_100000_tg", "telegram", model="claude-sonnet-4-5")
db.append_message("20261102_100000_tg", "user", "remind me about the dentist")
db.append_message("20261102_100000_tg", "assistant", "Noted.")
db.update_token_counts("20261102_100000_tg", input_tokens=50, output_tokens=5, actual_cost_usd=0.0003,
                       estimated_cost_usd=0.0004, cost_status="actual")
if hasattr(db, "archive_and_compact"):
    db.create_session("20261103_080000_inplace", "cli", model="gpt-4.1")
    db.append_message("20261103_080000_inplace", "user", "archivedmarker old question")
    db.append_message("20261103_080000_inplace", "assistant", "old answer")
    db.archive_and_compact("20261103_080000_inplace", [{"role": "user", "content": "[summary] old question answered"},
                                                        {"role": "assistant", "content": "ready"}])
db.close()
"""

# What Hermes Agent itself sees in its file: ids, message counts and token totals.
READ_HOME = r"""
import json
import hermes_state
db = hermes_state.SessionDB()
ids = [r[0] for r in db._conn.execute("SELECT id FROM sessions ORDER BY id")]
out = {}
for sid in ids:
    s = db.get_session(sid)
    out[sid] = {"messages": len(db.get_messages(sid)), "input": s["input_tokens"], "output": s["output_tokens"],
                "cache_read": s["cache_read_tokens"], "title": s.get("title"), "parent": s.get("parent_session_id")}
print(json.dumps(out))
db.close()
"""

ROOT, MID, TIP, TG, INPLACE = ("20261101_090000_root", "20261101_091000_mid", "20261101_092000_tip",
                               "20261102_100000_tg", "20261103_080000_inplace")  # fmt: skip


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def hermes_view(version: str, home: Path) -> dict:
    return json.loads(run_release(version, READ_HOME, home).stdout)


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip() and not line.startswith("copying sessions")]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def hermes_home_of(version: str, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    run_release(version, BUILD_HOME, dest)
    return dest


@pytest.mark.parametrize("version", sorted(RELEASES))
def test_every_release_home_is_refused_in_one_line_then_imported_whole(version: str, hermes, hermes_home: Path) -> None:
    home = hermes_home_of(version, hermes_home)
    before, view = digest(home / "state.db"), hermes_view(version, home)
    for args in (("sessions", "list"), ("sessions", "search", "parser"), ("sessions", "show", ROOT), ("usage",),
                 ("chat", "-q", "hi")):  # fmt: skip
        result = hermes(*args, env={"OPENAI_API_KEY": "sk-test-0123456789", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        line = one_line(result)
        assert "written by Hermes Agent" in line and f"schema version {RELEASES[version]}" in line
        assert "`hermes import hermes`" in line
    copy = hermes_home.parent / "elsewhere.db"
    copy.write_bytes((home / "state.db").read_bytes())
    migrated = hermes("sessions", "migrate", "--from", str(copy), "--to", str(hermes_home.parent / "out.db"))
    assert migrated.returncode == 2 and f"`hermes import hermes {copy}`" in one_line(migrated)
    with sqlite3.connect(home / "state.db") as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "_sqlite_migrations" not in tables
    assert not list(home.glob("state.db.lock*"))  # not even a lock file beside Hermes Agent's

    imported = hermes("import", "hermes", "--json")
    assert imported.returncode == 0, imported.stderr
    report = json.loads(imported.stdout)
    assert report["schema_version"] == RELEASES[version] and report["ok"]
    assert report["imported"] == report["sessions"] == len(view) + (1 if INPLACE in view else 0)

    listed = {s["id"]: s for s in json.loads(hermes("sessions", "list", "--json").stdout)}
    assert {ROOT, MID, TIP, TG} <= set(listed)
    assert listed[ROOT]["title"] == "Refactor the parser" and listed[TG]["title"] is None
    assert listed[MID]["parent_session_id"] == ROOT and listed[TIP]["parent_session_id"] == MID
    assert listed[ROOT]["end_reason"] == "compression" and listed[TG]["source"] == "telegram"
    assert listed[ROOT]["message_count"] == 4

    hits = json.loads(hermes("sessions", "search", "quuxnested", "--json").stdout)
    assert [h["session_id"] for h in hits] == [ROOT]
    shown = hermes("sessions", "show", ROOT)
    assert shown.returncode == 0 and MID in shown.stdout and "pytest -q" in shown.stdout

    usage = json.loads(hermes("usage", "--json").stdout)
    assert usage["tokens"]["input_tokens"] == sum(s["input"] for s in view.values()) == 1750
    assert usage["tokens"]["output_tokens"] == sum(s["output"] for s in view.values())
    assert usage["tokens"]["cache_read_tokens"] == sum(s["cache_read"] for s in view.values())
    assert usage["cost_usd"] == pytest.approx(0.0125 + 0.004 + 0.0003)  # the actual cost where Hermes Agent had one

    again = hermes("import", "hermes", "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["imported"] == 0  # idempotent
    assert digest(home / "state.db") == before
    assert hermes_view(version, home) == view  # Hermes Agent reads everything it had


def test_resume_sends_the_newest_compression_tip_and_the_live_side_of_an_in_place_compaction(
    fake_model_server: FakeModelServer, hermes, hermes_home: Path, tmp_path: Path
) -> None:
    home = hermes_home_of(LATEST, hermes_home)
    assert hermes("import", "hermes").returncode == 0
    server = fake_model_server
    server.reply("Continuing.")
    env = chat_env(server)
    result = hermes_chat("--resume", ROOT, "-q", "what is left?", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    sent = json.dumps(server.requests[-1].messages)
    assert "tipmarker pending review" in sent and "All green now." in sent
    assert "quuxnested" not in sent  # the compressed-away turns stay in the parent

    server.reply("Sure.")
    result = hermes_chat("--resume", INPLACE, "-q", "and now?", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    sent = json.dumps(server.requests[-1].messages)
    assert "old question answered" in sent and "archivedmarker" not in sent
    hits = json.loads(hermes("sessions", "search", "archivedmarker", "--json").stdout)
    assert [h["session_id"] for h in hits] == [INPLACE]  # archived turns stay searchable
    assert hermes_view(LATEST, home)[TIP]["messages"] == 2  # the new turn went to the kernel's file only


def test_a_newer_unknown_schema_is_refused_in_one_line(hermes, hermes_home: Path, tmp_path: Path) -> None:
    home = hermes_home_of(LATEST, tmp_path / "future")
    with sqlite3.connect(home / "state.db") as conn:
        conn.execute("UPDATE schema_version SET version = 23")
    before = digest(home / "state.db")
    result = hermes("import", "hermes", str(home))
    assert result.returncode == 2
    line = one_line(result)
    assert "schema version 23, newer than this hermes-kernel reads (up to 22)" in line and "pip install -U" in line
    assert digest(home / "state.db") == before
    assert hermes("sessions", "list").returncode == 0  # the next command still works


def test_damaged_rows_are_imported_with_one_note_each(hermes, hermes_home: Path, tmp_path: Path) -> None:
    home = hermes_home_of(LATEST, tmp_path / "damaged")
    with sqlite3.connect(home / "state.db") as conn:
        conn.execute("INSERT INTO sessions (id, source, started_at, parent_session_id) VALUES ('orphan', 'cli', 1, 'gone')")
        conn.execute("INSERT INTO messages (session_id, role, content, tool_calls, timestamp) "
                     "VALUES ('orphan', 'assistant', 'x', '[{broken', 2)")  # fmt: skip
        conn.execute("INSERT INTO messages (session_id, role, content, timestamp) "
                     "VALUES ('orphan', 'user', CAST(x'6361666580ff' AS TEXT), 3)")  # fmt: skip
    result = hermes("import", "hermes", str(home))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "1 session(s) named a parent that is not in the file" in out
    assert "1 message(s) had tool calls that are not valid JSON" in out
    assert "not valid UTF-8" in out
    rows = [json.loads(line) for line in hermes("sessions", "export", "orphan").stdout.splitlines()]
    assert rows[0]["type"] == "session" and rows[0]["parent_session_id"] is None
    assert [m["content"] for m in rows[1:]] == ["x", "cafe\ufffd\ufffd"]
    assert rows[1]["tool_calls"] is None
    assert hermes("sessions", "show", "orphan").returncode == 0


def _bulk_home(dest: Path, sessions: int, per_session: int) -> Path:
    """A Hermes Agent schema (made by Hermes Agent) filled in bulk: its own writes are one at a time."""
    home = hermes_home_of(LATEST, dest)
    with sqlite3.connect(home / "state.db") as conn:
        conn.executemany("INSERT INTO sessions (id, source, started_at, title) VALUES (?, 'cli', ?, ?)",
                         [(f"bulk{i:06d}", 1_700_000_000 + i, f"bulk {i}") for i in range(sessions)])  # fmt: skip
        conn.executemany(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
            [(f"bulk{i:06d}", "user" if j % 2 == 0 else "assistant", f"message {j} of {i}", 1_700_000_000 + i)
             for i in range(sessions) for j in range(per_session)],
        )  # fmt: skip
    return home


def test_an_import_killed_mid_way_resumes_with_nothing_twice_and_nothing_missing(hermes, hermes_home: Path) -> None:
    home = _bulk_home(hermes_home, 4000, 6)
    own = home / "hermes-kernel" / "state.db"
    proc = subprocess.Popen([sys.executable, "-m", "hermes.kernel", "import", "hermes"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 60
    seen = 0
    while time.monotonic() < deadline and not seen:
        if own.exists():
            try:
                with sqlite3.connect(f"file:{own}?mode=ro", uri=True) as conn:
                    seen = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
            except sqlite3.OperationalError:
                pass
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 0 < seen < 4000 + 5, seen
    result = hermes("import", "hermes", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["skipped"] >= seen and report["imported"] + report["skipped"] == report["sessions"]
    with sqlite3.connect(own) as conn:
        assert conn.execute("SELECT count(*) FROM sessions WHERE id LIKE 'bulk%'").fetchone()[0] == 4000
        assert conn.execute("SELECT count(*) FROM messages WHERE session_id LIKE 'bulk%'").fetchone()[0] == 24000
        dupes = conn.execute("SELECT count(*) FROM (SELECT session_id, content FROM messages "
                             "GROUP BY session_id, content HAVING count(*) > 1)").fetchone()[0]  # fmt: skip
    assert dupes == 0


WRITER = r"""
import sys, time
import hermes_state
db = hermes_state.SessionDB()
db.create_session("live_writer", "cli", model="gpt-4.1")
for i in range(int(sys.argv[1])):
    db.append_message("live_writer", "user" if i % 2 == 0 else "assistant", f"live message {i}")
    time.sleep(0.01)
db.close()
"""


def test_importing_while_hermes_agent_writes_then_again_brings_the_session_up_to_date(hermes, hermes_home: Path) -> None:
    home = _bulk_home(hermes_home, 300, 4)
    from tests.hermes_agent import release_path

    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(HERMES_HOME=str(home), PYTHONPATH=str(release_path(LATEST)))
    writer = subprocess.Popen([sys.executable, "-c", WRITER, "400"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        imports = []
        while writer.poll() is None and len(imports) < 3:
            imports.append(hermes("import", "hermes", "--json"))
    finally:
        assert writer.wait(timeout=120) == 0, writer.stderr.read() if writer.stderr else ""
    assert imports and all(r.returncode == 0 for r in imports), [r.stderr for r in imports]
    after = hermes("import", "hermes", "--json")
    assert after.returncode == 0, after.stderr
    rows = [json.loads(line) for line in hermes("sessions", "export", "live_writer").stdout.splitlines()]
    assert [m["content"] for m in rows[1:]] == [f"live message {i}" for i in range(400)]
    assert hermes_view(LATEST, home)["live_writer"]["messages"] == 400


CONTINUE = r"""
import hermes_state
db = hermes_state.SessionDB()
db.append_message("20261102_100000_tg", "user", "also the car service")
db.append_message("20261102_100000_tg", "assistant", "Noted too.")
db.update_token_counts("20261102_100000_tg", input_tokens=70, output_tokens=9, estimated_cost_usd=0.0002, cost_status="estimated")
db.close()
"""


def test_a_session_hermes_agent_continued_after_the_import_is_brought_up_to_date(hermes, hermes_home: Path) -> None:
    home = hermes_home_of(LATEST, hermes_home)
    assert hermes("import", "hermes").returncode == 0
    run_release(LATEST, CONTINUE, home)
    view = hermes_view(LATEST, home)
    result = hermes("import", "hermes", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["updated"] == [TG]
    rows = [json.loads(line) for line in hermes("sessions", "export", TG).stdout.splitlines()]
    assert [m["content"] for m in rows[1:]][-2:] == ["also the car service", "Noted too."]
    assert rows[0]["input_tokens"] == view[TG]["input"] == 120
    assert json.loads(hermes("import", "hermes", "--json").stdout)["updated"] == []  # nothing twice


def test_a_session_continued_in_both_programs_is_left_alone_and_named(
    fake_model_server: FakeModelServer, hermes, hermes_home: Path, tmp_path: Path
) -> None:
    home = hermes_home_of(LATEST, hermes_home)
    assert hermes("import", "hermes").returncode == 0
    fake_model_server.reply("Here too.")
    assert hermes_chat("--resume", TG, "-q", "one more", env=chat_env(fake_model_server), cwd=tmp_path).returncode == 0
    run_release(LATEST, CONTINUE, home)
    result = hermes("import", "hermes")
    assert result.returncode == 1
    line = one_line(result)
    assert "continued in both programs" in line and TG in line and "hermes sessions delete" in line
    rows = [json.loads(line) for line in hermes("sessions", "export", TG).stdout.splitlines()]
    assert "Here too." in [m["content"] for m in rows[1:]]  # our continuation is kept


def test_a_read_only_home_says_so_in_one_line_and_keeps_the_file(hermes_home: Path) -> None:
    from tests.e2e.test_bad_files import _readonly_runner

    home = hermes_home_of(LATEST, hermes_home)
    before = digest(home / "state.db")
    run = _readonly_runner(home)
    os.chmod(home, 0o555)
    try:
        listed = run("sessions", "list")
        assert listed.returncode == 2 and "hermes import hermes" in one_line(listed)
        imported = run("import", "hermes")
        assert imported.returncode != 0
        line = one_line(imported)
        assert "cannot write" in line and str(home) in line
    finally:
        os.chmod(home, 0o700)
    assert digest(home / "state.db") == before
    assert not (home / "hermes-kernel").exists()


def test_an_import_into_a_store_holding_the_same_title_numbers_it(hermes, hermes_home: Path) -> None:
    home = hermes_home_of(LATEST, hermes_home)
    from hermes.kernel.store import SQLiteSessionStore

    store = SQLiteSessionStore(home / "hermes-kernel" / "state.db")
    try:
        mine = store.create_session(source="cli", title="Refactor the parser")
    finally:
        store.close()
    result = hermes("import", "hermes", "--json")
    assert result.returncode == 0, result.stderr
    listed = {s["id"]: s for s in json.loads(hermes("sessions", "list", "--json").stdout)}
    assert listed[mine]["title"] == "Refactor the parser"
    assert listed[ROOT]["title"].startswith("Refactor the parser #")
    assert json.loads(hermes("import", "hermes", "--json").stdout)["imported"] == 0


def _tree(home: Path) -> dict[str, str]:
    """Every file of the home but the kernel's own folder, with its digest.

    SQLite's ``-wal``/``-shm`` companions are left out: any reader of a WAL
    database creates them, Hermes Agent included, and they hold no data of ours.
    """
    return {str(p.relative_to(home)): digest(p) for p in sorted(home.rglob("*"))
            if p.is_file() and "hermes-kernel" not in p.parts and not p.name.endswith(("-wal", "-shm"))}  # fmt: skip


def test_doctor_describes_the_shared_home_and_fix_imports_without_touching_hermes_agent_files(hermes, hermes_home: Path) -> None:
    home = hermes_home_of(LATEST, hermes_home)
    (home / "memories").mkdir()
    (home / "memories" / "MEMORY.md").write_text("uses pytest\n§\nprefers tabs\n")
    (home / "sessions").mkdir()
    (home / "SOUL.md").write_text("You are Hermes.\n")
    before = _tree(home)
    result = hermes("doctor")
    assert result.returncode == 1
    out = result.stdout
    assert "this home is shared with Hermes Agent; its state.db (schema version 22) is read, never written" in out
    assert "history: 0 of 6 session(s) imported" in out
    assert "shared:   memories" in out and "shared:   SOUL.md" in out
    assert "not used: sessions" in out
    assert "6 session(s) in Hermes Agent's state.db are not in hermes-kernel's store yet; run `hermes import hermes`" in out
    assert "state.db: not created yet" in out  # Hermes Agent's file is never checked as ours
    fixed = hermes("doctor", "--fix", "--json")
    report = json.loads(fixed.stdout)
    assert report["hermes_agent"]["imported"] == 6 and report["hermes_agent"]["not_imported"] == 0
    assert any("imported 6 session(s)" in line for line in report["fixed"])
    assert report["database"]["sessions"] == 6
    assert _tree(home) == before  # --fix changed nothing of Hermes Agent's
    assert hermes("sessions", "list").returncode == 0


def test_the_import_goes_to_the_configured_store_on_either_backend(hermes, hermes_home: Path, store_backend) -> None:
    home = hermes_home_of(LATEST, hermes_home)
    before = digest(home / "state.db")
    result = hermes("import", "hermes", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["imported"] == 6 and report["target"].startswith(store_backend.name)
    listed = {s["id"]: s for s in json.loads(hermes("sessions", "list", "--json").stdout)}
    assert listed[TIP]["parent_session_id"] == MID and listed[ROOT]["title"] == "Refactor the parser"
    assert [h["session_id"] for h in json.loads(hermes("sessions", "search", "quuxnested", "--json").stdout)] == [ROOT]
    assert json.loads(hermes("usage", "--json").stdout)["tokens"]["input_tokens"] == 1750
    assert json.loads(hermes("import", "hermes", "--json").stdout)["imported"] == 0
    assert digest(home / "state.db") == before
