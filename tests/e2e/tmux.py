"""A real terminal for REPL tests: one command in a tmux pane, keys sent to it, its screen read back.

Each :class:`TmuxPane` starts a tmux server of its own (a private socket), so tests never meet
each other's or the user's sessions, and :meth:`TmuxPane.close` stops only that server. The
pane stays on screen after the command exits (``remain-on-exit``) so its last screen and exit
status can be read.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

__all__ = ["TmuxPane", "tmux_available"]

_CONFIG = "set -g remain-on-exit on\nset -g history-limit 20000\nset -g status off\n"


def tmux_available() -> bool:
    return shutil.which("tmux") is not None


class TmuxPane:
    """``command`` running in a ``width`` x ``height`` terminal, with exactly the environment ``env``."""

    def __init__(self, command: Sequence[str], *, env: Mapping[str, str], cwd: Path, folder: Path,
                 width: int = 200, height: int = 50) -> None:  # fmt: skip
        if not tmux_available():
            raise RuntimeError("these tests need tmux (apt-get install tmux); .ci/run installs it")
        folder.mkdir(parents=True, exist_ok=True)
        self.socket = f"hermes-test-{uuid.uuid4().hex[:12]}"
        config = folder / "tmux.conf"
        config.write_text(_CONFIG)
        # The pane's environment is exactly env: a script sets it, then runs the command.
        script = folder / "run.sh"
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items() if k.isidentifier())
        script.write_text(f"#!/bin/sh\n{exports}cd {shlex.quote(str(cwd))}\nexec {shlex.join(command)}\n")
        script.chmod(0o700)
        self._tmux("-f", str(config), "new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height),
                   f"env -i /bin/sh {shlex.quote(str(script))}")  # fmt: skip

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=30,
                              env={**os.environ, "TMUX": ""})  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout

    def type(self, text: str, *, enter: bool = True) -> None:
        """Type ``text`` literally (then Enter)."""
        if text:
            self._tmux("send-keys", "-t", "t", "-l", text)
        if enter:
            self.keys("Enter")

    def keys(self, *names: str) -> None:
        """Press named keys: ``Enter``, ``C-c``, ``C-d``."""
        self._tmux("send-keys", "-t", "t", *names)

    def screen(self) -> str:
        """Everything the terminal shows, scrollback included, wrapped lines joined."""
        return self._tmux("capture-pane", "-p", "-J", "-t", "t", "-S", "-")

    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen().splitlines()]

    def wait_for(self, condition: str | Callable[[str], bool], timeout: float = 60.0) -> str:
        """The screen once it shows ``condition`` (a text, or a test of the screen)."""
        test = (lambda screen: condition in screen) if isinstance(condition, str) else condition
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if test(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {condition!r}; the screen shows:\n{screen}")
            time.sleep(0.1)

    def exit_status(self, timeout: float = 60.0) -> int:
        """The command's exit status, once it has exited."""
        deadline = time.monotonic() + timeout
        while True:
            parts = self._tmux("display-message", "-p", "-t", "t", "#{pane_dead} #{pane_dead_status}").split()
            if parts and parts[0] == "1":
                return int(parts[1]) if len(parts) > 1 else 0
            if time.monotonic() > deadline:
                raise AssertionError(f"the command did not exit; the screen shows:\n{self.screen()}")
            time.sleep(0.1)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=30)
