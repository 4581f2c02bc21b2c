"""The recovery fault table: each fault a flaky network or a hostile reply brings, met through the CLI.

Every row runs ``hermes chat -q`` in a subprocess against the fake server,
through the real ``openai`` and ``anthropic`` SDKs, and checks what the user
meets: the exit code, stdout and stderr, what ``hermes sessions show --json``
stored, and that the next ``hermes chat -q`` works.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.e2e.test_chat import chat_env, hermes_chat

both = pytest.mark.parametrize("provider", ["openai", "anthropic"])


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def hermes(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hermes.kernel", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120)


def last_session(env: dict[str, str], cwd: Path) -> dict:
    listed = hermes("sessions", "list", "--json", env=env, cwd=cwd)
    assert listed.returncode == 0, listed.stderr
    newest = json.loads(listed.stdout)[0]["id"]
    shown = hermes("sessions", "show", newest, "--json", env=env, cwd=cwd)
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


def key_state(env: dict[str, str], cwd: Path) -> list[dict]:
    listed = hermes("auth", "list", "--json", env=env, cwd=cwd)
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout)


@dataclass
class Row:
    """One fault: what the server does, what the user must see and what must be stored."""

    script: Callable[[FakeModelServer], None]
    code: int
    stdout: str | None = None  # exact stdout, when given
    stdout_has: tuple[str, ...] = ()
    stderr_has: tuple[str, ...] = ()
    stored: Callable[[dict], bool] = lambda session: True
    extra_env: dict[str, str] = field(default_factory=dict)
    keys_ok: bool = True  # the key is usable afterwards (not cooling down)


def _assistant(session: dict) -> list[dict]:
    return [m for m in session["messages"] if m["role"] == "assistant"]


ROWS: dict[str, Row] = {
    # A rate limit a retry recovers leaves no cooldown behind (it used to lock the key for an hour).
    "rate_limit_recovered": Row(lambda s: s.fault("rate_limit").reply("after the limit"), 0, "after the limit\n"),
    "retry_after_zero": Row(lambda s: s.fault("rate_limit", retry_after=0).reply("right away"), 0, "right away\n"),
    "retry_after_date": Row(lambda s: s.fault("overloaded", retry_after=0.2, retry_after_date=True).reply("dated"),
                            0, "dated\n"),
    # A 401 a retry fixes is not an error; one it does not fix names the key and the fix, and locks nothing.
    "auth_once": Row(lambda s: s.fault("auth").reply("second try"), 0, "second try\n"),
    "auth_twice": Row(lambda s: s.fault("auth").fault("auth"), 1, "",
                      stderr_has=("was refused as unauthorised twice", "_API_KEY", "hermes auth add")),
    "billing": Row(lambda s: s.fault("billing"), 1, "", stderr_has=("billing",), keys_ok=False),
    "upstream_rate_limit": Row(lambda s: s.fault("upstream_rate_limit").reply("upstream back"), 0, "upstream back\n"),
    "unknown_retried_once": Row(lambda s: s.fault("unknown").reply("after a teapot"), 0, "after a teapot\n"),
    "thinking_signature": Row(lambda s: (s.tool_calls(("todo", {"todos": []}), reasoning="signed elsewhere"),
                                         s.fault("thinking_signature"), s.reply("repaired")), 0, "repaired\n",
                              stderr_has=("thinking_signature",)),
    # A cut-off stream is never "stop": continued, and flagged when it stays cut.
    "cut_then_continued": Row(lambda s: s.fault("cut_stream", message="The first half, ").reply("the second half."),
                              0, "The first half, the second half.\n"),
    "cut_for_good": Row(lambda s: [s.fault("cut_stream", message=f"part {i}. ") for i in range(3)], 1,
                        stdout_has=("part 0. part 1. part 2.",), stderr_has=("incomplete",),
                        stored=lambda session: _assistant(session)[-1]["finish_reason"] == "incomplete"),
    # Tool calls from a length reply never run; the retry gets twice the output budget.
    "length_tool_call": Row(lambda s: (s.tool_calls(("write_file", {"path": "cut.txt", "content": "x"}),
                                                    finish_reason="length"), s.reply("done")), 0, "done\n",
                            stored=lambda session: not any(m.get("tool_calls") for m in session["messages"])),
    "reasoning_only": Row(lambda s: [s.reply("", reasoning="thinking " * 20, finish_reason="length") for _ in range(2)],
                          1, "", stderr_has=("on reasoning", "model.max_tokens"),
                          stored=lambda session: _assistant(session) == []),
    "thinking_only_prefill": Row(lambda s: (s.reply("", reasoning="Two and two make four."), s.reply("4")), 0, "4\n"),
    "think_tags_stripped": Row(lambda s: s.reply("<think>private musing</think>The answer."), 0, "The answer.\n",
                               stored=lambda session: _assistant(session)[-1]["content"] == "The answer."),
    # No placeholder ever enters the history.
    "empty_for_good": Row(lambda s: [s.reply("") for _ in range(4)], 1, "", stderr_has=("no answer",),
                          stored=lambda session: all(m["content"] != "(empty)" for m in session["messages"])),
    # The grace call after the step budget answers nothing: a fixed failure text and a non-zero exit.
    "grace_without_text": Row(lambda s: (s.tool_calls(("todo", {"todos": []})), s.reply("")), 1,
                              stdout_has=("I used every step",), stderr_has=("step budget",),
                              extra_env={"HERMES_AGENT__MAX_ITERATIONS": "1"}),
}


@both
@pytest.mark.parametrize("name", list(ROWS))
def test_fault_table(fake_model_server: FakeModelServer, workdir: Path, hermes_home: Path, provider: str,
                     name: str) -> None:
    row = ROWS[name]
    row.script(fake_model_server)
    env = {**chat_env(fake_model_server, provider), **row.extra_env}
    result = hermes_chat("-q", "go", env=env, cwd=workdir)
    assert result.returncode == row.code, result.stderr
    if row.stdout is not None:
        assert result.stdout == row.stdout, result.stderr
    for needle in row.stdout_has:
        assert needle in result.stdout, result.stdout
    for needle in row.stderr_has:
        assert needle in result.stderr, result.stderr
    assert "sk-test-key-0123456789abcdef" not in result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    session = last_session(env, workdir)
    assert session["session"]["end_reason"] == "user_exit"
    assert session["messages"][0] == {**session["messages"][0], "role": "user", "content": "go"}  # nothing lost
    assert row.stored(session), session["messages"]
    assert not (workdir / "cut.txt").exists()
    cooling = [k for k in key_state(env, workdir) if k["status"] != "ok"]
    assert (cooling == []) == row.keys_ok, cooling
    if not row.keys_ok:
        assert hermes("auth", "reset", env=env, cwd=workdir).returncode == 0
    fake_model_server.script.clear()
    fake_model_server.reply("next one works")
    following = hermes_chat("-q", "again", env=env, cwd=workdir)
    assert (following.returncode, following.stdout) == (0, "next one works\n"), following.stderr


@both
def test_single_key_is_never_locked_longer_than_the_provider_asked(fake_model_server: FakeModelServer,
                                                                   workdir: Path, provider: str) -> None:
    env = {**chat_env(fake_model_server, provider), "HERMES_RETRIES__MAX_RETRY_AFTER": "0.1"}
    fake_model_server.fault("rate_limit", retry_after=4)  # longer than we sleep through: the turn fails
    started = time.time()
    result = hermes_chat("-q", "go", env=env, cwd=workdir)
    assert result.returncode == 1 and "rate_limit" in result.stderr
    (key,) = key_state(env, workdir)
    assert key["status"] == "cooling_down" and key["exhausted_until"] <= time.time() + 4.0
    assert key["exhausted_until"] >= started + 3.5  # as long as asked, not an hour and not less
    time.sleep(max(0.0, key["exhausted_until"] - time.time()) + 0.1)
    assert key_state(env, workdir)[0]["status"] == "ok"
    following = hermes_chat("-q", "again", env=env, cwd=workdir)
    assert (following.returncode, following.stdout) == (0, "OK\n"), following.stderr


@both
def test_usage_subtracts_cache_writes(fake_model_server: FakeModelServer, workdir: Path, hermes_home: Path,
                                      provider: str) -> None:
    from hermes.kernel.testing import ScriptedUsage

    fake_model_server.reply("cached", usage=ScriptedUsage(input_tokens=10_000, output_tokens=5,
                                                          cache_write_tokens=5_000))
    env = chat_env(fake_model_server, provider)
    assert hermes_chat("-q", "go", env=env, cwd=workdir).returncode == 0
    usage = hermes("usage", "--json", env=env, cwd=workdir)
    assert usage.returncode == 0, usage.stderr
    tokens = json.loads(usage.stdout)["tokens"]
    assert tokens["input_tokens"] == 10_000 and tokens["cache_write_tokens"] == 5_000


@both
def test_patch_on_a_latin1_file_works(fake_model_server: FakeModelServer, workdir: Path, provider: str) -> None:
    (workdir / "legacy.txt").write_bytes("prix = 5 € ; café = 1\n".encode("cp1252"))
    fake_model_server.tool_calls(("read_file", {"path": "legacy.txt"}))
    fake_model_server.tool_calls(("patch", {"path": "legacy.txt", "old_string": "café = 1", "new_string": "café = 2"}))
    fake_model_server.reply("patched")
    result = hermes_chat("-q", "fix it", env=chat_env(fake_model_server, provider), cwd=workdir)
    assert (result.returncode, result.stdout) == (0, "patched\n"), result.stderr
    assert (workdir / "legacy.txt").read_bytes() == "prix = 5 € ; café = 2\n".encode("cp1252")
    sent = json.dumps(fake_model_server.requests[-1].body, ensure_ascii=False)
    assert "café = 2" in sent and "\\udc" not in sent


# --- signals on a real `hermes chat` with a slow server --------------------------------------


def _start(env: dict[str, str], cwd: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "hermes.kernel", "chat", *args], env=env, cwd=cwd, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for(check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@both
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_signal_during_a_slow_model_call(fake_model_server: FakeModelServer, workdir: Path, provider: str,
                                         sig: signal.Signals) -> None:
    fake_model_server.fault("slow_stream", seconds=30, message="words arrive slowly")
    env = chat_env(fake_model_server, provider)
    proc = _start(env, workdir, "-q", "go")
    _wait_for(lambda: len(fake_model_server.requests) >= 1)
    time.sleep(0.3)  # the request is waiting on the server
    sent = time.monotonic()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    elapsed = time.monotonic() - sent
    assert elapsed < 1.0, (elapsed, err)
    assert len(fake_model_server.requests) == 1  # no retry ran after the interrupt
    session = last_session(env, workdir)
    if sig == signal.SIGINT:
        assert proc.returncode == 130 and "interrupted" in err and "server_error" not in err
        assert session["session"]["end_reason"] == "user_exit"
    else:
        assert proc.returncode == 128 + signal.SIGTERM and "SIGTERM" in err
        assert session["session"]["end_reason"] == "sigterm"
    fake_model_server.script.clear()
    following = hermes_chat("-q", "again", env=env, cwd=workdir)
    assert (following.returncode, following.stdout) == (0, "OK\n"), following.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["sigterm", "sighup"])
def test_termination_stops_the_tool_child_and_ends_the_session(fake_model_server: FakeModelServer, workdir: Path,
                                                               sig: signal.Signals) -> None:
    fake_model_server.tool_calls(("terminal", {"command": "echo $$ > child.pid; exec sleep 60", "timeout": 120}))
    env = chat_env(fake_model_server)
    proc = _start(env, workdir, "--repl")  # the REPL, driven through a pipe
    assert proc.stdin is not None
    proc.stdin.write("run the long job\n")
    proc.stdin.flush()
    pid_file = workdir / "child.pid"
    _wait_for(lambda: pid_file.exists() and pid_file.read_text().strip() != "")
    child = int(pid_file.read_text())
    assert not _gone(child)
    sent = time.monotonic()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - sent < 1.0, err
    assert proc.returncode == 128 + sig
    _wait_for(lambda: _gone(child), timeout=1.0)  # no orphan keeps running
    session = last_session(env, workdir)
    assert session["session"]["end_reason"] == {signal.SIGTERM: "sigterm", signal.SIGHUP: "sighup"}[sig]
    assert any(m["role"] == "tool" for m in session["messages"])  # the interrupted call's result is stored
