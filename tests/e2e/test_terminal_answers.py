"""A model's answer carrying escape sequences: shown, not obeyed, on a terminal; exact in a pipe."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.e2e.test_chat import chat_env, hermes_chat

ANSWER = "Done.\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2K"


def _read_all(fd: int) -> bytes:
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            return out
        if not chunk:
            return out
        out += chunk


def test_one_shot_answer_on_a_terminal_shows_escapes(fake_model_server: FakeModelServer, tmp_path: Path) -> None:
    fake_model_server.reply(ANSWER)
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "hermes.kernel", "chat", "-q", "hi"], stdout=follower,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=chat_env(fake_model_server), cwd=tmp_path)  # fmt: skip
    os.close(follower)
    screen = _read_all(leader).decode()
    os.close(leader)
    assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
    assert "\x1b" not in screen and "\x07" not in screen
    assert "Done.^[]52;c;cm0gLXJmIH4=^G^[[2K" in screen


def test_one_shot_answer_in_a_pipe_is_exact(fake_model_server: FakeModelServer, tmp_path: Path) -> None:
    # (click drops CSI sequences such as ESC[2K itself when stdout is not a terminal; OSC it keeps.)
    fake_model_server.reply("Done.\x1b]52;c;cm0gLXJmIH4=\x07 ok")
    result = hermes_chat("-q", "hi", env=chat_env(fake_model_server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Done.\x1b]52;c;cm0gLXJmIH4=\x07 ok\n"
