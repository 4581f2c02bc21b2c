"""File-level helpers for the ``files`` toolset: checks with model-readable errors and atomic writes."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from hermes.kernel import ToolError, atomic_write

from ._common import is_binary

__all__ = ["as_file_bytes", "atomic_write_text", "check_readable_text_file", "read_text", "shown", "similar_names"]

# read_text keeps an undecodable byte B as the lone surrogate U+DC00+B (surrogateescape).
_ESCAPED = {0xDC00 + b: chr(b) for b in range(0x80, 0x100)}
_UNESCAPED = {b: chr(0xDC00 + b) for b in range(0x80, 0x100)}


def similar_names(path: Path, limit: int = 5) -> list[str]:
    """Names in ``path``'s folder that look like its name (for a 'did you mean')."""
    try:
        siblings = [p.name for p in path.parent.iterdir()]
    except OSError:
        return []
    return difflib.get_close_matches(path.name, siblings, n=limit, cutoff=0.6)


def check_readable_text_file(path: Path, shown: str) -> None:
    """Raise ToolError unless ``path`` is an existing, non-binary regular file."""
    if not path.exists():
        hint = similar_names(path)
        also = f" Similar names in that folder: {', '.join(hint)}." if hint else ""
        raise ToolError(
            f"{shown}: no such file.{also} Use search_files with target='files' to find the right path."
        )
    if path.is_dir():
        raise ToolError(f"{shown} is a directory, not a file; use search_files with target='files' to list it.")
    if not path.is_file():
        raise ToolError(f"{shown} is not a regular file (a device, socket or pipe); it cannot be read as text.")
    try:
        binary = is_binary(path)
    except PermissionError:
        raise ToolError(f"{shown}: permission denied.") from None
    if binary:
        size = path.stat().st_size
        raise ToolError(
            f"{shown} is a binary file ({size:,} bytes); these tools handle text only. "
            "Inspect it with the terminal tool instead (e.g. `file`, `xxd | head`)."
        )


def atomic_write_text(path: Path, text: str) -> int:
    """Write ``text`` (UTF-8, newlines as given) so readers never see half a file; returns bytes written.

    A symlink is followed (the link stays a link); an existing file keeps its
    permission bits; a new file gets the usual umask-derived mode.
    """
    target = path.resolve() if path.is_symlink() else path
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        # surrogateescape round-trips the undecodable bytes of a file read the same way.
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate from the model's JSON
        data = text.encode("utf-8", "replace")
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    atomic_write(target, data, mode=mode)
    return len(data)


def read_text(path: Path) -> str:
    """A text file's exact content: line endings kept, undecodable bytes preserved for write-back."""
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as fh:
        return fh.read()


def shown(text: str) -> str:
    """``text`` as the model reads it: each undecodable byte as its Latin-1 character.

    One code point per code point, so an index into the shown text is an index
    into ``text``; no lone surrogate ever reaches a request.
    """
    return text.translate(_ESCAPED) if any("\udc80" <= ch <= "\udcff" for ch in text) else text


def as_file_bytes(new: str, text: str) -> str:
    """``new`` ready to splice into ``text``: Latin-1 characters go back as single bytes in a Latin-1 file.

    A file whose every non-ASCII byte failed to decode as UTF-8 is Latin-1 (or
    a Windows code page); writing ``é`` there as two UTF-8 bytes would mix
    encodings. A mixed or UTF-8 file takes UTF-8.
    """
    non_ascii = [ch for ch in text if ord(ch) > 0x7F]
    if not non_ascii or not all("\udc80" <= ch <= "\udcff" for ch in non_ascii):
        return new
    return "".join(_UNESCAPED.get(ord(ch), ch) for ch in new)
