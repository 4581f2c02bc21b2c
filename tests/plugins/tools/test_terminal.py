"""The terminal tool with real subprocesses: output, exit codes, timeouts, interrupts, approval."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from hermes.kernel import ToolContext, ToolError
from hermes.plugins.tools.terminal import terminal


def _gone(pid: int, within: float = 3.0) -> bool:
    """True once ``pid`` has exited (a zombie counts: some container inits never reap orphans)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            stat = Path(f"/proc/{pid}/stat")
            state = stat.read_text().rsplit(")", 1)[1].split()[0] if Path("/proc/self").exists() else "?"
        except (ProcessLookupError, FileNotFoundError):
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def test_exit_code_and_combined_output(ctx: ToolContext) -> None:
    out = terminal({"command": "echo out; echo err >&2; exit 3"}, ctx)
    assert out == "exit code: 3\nout\nerr\n"


def test_runs_in_cwd_or_workdir(work: Path, ctx: ToolContext) -> None:
    (work / "sub").mkdir()
    assert terminal({"command": "pwd"}, ctx) == f"exit code: 0\n{work}\n"
    assert terminal({"command": "pwd", "workdir": "sub"}, ctx) == f"exit code: 0\n{work / 'sub'}\n"
    with pytest.raises(ToolError, match="does not exist or is not a folder"):
        terminal({"command": "pwd", "workdir": "missing"}, ctx)


def test_no_output_no_stdin_no_colour(ctx: ToolContext) -> None:
    assert terminal({"command": "true"}, ctx) == "exit code: 0\n(no output)"
    # stdin is closed: a command waiting for input ends at once instead of hanging.
    assert terminal({"command": "cat; echo done", "timeout": 5}, ctx) == "exit code: 0\ndone\n"
    assert terminal({"command": r"printf '\033[31mred\033[0m\n'"}, ctx) == "exit code: 0\nred\n"
    assert "\ufffd" in terminal({"command": r"printf 'bad \377 byte\n'"}, ctx)


def test_timeout_kills_the_whole_process_group(work: Path, ctx: ToolContext) -> None:
    started = time.monotonic()
    out = terminal({"command": "sleep 30 & echo $! > child.pid; sleep 5", "timeout": 1}, ctx)
    assert time.monotonic() - started < 4
    assert out.startswith("timed out after 1 s: the command and every process it started were killed.")
    assert _gone(int((work / "child.pid").read_text())), "the background child survived the timeout"


def test_interrupt_stops_a_running_command(ctx: ToolContext) -> None:
    flag = threading.Event()
    ctx.is_interrupted = flag.is_set
    threading.Timer(0.3, flag.set).start()
    started = time.monotonic()
    out = terminal({"command": "echo started; sleep 10", "timeout": 30}, ctx)
    assert time.monotonic() - started < 3
    assert out == "interrupted by the user: the command and every process it started were killed.\nstarted\n"


def test_background_job_does_not_hold_the_result(ctx: ToolContext) -> None:
    started = time.monotonic()
    out = terminal({"command": "sleep 3 & echo launched"}, ctx)
    assert out == "exit code: 0\nlaunched\n"
    assert time.monotonic() - started < 2


def test_long_output_keeps_head_and_tail(work: Path, ctx: ToolContext) -> None:
    (work / "long.py").write_text("import sys\nsys.stdout.write('a' * 30000 + 'b' * 40000)\n")
    out = terminal({"command": "python3 long.py"}, ctx).removeprefix("exit code: 0\n")
    assert out.startswith("a" * 20_000 + "\n\n[... 20,000 characters omitted")
    assert out.endswith("]\n\n" + "b" * 30_000)
    assert "the output had 70,000 characters" in out


def test_bad_arguments(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="blank"):
        terminal({"command": "   "}, ctx)
    with pytest.raises(ToolError, match="'timeout' must be at least 1"):
        terminal({"command": "true", "timeout": 0}, ctx)


# --- the command rule ------------------------------------------------------------

# `false &&` guarantees the risky part can never run, even if the check failed.
REAL_DANGER = "touch ran && false && git push --force origin main"


def test_one_shot_mode_blocks_without_running(work: Path, ctx: ToolContext) -> None:
    assert ctx.approve is None
    with pytest.raises(ToolError, match="command blocked: `git push --force origin main` publishes commits.*interactive chat"):
        terminal({"command": REAL_DANGER}, ctx)
    assert not (work / "ran").exists()


@pytest.fixture
def marker_is_dangerous(monkeypatch: pytest.MonkeyPatch) -> None:
    """Treat a harmless command as needing approval, so the approval path can really run it."""
    import hermes.kernel.command_safety as command_safety  # the terminal tool imports it on first use

    monkeypatch.setattr(command_safety, "approval_reason", lambda c, *a, **k: "test reason" if "MARK" in c else None)


def test_user_declines(work: Path, ctx: ToolContext, marker_is_dangerous: None) -> None:
    asked: list[tuple[str, str]] = []
    ctx.approve = lambda command, reason: asked.append((command, reason)) or False
    with pytest.raises(ToolError, match=r"the user declined this command \(test reason\)"):
        terminal({"command": "touch MARK"}, ctx)
    assert asked == [("touch MARK", "test reason")]
    assert not (work / "MARK").exists()


def test_user_approves(work: Path, ctx: ToolContext, marker_is_dangerous: None) -> None:
    ctx.approve = lambda command, reason: True
    assert terminal({"command": "touch MARK"}, ctx) == "exit code: 0\n(no output)"
    assert (work / "MARK").exists()


def test_safe_commands_never_ask(ctx: ToolContext) -> None:
    ctx.approve = lambda command, reason: pytest.fail("asked about a safe command")
    assert terminal({"command": "echo fine"}, ctx) == "exit code: 0\nfine\n"
