"""Reviewing a compaction's handoff note in the REPL before the session rotates."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ._lines import read_line

__all__ = ["review_compression"]


def _read(prompt: str) -> str:
    return read_line(prompt)


def _edit(note: str) -> str | None:
    """The note after ``$EDITOR`` (or ``$VISUAL``, else ``vi``) ran on it; None when the editor failed."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.TemporaryDirectory(prefix="hermes-handoff-") as folder:
        path = Path(folder) / "handoff.md"
        path.write_text(note + "\n", encoding="utf-8")
        try:
            code = subprocess.call([*shlex.split(editor), str(path)])
        except (OSError, ValueError) as exc:
            print(f"could not start the editor {editor!r} ({exc}); set $EDITOR to one that exists", file=sys.stderr)
            return None
        if code != 0:
            print(f"the editor {editor!r} exited with {code}; the note is unchanged", file=sys.stderr)
            return None
        return path.read_text(encoding="utf-8")


def review_compression(note: str, fidelity: dict[str, Any] | None) -> tuple[str, str | None]:
    """Show the note and its fidelity; the user accepts, edits (in ``$EDITOR``) or cancels."""
    from ..agent.compaction import fidelity_line

    print("\n--- handoff note (the compacted context continues from it) ---", file=sys.stderr)
    print(note.strip() or "(no note: the engine only shortened old tool outputs)", file=sys.stderr)
    print("--- end of note ---", file=sys.stderr)
    line = fidelity_line(fidelity)
    if line:
        print(line, file=sys.stderr)
    while True:
        try:
            answer = _read("[a]ccept, [e]dit in $EDITOR, or [c]ancel and keep the old context? ").strip().lower()
        except EOFError:
            return "cancel", None
        if answer in ("a", "accept", "y", "yes", ""):
            return "accept", None
        if answer in ("c", "cancel", "n", "no"):
            return "cancel", None
        if answer in ("e", "edit"):
            edited = _edit(note)
            if edited is not None:
                return "edit", edited
            continue
        print("answer a, e or c", file=sys.stderr)
