"""Sessions always end, exactly once, with a reason; prune and branch never lose the live conversation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel.testing import FakeModelServer, Reply
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401

from .test_chat import chat_env, db_rows, hermes_chat


def _wait_for(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _assistant_count(home: Path) -> int:
    import sqlite3

    try:
        return db_rows(home, "SELECT count(*) FROM messages WHERE role = 'assistant'")[0][0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def _open_repl(server: FakeModelServer, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "hermes.kernel", "chat", "--repl"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=chat_env(server), cwd=cwd)  # fmt: skip


def _say(repl: subprocess.Popen[str], line: str) -> None:
    assert repl.stdin is not None
    repl.stdin.write(line + "\n")
    repl.stdin.flush()


def test_prune_never_deletes_the_session_an_open_repl_uses(fake_model_server: FakeModelServer, tmp_path: Path, hermes_home: Path, hermes) -> None:
    fake_model_server.reply("first").reply("second")
    repl = _open_repl(fake_model_server, tmp_path)
    _say(repl, "hello")
    _wait_for(lambda: _assistant_count(hermes_home) == 1)
    pruned = hermes("sessions", "prune", "--older-than", "0", "--yes", "--json")
    assert pruned.returncode == 0, pruned.stderr
    report = json.loads(pruned.stdout)
    assert report["deleted"] == [] and len(report["skipped_open"]) == 1
    text = hermes("sessions", "prune", "--older-than", "0", "--yes")
    assert "pruned 0 sessions; skipped 1 open (never ended: a chat may be using them)" in text.stdout
    out, err = repl.communicate("again\n/exit\n", timeout=120)
    assert repl.returncode == 0 and "Traceback" not in err and "second" in out
    (sid, reason), = db_rows(hermes_home, "SELECT id, end_reason FROM sessions")
    assert reason == "user_exit" and report["skipped_open"] == [sid]
    assert [c for (c,) in db_rows(hermes_home, "SELECT content FROM messages ORDER BY id")] == ["hello", "first", "again", "second"]
    with SQLiteSessionStore(hermes_home / "state.db") as store:  # ended, but active within the hour: still kept
        assert store.prune(0) == []
        store.conn.execute("UPDATE sessions SET updated_at = updated_at - 7200")
        assert store.prune(0) == [sid]


def test_repl_whose_session_was_deleted_says_so_and_goes_on(fake_model_server: FakeModelServer, tmp_path: Path, hermes_home: Path, hermes) -> None:
    fake_model_server.reply("first").reply("second")
    repl = _open_repl(fake_model_server, tmp_path)
    _say(repl, "hello")
    _wait_for(lambda: _assistant_count(hermes_home) == 1)
    (old,), = db_rows(hermes_home, "SELECT id FROM sessions")
    assert hermes("sessions", "delete", old, "--yes").returncode == 0
    out, err = repl.communicate("again\n/exit\n", timeout=120)
    assert repl.returncode == 0 and "Traceback" not in err, err
    assert f"session {old} no longer exists" in err and "continuing in a new session" in err and "second" in out
    (new, reason), = db_rows(hermes_home, "SELECT id, end_reason FROM sessions")
    assert new != old and reason == "user_exit"
    assert [c for (c,) in db_rows(hermes_home, "SELECT content FROM messages ORDER BY id")] == ["again", "second"]


def _compressed_lineage(home: Path) -> tuple[str, str]:
    with SQLiteSessionStore(home / "state.db") as store:
        root = store.create_session(title="Long job", system_prompt="You are hermes.")
        store.append_messages(root, [{"role": "user", "content": "start the long job"}, {"role": "assistant", "content": "started"}])
        child = store.compression_child(root, [{"role": "user", "content": "summary: the long job started"}],
                                        system_prompt="You are hermes (compressed).")  # fmt: skip
    return root, child


def test_branch_of_a_compressed_session_keeps_its_end_and_branches_from_the_tip(fake_model_server: FakeModelServer, tmp_path: Path, hermes_home: Path, hermes) -> None:
    root, child = _compressed_lineage(hermes_home)
    result = hermes("sessions", "branch", root, "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["requested"] == root and report["branched_from"] == child
    rows = {r["id"]: r for r in json.loads(hermes("sessions", "list", "--json").stdout)}
    assert rows[root]["end_reason"] == "compression"
    fake_model_server.reply("continuing")
    resumed = hermes_chat("-q", "go on", "--resume", root, env=chat_env(fake_model_server), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    users = [m["content"] for m in fake_model_server.requests[0].body["messages"] if m["role"] == "user"]
    assert users == ["summary: the long job started", "go on"]  # the live compressed child, not the old root
    assert db_rows(hermes_home, f"SELECT count(*) FROM messages WHERE session_id = '{root}'") == [(2,)]


def test_resume_in_the_repl_ends_the_session_it_leaves_and_ended_at_moves(fake_model_server: FakeModelServer, tmp_path: Path, hermes_home: Path) -> None:
    env = chat_env(fake_model_server)
    fake_model_server.reply("one")
    assert hermes_chat("-q", "first session", env=env, cwd=tmp_path).returncode == 0
    (first, first_end), = db_rows(hermes_home, "SELECT id, ended_at FROM sessions")
    time.sleep(0.05)
    fake_model_server.reply("two").reply("three")
    result = hermes_chat(input=f"second session\n/resume {first}\nback again\n/exit\n", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = {sid: (reason, ended) for sid, reason, ended in db_rows(hermes_home, "SELECT id, end_reason, ended_at FROM sessions")}
    second = next(sid for sid in rows if sid != first)
    assert rows[second][0] == "resumed_other"
    assert rows[first][0] == "user_exit" and rows[first][1] > first_end  # ended again, later


def test_subagent_sessions_end_with_the_child(fake_model_server: FakeModelServer, tmp_path: Path, hermes) -> None:
    server = fake_model_server
    server.lane("look at alpha", Reply("alpha done"))
    server.tool_calls(("delegate_task", {"tasks": [{"goal": "look at alpha"}]}))
    server.reply("all done")
    result = hermes_chat("-q", "delegate it", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    sessions = json.loads(hermes("sessions", "list", "--json").stdout)
    (child,) = [s for s in sessions if s["source"] == "subagent"]
    assert child["end_reason"] == "subagent_done" and child["ended_at"]


ORDER_PROVIDER = """
import json, os
from hermes.kernel import MemoryProvider

