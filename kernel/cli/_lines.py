"""Lines the person types, read from the standard input descriptor with an optional deadline.

Python's ``sys.stdin`` reads a pipe ahead into a buffer that ``select`` cannot see, so a
deadline could not be kept on it; :class:`StdinLines` keeps what it read ahead itself, and on a
pipe every line the REPL reads comes through it. A terminal hands over one line per read, so
nothing is read ahead of ``input()``, which keeps readline's editing for the REPL's messages.
"""

from __future__ import annotations

import os
import select
import sys
import time

__all__ = ["STDIN", "StdinLines", "read_line"]


def _is_tty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


class StdinLines:
    """Lines of a descriptor (standard input), each read with an optional deadline."""

    def __init__(self, fd: int = 0) -> None:
        self.fd = fd
        self._buffer = b""

    @property
    def is_tty(self) -> bool:
        return _is_tty(self.fd)

    def readline(self, timeout: float | None = None) -> str | None:
        """The next line with its newline; ``""`` at end of input; None when ``timeout`` passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buffer:
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                return None
            if not self._readable(wait):
                continue
            try:
                chunk = os.read(self.fd, 65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:  # a closed or unusable descriptor is the end of input
                chunk = b""
            if not chunk:  # end of input (Ctrl-D on a terminal: this line only, never latched)
                break
            self._buffer += chunk
        line, newline, self._buffer = self._buffer.partition(b"\n")
        return (line + newline).decode("utf-8", "replace")

    def _readable(self, wait: float | None) -> bool:
        try:
            return bool(select.select([self.fd], [], [], wait)[0])
        except (OSError, ValueError):  # not selectable: read and block
            return True

    def discard_typeahead(self) -> None:
        """Forget keys typed on a terminal before a question appeared (a pipe keeps its lines)."""
        if not self.is_tty:
            return
        try:
            import termios

            termios.tcflush(self.fd, termios.TCIFLUSH)
        except (ImportError, OSError):  # pragma: no cover - not POSIX
            pass


#: Standard input, shared by the REPL's prompt and its questions (one buffer for both).
STDIN = StdinLines(0)


def read_line(prompt: str) -> str:
    """One line the person types after ``prompt`` (``input()``'s contract: EOFError at end of input).

    A terminal gets ``input()`` with readline's line editing and history; a pipe is read
    through :class:`StdinLines`, which questions share.
    """
    if STDIN.is_tty:
        try:
            import readline  # noqa: F401  # line editing and history where available
        except ImportError:  # pragma: no cover - not on every platform
            pass
        return input(prompt)
    sys.stdout.write(prompt)
    sys.stdout.flush()
    line = STDIN.readline()
    if not line:
        raise EOFError
    return line[:-1] if line.endswith("\n") else line
