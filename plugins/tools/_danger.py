"""The dangerous-command check of the ``terminal`` tool: a table of patterns, each with its reason.

A match does not forbid a command: the REPL asks the user (``ctx.approve``),
one-shot mode denies it. So the table errs towards asking, and only names
commands whose damage is wide or hard to undo. It is a guard against a model's
mistake, not a sandbox: a determined command can always be disguised.
"""

from __future__ import annotations

import re

__all__ = ["DANGEROUS_PATTERNS", "dangerous_reason"]

# Where a command word can start: the beginning, after a separator or an
# opening quote/paren/backtick/$( (a nested `bash -c "..."`), optionally
# behind sudo/exec/xargs/env and their flags.
_START = r"(?:^|[;&|(`\n\"']|\$\()\s*(?:(?:sudo|doas|exec|xargs|env|nohup|time|command)\s+(?:-\S+\s+)*)*"
# The rest of one simple command (no separator crossed).
_REST = r"[^;&|\n]*"
# Arguments that mean "everything": /, ~, $HOME, bare globs, and top-level system folders.
_EVERYTHING = (
    r"(?:/\*?|~/?\*?|\$\{?HOME\}?/?\*?|\*|\.\*|\./\*|\.\./?\*?"
    r"|/(?:bin|boot|dev|etc|home|lib|lib64|opt|proc|root|sbin|srv|sys|usr|var|Users|System|Library)/?\*?)"
)
_ARG_END = r"[\"']?(?=\s|$|[;&|)`])"
_RECURSIVE = r"(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)"

DANGEROUS_PATTERNS: list[tuple[str, str]] = [
    (
        rf"{_START}rm\b(?={_REST}\s{_RECURSIVE}\b)(?={_REST}\s[\"']?{_EVERYTHING}{_ARG_END})",
        "recursive delete of the root, home or a system folder, or of everything a glob matches",
    ),
    (r"--no-preserve-root\b", "disables rm's protection of the root folder"),
    (rf"{_START}(?:mkfs(?:\.\w+)?|mke2fs|mkswap|wipefs)\b", "formats or wipes a file system"),
    (rf"{_START}dd\b{_REST}\bof=/dev/(?!null\b|zero\b|stdout\b|stderr\b)", "dd writes straight onto a device"),
    (
        r">\s*/dev/(?:sd[a-z]|nvme\d|hd[a-z]|vd[a-z]|xvd[a-z]|mmcblk\d|disk\d|md\d|dm-\d|mapper/)",
        "overwrites a block device",
    ),
    (rf"{_START}(?:shred|tee)\b{_REST}\s/dev/(?:sd|nvme|hd|vd|xvd|mmcblk|disk)", "overwrites a block device"),
    (r"(\w+|:)\s*\(\)\s*\{[^}]*\1\s*\|\s*\1\s*&", "a fork bomb: it exhausts the machine's processes"),
    (
        rf"{_START}(?:chmod|chown|chgrp)\b(?={_REST}\s{_RECURSIVE}\b)(?={_REST}\s[\"']?{_EVERYTHING}{_ARG_END})",
        "recursive permission or owner change on the root, home or a system folder",
    ),
    (
        r"\b(?:curl|wget|fetch)\b[^;&\n]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:ba|z|da|k|fi)?sh\b",
        "runs a script downloaded from the network without reading it",
    ),
    (
        r"\b(?:ba|z|da|k)?sh\b[^;&|\n]*(?:<\(|\$\(|`)\s*(?:curl|wget|fetch)\b",
        "runs a script downloaded from the network without reading it",
    ),
    (
        rf"{_START}(?:shutdown|reboot|halt|poweroff)\b|{_START}init\s+[06]\b|\bsystemctl\s+(?:reboot|poweroff|halt|kexec)\b",
        "shuts down or reboots the machine",
    ),
    (rf"{_START}(?:kill|pkill)\s+(?:-\S+\s+)*-1\b|{_START}killall5\b", "kills every process the user owns"),
    (
        rf"{_START}git\b(?={_REST}\bpush\b)(?={_REST}\s(?:--force\b|--force-with-lease\b|-f\b|\+))(?={_REST}\b(?:main|master)\b)",
        "force-pushes to main/master, rewriting shared history",
    ),
    (r">\s*/etc/(?:passwd|shadow|group|sudoers|fstab)\b", "overwrites a critical system file"),
    (rf"{_START}mv\b{_REST}\s[\"']?{_EVERYTHING}[\"']?\s+/dev/null\b", "moves a whole tree into /dev/null"),
    (rf"{_START}find\s+[\"']?(?:/|~|\$HOME)[\"']?\s{_REST}-delete\b", "deletes files across the root or home folder"),
    (rf"{_START}crontab\s+(?:-\S+\s+)*-r\b", "removes every scheduled cron job of the user"),
]

_COMPILED = [(re.compile(pattern), reason) for pattern, reason in DANGEROUS_PATTERNS]


def dangerous_reason(command: str) -> str | None:
    """Why ``command`` needs the user's approval, or None when it looks safe."""
    # Line continuations would otherwise split one command across the table's
    # single-command patterns.
    flat = command.replace("\\\n", " ")
    for regex, reason in _COMPILED:
        if regex.search(flat):
            return reason
    return None
