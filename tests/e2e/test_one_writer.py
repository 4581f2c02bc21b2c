"""Two chats on one session: the second branches with one warning line, and neither history interleaves.

Measured in issue 27: two REPLs on one session diverged silently, and a later resume told the
model that tool calls which had run were "skipped". Both processes here are real ``hermes chat``
processes on one store (state.db, and PostgreSQL).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from hermes.kernel.testing import FakeModelServer, ToolCall
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.e2e.conftest import StoreBackend

from .test_chat import chat_env, hermes_chat


def _repl(server: FakeModelServer, cwd: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "hermes.kernel", "chat", "--repl", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=chat_env(server), cwd=cwd)  # fmt: skip


def _say(repl: subprocess.Popen[str], line: str) -> None:
    assert repl.stdin is not None
    repl.stdin.write(line + "\n")
    repl.stdin.flush()


def _wait_for(condition, timeout: float = 90.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _has_rows(store: StoreBackend, sql: str) -> bool:
    """True once ``sql`` finds a row (False while the first chat has not created the store yet)."""
    try:
        return bool(store.rows(sql))
    except Exception:  # noqa: BLE001 - no file, no tables yet: sqlite3 or psycopg errors
        return False


def _contents(store: StoreBackend, session_id: str) -> list[str]:
    return [c for (c,) in store.rows("SELECT content FROM messages WHERE session_id = ? ORDER BY id", (session_id,))]


def _sessions(store: StoreBackend) -> list[str]:
    return [i for (i,) in store.rows("SELECT id FROM sessions ORDER BY started_at, id")]


def test_a_second_chat_on_an_open_session_branches_and_both_histories_stay_whole(
    fake_model_server: FakeModelServer, tmp_path: Path, store_backend: StoreBackend
) -> None:
    server = fake_model_server
    server.reply("first answer").reply("answer in the branch").reply("second answer")
    first = _repl(server, tmp_path)
    _say(first, "hello")
    _wait_for(lambda: _has_rows(store_backend, "SELECT 1 FROM messages WHERE role = 'assistant'"))
    [sid] = _sessions(store_backend)
    second = hermes_chat("--resume", sid, "-q", "hello from the second chat", env=chat_env(server), cwd=tmp_path)
    assert second.returncode == 0 and second.stdout == "answer in the branch\n", second.stderr
    warnings = [line for line in second.stderr.splitlines() if "warning:" in line]
    assert len(warnings) == 1 and f"session {sid} is open for writing in another hermes process (pid {first.pid}" in warnings[0]
    [branch] = [s for s in _sessions(store_backend) if s != sid]
    assert f"continuing in a new branch {branch}, so the two chats never interleave in one session" in warnings[0]
    out, err = first.communicate("again\n/exit\n", timeout=120)
    assert first.returncode == 0 and "second answer" in out, err
    assert _contents(store_backend, sid) == ["hello", "first answer", "again", "second answer"]
    assert _contents(store_backend, branch) == ["hello", "first answer", "hello from the second chat", "answer in the branch"]
    # Nobody writes the session now: a third chat resumes it, no warning, no branch.
    server.reply("third answer")
    third = hermes_chat("--resume", sid, "-q", "once more", env=chat_env(server), cwd=tmp_path)
    assert third.returncode == 0 and "warning" not in third.stderr, third.stderr
    assert _contents(store_backend, sid)[-2:] == ["once more", "third answer"] and len(_sessions(store_backend)) == 2


def test_a_resume_after_tool_calls_ran_never_calls_them_skipped(
    fake_model_server: FakeModelServer, tmp_path: Path, store_backend: StoreBackend
) -> None:
    """The measured case: a second chat resumed while the first one's tool was still running."""
    server = fake_model_server
    go = tmp_path / "go"
    slow = f"while [ ! -e {go} ]; do sleep 0.05; done; echo the tool finished"
    server.tool_calls(ToolCall("terminal", {"command": slow}, id="slow1"))
    server.reply("answered while the first chat's tool ran")
    server.reply("the first chat's turn is done")
    server.reply("resumed with everything")
    first = _repl(server, tmp_path)
    _say(first, "run the slow thing")
    _wait_for(lambda: _has_rows(store_backend, "SELECT 1 FROM messages WHERE role = 'assistant'"))  # its tool call
    [sid] = _sessions(store_backend)
    second = hermes_chat("--resume", sid, "-q", "meanwhile", env=chat_env(server), cwd=tmp_path)
    assert second.returncode == 0 and "answered while" in second.stdout, second.stderr
    assert f"session {sid} is open for writing" in second.stderr
    go.touch()  # the first chat's tool finishes only now, after the second chat wrote its turn
    _wait_for(lambda: any("turn is done" in c for c in _contents(store_backend, sid) if c))
    out, err = first.communicate("/exit\n", timeout=120)
    assert first.returncode == 0, err
    stored = store_backend.rows("SELECT role, tool_call_id, content FROM messages WHERE session_id = ? ORDER BY id", (sid,))
    assert [(r, t) for r, t, _ in stored] == [("user", None), ("assistant", None), ("tool", "slow1"), ("assistant", None)]
    assert "the tool finished" in stored[2][2]
    resumed = hermes_chat("--resume", sid, "-q", "go on", env=chat_env(server), cwd=tmp_path)
    assert resumed.returncode == 0 and resumed.stdout == "resumed with everything\n", resumed.stderr
    sent = server.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    tool = sent[3]
    assert tool["tool_call_id"] == "slow1" and "the tool finished" in tool["content"]
    assert not any(str(m.get("content") or "").startswith(("skipped", "no result")) for m in sent)
