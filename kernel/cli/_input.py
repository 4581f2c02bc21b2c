"""What the user typed, before any request: one-shot prompts, attached files, size limits.

``-q -`` reads the prompt from standard input (so a 5 MB prompt never meets
the argument-list limit), and so does a bare ``hermes chat`` whose standard
input is a pipe or a file (``echo hi | hermes chat`` answers once, as shell
tools do); ``--repl`` asks for the REPL on such an input instead (scripted
sessions). ``--file PATH`` attaches a file, an empty prompt is
refused, and a message that cannot fit the model's context window is refused
with one line saying how large it is and what fits.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TextIO

from ..errors import HermesError

__all__ = ["InputError", "attach_file", "check_fits", "read_prompt"]

# Files larger than this are not read at all: no model window holds them.
MAX_FILE_BYTES = 8 * 1024 * 1024
# A piped prompt is read up to this many characters (``-q - < /dev/zero`` must end).
MAX_STDIN_CHARS = 64 * 1024 * 1024
# A rough, tokenizer-free estimate: about four characters a token.
CHARS_PER_TOKEN = 4


class InputError(HermesError):
    """The prompt cannot be sent as given."""

    exit_code = 2


def read_prompt(query: str | None, files: list[Path], stdin: TextIO | None = None, *, repl: bool = False) -> str | None:
    """The one-shot message from ``-q`` (``-`` reads stdin), ``--file`` or a piped stdin; None means the REPL."""
    stream = stdin or sys.stdin
    if repl:
        if query is not None or files:
            raise InputError("--repl starts the REPL; drop -q/--file to use it, or drop --repl to answer once")
        return None
    piped = query is None and not files and not _is_tty(stream)
    if query == "-" or piped:
        if query == "-" and _is_tty(stream):
            raise InputError("-q - reads the message from standard input; pipe it in (echo hi | hermes chat -q -)")
        try:
            query = stream.read(MAX_STDIN_CHARS + 1)
        except UnicodeDecodeError as exc:
            raise InputError(f"standard input is not UTF-8 text (byte {exc.start}); convert it first") from None
        if len(query) > MAX_STDIN_CHARS:
            raise InputError(
                f"standard input holds more than {MAX_STDIN_CHARS // 1_048_576}M characters, more than any model "
                "window; send a part of it"
            )
        if piped and not query.strip():
            raise InputError(
                "the message is empty: standard input is not a terminal, so hermes chat answers what is piped "
                "in (echo hi | hermes chat); pass --repl to read REPL lines from it instead"
            )
    if query is None and not files:
        return None
    parts = [query.strip()] if query and query.strip() else []
    parts += [attach_file(path) for path in files]
    if not parts:
        raise InputError("the message is empty; give text with -q TEXT, -q - (standard input) or --file PATH")
    return "\n\n".join(parts)


def _is_tty(stream: TextIO | None) -> bool:
    """A closed or missing standard input (``hermes chat <&-``) counts as a terminal: nothing to read."""
    if stream is None:
        return True
    try:
        return stream.isatty()
    except (ValueError, OSError):
        return True


def attach_file(path: Path) -> str:
    """The file as a fenced block naming it; one clear line when it cannot be read as text."""
    try:
        size = path.stat().st_size
        if path.is_dir():
            raise InputError(f"--file {path} is a folder; attach files one by one")
        if size > MAX_FILE_BYTES:
            raise InputError(
                f"--file {path} is {size / 1_048_576:.1f} MB, more than the {MAX_FILE_BYTES // 1_048_576} MB "
                "that can be attached; attach a part of it"
            )
        with path.open("rb") as handle:
            # Read at most one byte past the limit: /dev/zero, a FIFO or a growing log
            # report a size of 0 and would otherwise be read without end.
            data = handle.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise InputError(
                f"--file {path} holds more than the {MAX_FILE_BYTES // 1_048_576} MB that can be attached; "
                "attach a part of it"
            )
    except FileNotFoundError:
        raise InputError(f"--file {path} does not exist") from None
    except OSError as exc:
        raise InputError(f"cannot read --file {path}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"--file {path} is not UTF-8 text (byte {exc.start}); attach text files only") from None
    if "\x00" in text:
        raise InputError(f"--file {path} looks binary (it holds NUL bytes); attach text files only")
    return f'<file name="{path.name}">\n{text}\n</file>'


def check_fits(agent: Any, message: str) -> None:
    """Refuse, before any request, a message larger than the model's context window can take.

    The room is the window minus the answer's ``max_tokens`` (at most half the
    window: a small local window with a large max_tokens still takes messages);
    the history can be compressed, a single message cannot.
    """
    window = getattr(getattr(agent, "engine", None), "context_length", None)
    if not window:
        return
    room = int(window) - min(int(getattr(agent, "max_tokens", 0) or 0), int(window) // 2)
    estimate = len(message) // CHARS_PER_TOKEN
    if estimate > room:
        raise InputError(
            f"refused before sending: the message is about {estimate:,} tokens ({len(message):,} characters) "
            f"and the model's window leaves room for {max(room, 0):,}; send a shorter message or attach less"
        )