def log(event, *args):
    with open(os.environ["ORDER_LOG"], "a") as fh:
        fh.write(json.dumps([event, *args]) + "\\n")

class Recorder(MemoryProvider):
    name = "recorder"
    def is_available(self): return True
    def initialize(self, session_id, **kwargs): log("initialize")
    def sync_turn(self, user_content, assistant_content, session_id):
        import time; time.sleep(0.3)  # slow, so an early session end would overtake it
        log("sync_turn", user_content)
    def queue_prefetch(self, query, session_id): log("queue_prefetch", query)
    def on_session_end(self, session_id, messages, reason): log("on_session_end", reason)
    def shutdown(self): log("shutdown")

class Broken(MemoryProvider):
    name = "broken"
    def is_available(self): return True
    def initialize(self, session_id, **kwargs): raise RuntimeError("cannot open its database")
"""


def test_hook_order_at_exit_and_a_broken_provider_named_once(fake_model_server: FakeModelServer, fake_dists, tmp_path: Path) -> None:
    fake_dists.add("hermes-order", {"hermes.memory_providers": {"recorder": "hermes_order:Recorder", "broken": "hermes_order:Broken"}},
                   {"hermes_order": ORDER_PROVIDER})  # fmt: skip
    log_file = tmp_path / "order.log"
    env = {**chat_env(fake_model_server), "HERMES_LOAD_PLUGINS": "hermes-order", "ORDER_LOG": str(log_file),
           "HERMES_MEMORY__PROVIDER": "recorder"}  # fmt: skip
    fake_model_server.reply("one").reply("two")
    result = hermes_chat(input="first\nsecond\n/exit\n", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert events == [
        ["initialize"], ["sync_turn", "first"], ["queue_prefetch", "first"], ["sync_turn", "second"],
        ["queue_prefetch", "second"], ["on_session_end", "user_exit"], ["shutdown"],
    ]  # fmt: skip
    log_file.unlink()
    broken = hermes_chat("-q", "hi", env={**env, "HERMES_MEMORY__PROVIDER": "broken"}, cwd=tmp_path)
    assert broken.returncode == 0, broken.stderr
    assert broken.stderr.count("memory provider 'broken' failed to initialize") == 1, broken.stderr
    assert "cannot open its database" in broken.stderr


def test_a_one_shot_makes_one_model_call_and_titles_its_session_locally(fake_model_server: FakeModelServer, tmp_path: Path, hermes_home: Path) -> None:
    server = fake_model_server
    server.lane("Assistant (beginning)", Reply('{"title": "A model-made title"}'))  # taken only by a title call
    server.reply("Here is the fix.")
    env = {**chat_env(server), "HERMES_SESSIONS__AUTO_TITLE": "true"}
    done = hermes_chat("-q", "the login button does nothing on  phones\nmore detail", env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "Here is the fix.\n"), done.stderr
    assert len(server.requests) == 1  # the answer only: no title call before the process exits
    assert db_rows(hermes_home, "SELECT title FROM sessions") == [("the login button does nothing on phones more detail",)]
    server.reply("piped answer")
    long = "please explain why the nightly build of the payments service fails on the arm64 runners"
    piped = hermes_chat(env=env, cwd=tmp_path, input=long, repl=False)
    assert (piped.returncode, piped.stdout) == (0, "piped answer\n"), piped.stderr
    assert len(server.requests) == 2
    titles = sorted(t for (t,) in db_rows(hermes_home, "SELECT title FROM sessions"))
    assert titles == ["please explain why the nightly build of the payments…", "the login button does nothing on phones more detail"]


def test_a_repl_session_is_titled_by_the_model_after_the_first_exchange_and_off_switch(fake_model_server: FakeModelServer, tmp_path: Path, hermes_home: Path) -> None:
    server = fake_model_server
    server.lane("Assistant (beginning)", Reply('{"title": "Fix login button on mobile"}'))
    server.reply("Here is the fix.")
    env = {**chat_env(server), "HERMES_SESSIONS__AUTO_TITLE": "true"}
    assert hermes_chat(env=env, cwd=tmp_path, input="the login button does nothing on phones\n").returncode == 0
    assert db_rows(hermes_home, "SELECT title FROM sessions") == [("Fix login button on mobile",)]
    assert len(server.requests) == 2  # the answer, then the title in the background
    server.reply("again")
    off = {**env, "HERMES_SESSIONS__AUTO_TITLE": "false"}
    assert hermes_chat(env=off, cwd=tmp_path, input="another question\n").returncode == 0
    server.reply("once more")
    assert hermes_chat("-q", "a one-shot question", env=off, cwd=tmp_path).returncode == 0
    assert len(server.requests) == 4  # no title calls
    titles = sorted(t or "" for (t,) in db_rows(hermes_home, "SELECT title FROM sessions"))
    assert titles == ["", "", "Fix login button on mobile"]  # off: not even a local title
    server.lane("Assistant (beginning)", Reply("Sure! To fix the login button you should first check the event handler and then"))
    server.reply("answer")
    assert hermes_chat(env=env, cwd=tmp_path, input="third question\n").returncode == 0
    assert len(db_rows(hermes_home, "SELECT id FROM sessions WHERE title IS NULL")) == 3  # an answer is not a title


def test_sessions_show_cuts_long_tool_output_and_search_shows_a_message_once(hermes, hermes_home: Path) -> None:
    with SQLiteSessionStore(hermes_home / "state.db") as store:
        sid = store.create_session()
        store.append_messages(sid, [
            {"role": "user", "content": "list the big folder"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "tool_name": "terminal", "content": "x" * 5000 + "TAILMARK"},
        ])  # fmt: skip
        child = store.compression_child(sid, [{"role": "user", "content": "list the big folder"}])
    shown = hermes("sessions", "show", sid)
    assert "TAILMARK" not in shown.stdout and "more characters; --full shows all" in shown.stdout
    assert "TAILMARK" in hermes("sessions", "show", sid, "--full").stdout
    hits = json.loads(hermes("sessions", "search", "big folder", "--json").stdout)
    assert len(hits) == 1 and hits[0]["root_session_id"] == sid
    assert os.path.exists(hermes_home / "state.db") and child


def test_resume_a_session_stored_without_a_system_prompt(fake_model_server: FakeModelServer, tmp_path: Path, hermes_home: Path) -> None:
    with SQLiteSessionStore(hermes_home / "state.db") as store:  # written by another tool: no frozen prompt
        sid = store.create_session(source="api")
        store.append_messages(sid, [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "noted"}])
    fake_model_server.reply("continued")
    result = hermes_chat("-q", "go on", "--resume", sid, env=chat_env(fake_model_server), cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "continued\n"), result.stderr
    users = [m["content"] for m in fake_model_server.requests[0].body["messages"] if m["role"] == "user"]
    assert users == ["earlier", "go on"]
    assert db_rows(hermes_home, f"SELECT count(*) FROM messages WHERE session_id = '{sid}'") == [(4,)]
