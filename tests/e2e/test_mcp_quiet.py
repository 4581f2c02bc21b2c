"""MCP servers that misbehave, through a real ``hermes chat``: secrets on stderr, a stdout flood,
signals at start-up and during a call; checked on screen, in the log and by PID."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.e2e.test_chat import chat_env, hermes_chat
from tests.plugins.mcp.noisy_server import GITHUB_TOKEN, OPENAI_KEY
from tests.plugins.mcp.servers import alive, pids, stdio_server, wait_for, write_config

pytestmark = pytest.mark.slow

NOISY = Path(__file__).parents[1] / "plugins" / "mcp" / "noisy_server.py"


def noisy(mode: str, marks: Path) -> dict:
    return {"command": sys.executable, "args": [str(NOISY), mode], "env": {"NOISY_MARK_DIR": str(marks)}}


def secret_parts() -> list[str]:
    """Pieces of the planted secrets that must never appear anywhere."""
    return [GITHUB_TOKEN[4:20], OPENAI_KEY[8:24]]


def test_secrets_a_server_prints_to_stderr_reach_neither_the_log_nor_the_terminal_in_clear(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path
) -> None:
    server = fake_model_server
    marks = tmp_path / "marks"
    write_config(hermes_home, {"noisy": noisy("secrets", marks)})
    server.tool_calls(("mcp_noisy_echo", {"text": "hi"}))
    server.reply("done")
    result = hermes_chat("-q", "hello", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "done\n"
    log = hermes_home / "logs" / "mcp-noisy.log"
    assert log.stat().st_mode & 0o777 == 0o600
    text = log.read_text()
    # All three stderr lines are there, each with its secret replaced.
    assert text.count("[REDACTED:github-token]") == 2 and "[REDACTED:openai-key]" in text
    assert "starting with GITHUB_TOKEN=" in text and "calling upstream" in text
    for part in secret_parts():
        assert part not in text and part not in result.stderr and part not in result.stdout
    assert "starting with" not in result.stderr  # the server's stderr is not on the terminal at all
    assert "Traceback" not in result.stderr


def test_a_server_flooding_stdout_is_cut_off_once_and_the_agent_goes_on(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path
) -> None:
    server = fake_model_server
    marks = tmp_path / "marks"
    write_config(hermes_home, {"noisy": noisy("flood", marks)}, stdout_noise_limit=20000)
    server.reply("still answering")
    started = time.monotonic()
    result = hermes_chat("-q", "hello", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "still answering\n"
    lines = [line for line in result.stderr.splitlines() if "noisy" in line]
    assert len(lines) == 1, result.stderr
    assert "non-JSON" in lines[0] and "mcp.stdout_noise_limit" in lines[0]
    assert len(result.stderr) < 2000 and "Traceback" not in result.stderr
    log = hermes_home / "logs" / "mcp-noisy.log"
    assert log.stat().st_mode & 0o777 == 0o600
    assert 5000 < log.stat().st_size < 40000  # the noise up to the limit (lines cut short), then nothing more
    assert "not JSON-RPC: this is not JSON-RPC" in log.read_text()
    (child,) = pids(marks)
    assert wait_for(lambda: not alive(child), 10), f"the flooding server {child} is still running"
    assert time.monotonic() - started < 60


def start_chat(server: FakeModelServer, tmp_path: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "hermes.kernel", "chat", "-q", "go"],
        env=chat_env(server), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("phase", "signum", "code"),
    [
        ("start-up", signal.SIGINT, 130),
        ("start-up", signal.SIGTERM, 143),
        ("start-up", signal.SIGHUP, 129),
        ("call", signal.SIGTERM, 143),
        ("call", signal.SIGHUP, 129),
    ],
)
def test_a_signal_stops_hermes_quickly_and_no_mcp_child_outlives_it(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path, phase: str, signum: int, code: int
) -> None:
    server = fake_model_server
    marks = tmp_path / "marks"
    if phase == "start-up":  # a server that never answers initialize (connect_timeout stays 30 s)
        write_config(hermes_home, {"noisy": noisy("hang", marks)})
        ready = lambda: bool(pids(marks))  # noqa: E731
    else:
        write_config(hermes_home, {"local": stdio_server(marks)})
        server.tool_calls(("mcp_local_slow", {"seconds": 120, "tag": "sig"}))
        ready = lambda: (marks / "started-sig").exists()  # noqa: E731
    server.reply("never reached")
    proc = start_chat(server, tmp_path)
    try:
        assert wait_for(ready, 60), f"the server never reached {phase}"
        children = pids(marks)
        assert children and all(alive(pid) for pid in children)
        sent = time.monotonic()
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    assert took < 3.0, f"hermes took {took:.1f}s to stop after {signal.Signals(signum).name}"
    assert out == ""
    if signum == signal.SIGINT:
        assert "interrupt" in err
    else:
        assert f"stopped by {signal.Signals(signum).name}" in err
    assert "Traceback" not in err and "did not start" not in err
    assert all(not alive(pid) for pid in children), f"MCP servers {children} outlived hermes"


def test_closing_the_terminal_stops_hermes_and_every_mcp_child(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path
) -> None:
    import fcntl
    import os
    import pty
    import termios

    server = fake_model_server
    marks = tmp_path / "marks"
    write_config(hermes_home, {"local": stdio_server(marks)})
    server.tool_calls(("mcp_local_slow", {"seconds": 120, "tag": "tty"}))
    server.reply("never reached")
    master, slave = pty.openpty()

    def take_terminal() -> None:  # after setsid: the pty becomes hermes's controlling terminal
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(
        [sys.executable, "-m", "hermes.kernel", "chat", "-q", "go"], env=chat_env(server), cwd=tmp_path,
        stdin=slave, stdout=slave, stderr=slave, start_new_session=True, preexec_fn=take_terminal,
    )  # fmt: skip
    os.close(slave)
    try:
        assert wait_for(lambda: (marks / "started-tty").exists(), 60), "the slow tool never started"
        children = pids(marks)
        assert children and all(alive(pid) for pid in children)
        os.close(master)  # the terminal window closes: SIGHUP, and every later write fails
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 129
    assert wait_for(lambda: all(not alive(pid) for pid in children), 5), f"MCP servers {children} outlived hermes"
