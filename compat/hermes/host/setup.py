"""What a provider's own setup wizard calls (Hermes's ``hermes_cli.memory_setup``,
``hermes_cli.secret_prompt``, ``hermes_cli.curses_ui``), and the snapshot that undoes a cancelled one.

Questions are plain lines on stdin (menus as numbered lists), so a wizard
runs the same in a terminal and under a script. End of input or Ctrl-C in
the middle raises KeyboardInterrupt, which no provider swallows;
:class:`HomeSnapshot` then puts every file of the home back as it was.
"""

from __future__ import annotations

import getpass
import sys
from pathlib import Path
from typing import Any

from hermes.kernel.config import set_dotenv_value

__all__ = [
    "CANCELLED", "HomeSnapshot", "curses_radiolist", "masked_secret_prompt", "print_cancelled_setup", "prompt",
    "select", "write_env_vars",
]  # fmt: skip

#: What a menu returns when the user backs out (Hermes's ``_CANCELLED``).
CANCELLED = -1


def _line(label: str) -> str:
    sys.stdout.write(label)
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:  # end of input halfway through: the same as Ctrl-C
        raise KeyboardInterrupt
    return line.strip()


def masked_secret_prompt(label: str) -> str:
    """A secret, not echoed in a terminal (read as a plain line from a pipe)."""
    if sys.stdin.isatty():
        try:
            return getpass.getpass(label).strip()
        except EOFError:
            raise KeyboardInterrupt from None
    return _line(label)


def prompt(label: str, default: str | None = None, secret: bool = False) -> str:
    """One answer; Enter gives ``default``."""
    suffix = f" [{default}]" if default else ""
    text = f"  {label}{suffix}: "
    answer = masked_secret_prompt(text) if secret else _line(text)
    return answer or (default or "")


def curses_radiolist(title: str, items: list[str], selected: int = 0, cancel_returns: int | None = None) -> int:
    """The index of the chosen item: a numbered list, Enter keeps ``selected``, ``q`` backs out."""
    sys.stdout.write(f"{title}\n")
    for number, item in enumerate(items, 1):
        sys.stdout.write(f"  {number}. {item}{' (current)' if number - 1 == selected else ''}\n")
    while True:
        answer = _line(f"  choose 1-{len(items)} (Enter: {selected + 1}, q: cancel): ").lower()
        if answer in ("q", "quit"):
            if cancel_returns is None:
                raise KeyboardInterrupt
            return cancel_returns
        if not answer:
            return selected
        if answer.isdigit() and 1 <= int(answer) <= len(items):
            return int(answer) - 1
        sys.stdout.write(f"  {answer!r} is not one of 1-{len(items)}\n")


def select(title: str, items: list[tuple[str, str]], default: int = 0, *, cancel_returns: int | None = None) -> int:
    """A menu of ``(label, description)`` pairs (Hermes's ``_curses_select``)."""
    labels = [f"{label} - {description}" if description else label for label, description in items]
    return curses_radiolist(title, labels, selected=default, cancel_returns=cancel_returns)


def print_cancelled_setup() -> None:
    print("\n  Cancelled. No changes saved.\n")


def write_env_vars(env_path: Any, env_writes: dict[str, str]) -> None:
    """Set each ``NAME=value`` in the ``.env`` file (0600), keeping its other lines."""
    for name, value in env_writes.items():
        set_dotenv_value(Path(env_path), name, str(value))


#: Files a wizard never writes and that can be large: not copied into the snapshot.
_SKIP = ("state.db", "logs", "sessions", "results", "profiles", "plugins", "skills", "hermes-kernel")
_LIMIT = 4 * 1024 * 1024


class HomeSnapshot:
    """The files of a home (and one folder level down) before a wizard runs, to undo a cancelled one."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.files: dict[Path, tuple[bytes, int]] = {}
        self.folders: set[Path] = set()
        for path in self._walk():
            if path.is_dir():
                self.folders.add(path)
            elif (info := path.stat()).st_size <= _LIMIT:
                self.files[path] = (path.read_bytes(), info.st_mode & 0o777)

    def _walk(self) -> list[Path]:
        found: list[Path] = []
        if not self.home.is_dir():
            return found
        for child in self.home.iterdir():
            if child.name.startswith(_SKIP) or child.is_symlink():
                continue
            found.append(child)
            if child.is_dir():
                found += [grand for grand in child.iterdir() if not grand.is_symlink()]
        return found

    def restore(self) -> None:
        """Put back every file as it was; remove what the wizard added."""
        from hermes.kernel.home import atomic_write

        for path in self._walk():
            if path.is_file() and path not in self.files:
                path.unlink()
        for path, (data, mode) in self.files.items():
            if not path.is_file() or path.read_bytes() != data:
                atomic_write(path, data, mode=mode)
        for path in sorted(self._walk(), reverse=True):
            if path.is_dir() and path not in self.folders and not any(path.iterdir()):
                path.rmdir()
