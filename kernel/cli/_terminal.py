"""Text bound for a terminal, with its control characters made visible.

Stored messages, tool outputs and model answers may carry escape sequences (a fetched page,
a hostile file, a model repeating either). Written raw, they can retitle the terminal, clear
or overwrite lines, hide text, or write the clipboard (OSC 52). Human output shows them in
caret notation (``ESC`` as ``^[``) the way ``cat -v`` does; ``--json`` keeps the exact text,
which JSON escapes anyway.
"""

from __future__ import annotations

import re
from typing import TextIO

__all__ = ["printable", "printable_for", "writable"]

# C0 controls but tab and newline, DEL, and the C1 controls (U+0080-U+009F; U+009B is a CSI).
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Lone UTF-16 surrogates (a JSON "\\ud800" decodes to one): no UTF-8 stream can write them.
_SURROGATES = re.compile("[\ud800-\udfff]")


def writable(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD, so any UTF-8 stream can take it."""
    return _SURROGATES.sub("\ufffd", text)


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return "^" + chr(code + 0x40)
    return "^?" if code == 0x7F else f"\\x{code:02x}"


def printable(text: str) -> str:
    """``text`` with every control character but tab and newline shown, never obeyed."""
    return _CONTROLS.sub(_visible, writable(text))


def printable_for(stream: TextIO, text: str) -> str:
    """``printable(text)`` when ``stream`` is a terminal; the exact text for a pipe or a file,
    where a script reads the answer as it was given."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return printable(text) if tty else writable(text)
