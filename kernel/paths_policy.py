"""Where file tools may read and write.

* Inside the workspace roots (the working directory plus ``tools.allowed_paths``) the file
  tools work freely. Saved tool outputs (``HERMES_HOME/results``) are readable too, since the
  kernel itself tells the model to read them.
* Outside them a read or a write needs approval (``ToolContext.approve``): the REPL asks, a
  one-shot run refuses with a message the model can act on, ``--yolo`` approves.
* The deny list (SSH and GPG keys, ``.netrc``, ``.pgpass``, git and cloud credentials,
  ``HERMES_HOME``'s own secrets, ``/etc/shadow``, ``/etc/sudoers``; ``/etc/passwd`` for
  writes) is refused whatever the approval mode.
* ``HERMES_HOME``'s secrets are ``.env`` (and ``.env.*``), ``config.yaml`` (it holds the
  server's key hashes) and its migration backups, ``auth.json``, ``serve_secret`` and key
  files (``*.key``, ``*.pem``, ``*secret*``, ``*.bak``), in HERMES_HOME itself, in every profile and in their ``hermes-kernel/``
  folders. Names are compared case-insensitively (``.ENV`` on a case-insensitive disk is
  ``.env``), and a file that *is* one of them (same device and inode: a hard link, a bind
  mount, ``/proc/self/root/…``, ``/proc/self/fd/N``) is denied under any name.

Symlinks and ``..`` are resolved before any check, and both the spelled and the resolved
path must pass the deny list. :func:`command_denied_reason` applies the same list to the
paths a shell command names (the ``terminal`` tool's reads, where the parser can see them).
This is a guard against a model's mistakes and a hostile file's suggestions, not a sandbox.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from .home import hermes_root
from .tools import ToolContext, ToolError

__all__ = [
    "DENIED_HOME_DIRS",
    "DENIED_HOME_FILES",
    "HERMES_SECRET_NAMES",
    "check_no_markers",
    "check_path",
    "command_denied_reason",
    "denied_inside",
    "denied_reason",
    "is_hermes_secret_name",
    "is_inside",
    "workspace_roots",
]

# Relative to the user's home: every file below these folders is denied.
DENIED_HOME_DIRS = (".ssh", ".gnupg", ".config/gcloud", ".azure", ".password-store")
# Relative to the user's home: these files are denied.
DENIED_HOME_FILES = (
    ".netrc", ".pgpass", ".git-credentials", ".aws/credentials", ".aws/config", ".kube/config",
    ".docker/config.json", ".npmrc", ".pypirc", ".config/gh/hosts.yml",
)
# System files: denied for reads and writes, or for writes only.
_DENIED_SYSTEM = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/master.passwd")
_DENIED_SYSTEM_DIRS = ("/etc/sudoers.d",)
_DENIED_SYSTEM_WRITES = ("/etc/passwd", "/etc/group")
# In HERMES_HOME, every profile in it and their hermes-kernel/ folders (globs, compared casefolded).
# ``config.yaml.*`` and ``*.bak``: the backups a config migration leaves beside the file hold the same keys.
HERMES_SECRET_NAMES = (".env", ".env.*", "config.yaml", "config.yaml.*", "config.yml", "config.yml.*", "auth.json",
                       "auth.json.*", "serve_secret*", "*.key", "*.pem", "*secret*", "*.bak")  # fmt: skip
_SECRET_INODES_TTL_S = 1.0
_secret_inodes_cache: dict[str, tuple[float, frozenset[tuple[int, int]]]] = {}

_APPROVED_KEY = "approved_paths"  # ctx.state: paths the user already approved this session


def is_inside(path: Path, root: Path) -> bool:
    """True when ``path`` is ``root`` or below it, compared part by part.

    Never by string prefix: ``/tmp/ws-evil`` starts with ``/tmp/ws`` but is its sibling.
    Both paths should already be absolute and resolved.
    """
    return path == root or root in path.parents


@lru_cache(maxsize=16)
def _real(path: str) -> Path:
    """``realpath`` of a folder the policy compares against, cached (search_files asks per file)."""
    return Path(os.path.realpath(path))


def _home() -> Path:
    return _real(str(Path.home()))


def denied_reason(path: Path, *, write: bool, hermes_home: Path | None = None) -> str | None:
    """Why ``path`` (absolute) is on the deny list, or None."""
    home = _home()
    for name in DENIED_HOME_DIRS:
        if is_inside(path, home / name):
            return f"~/{name} holds keys or credentials"
    for name in DENIED_HOME_FILES:
        if path == home / name:
            return f"~/{name} holds credentials"
    text = str(path)
    if text in _DENIED_SYSTEM or any(is_inside(path, Path(d)) for d in _DENIED_SYSTEM_DIRS):
        return f"{text} is a system security file"
    if write and text in _DENIED_SYSTEM_WRITES:
        return f"{text} is a system account file"
    root = _real(str(hermes_home or hermes_root()))
    if is_hermes_secret_name(path.name) and _is_home_folder(path.parent, root):
        return f"{path.name} in HERMES_HOME holds the agent's own keys or settings"
    if _same_file_as_secret(path, root):
        return "it is one of HERMES_HOME's secret files (.env, config.yaml, auth.json, keys) under another name"
    return None


def denied_inside(folder: Path, *, hermes_home: Path | None = None) -> str | None:
    """Why reading every file under ``folder`` (absolute, resolved) would read a deny-listed path, or None.

    ``tar c ~``, ``grep -r x /`` and ``cp -r ~ backup`` name no secret, yet read every one.
    """
    home = _home()
    for name in DENIED_HOME_DIRS + DENIED_HOME_FILES:
        if is_inside(home / name, folder):
            return f"it holds ~/{name}"
    for name in _DENIED_SYSTEM + _DENIED_SYSTEM_DIRS:
        if is_inside(Path(name), folder):
            return f"it holds {name}"
    root = _real(str(hermes_home or hermes_root()))
    if is_inside(root, folder):
        return f"it holds HERMES_HOME ({root}) and the agent's own keys"
    if folder in _HOMES_PARENTS or folder.parent in _HOMES_PARENTS[1:]:
        return "it holds users' home folders and their keys"
    return None


_HOMES_PARENTS = (Path("/"), Path("/home"), Path("/Users"), Path("/root"))


def is_hermes_secret_name(name: str) -> bool:
    """True for the names of HERMES_HOME's secret files, in any letter case."""
    folded = name.casefold()
    return any(fnmatch.fnmatchcase(folded, pattern) for pattern in HERMES_SECRET_NAMES)


def _home_folders(root: Path) -> list[Path]:
    """HERMES_HOME, each profile, and their ``hermes-kernel`` folders (where secret files live)."""
    folders = [root, root / "hermes-kernel"]
    profiles = root / "profiles"
    try:
        children = sorted(profiles.iterdir()) if profiles.is_dir() else []
    except OSError:
        children = []
    for child in children:
        folders += [child, child / "hermes-kernel"]
    return folders


def _is_home_folder(folder: Path, root: Path) -> bool:
    text, base = str(folder).casefold(), str(root).casefold()
    if text in (base, f"{base}/hermes-kernel"):
        return True
    rest = text[len(base) + 1 :] if text.startswith(base + "/") else ""
    parts = rest.split("/")
    return len(parts) in (2, 3) and parts[0] == "profiles" and (len(parts) == 2 or parts[2] == "hermes-kernel")


def _secret_inodes(root: Path, *, fresh: bool = False) -> frozenset[tuple[int, int]]:
    """(device, inode) of every secret file in HERMES_HOME's folders, re-read at most once a second (or now)."""
    now = time.monotonic()
    cached = _secret_inodes_cache.get(str(root))
    if not fresh and cached is not None and now - cached[0] < _SECRET_INODES_TTL_S:
        return cached[1]
    found: set[tuple[int, int]] = set()
    for folder in _home_folders(root):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if is_hermes_secret_name(entry.name):
                try:
                    info = os.stat(entry.path)
                except OSError:
                    continue
                found.add((info.st_dev, info.st_ino))
    inodes = frozenset(found)
    _secret_inodes_cache[str(root)] = (now, inodes)
    return inodes


def _same_file_as_secret(path: Path, root: Path) -> bool:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return False
    key = (info.st_dev, info.st_ino)
    # A hit is confirmed on a fresh scan: secrets are replaced atomically (auth.json on every
    # lease), and the inode a replaced one freed is soon handed to an ordinary new file.
    return key in _secret_inodes(root) and key in _secret_inodes(root, fresh=True)


# Words of a command that may name a file: the whole word, the value of --opt=VALUE, quoted strings in code.
_QUOTED_RE = re.compile(r"""(['"])([^'"\s]{1,4096})\1""")
_GLOB_CHARS = re.compile(r"[*?\[]")


def _candidates(word: str) -> list[str]:
    found = [word]
    if "=" in word:
        found.append(word.split("=", 1)[1])
    found += [m.group(2) for m in _QUOTED_RE.finditer(word)]
    return [c for c in found if c and len(c) < 4096]


_FOLDER_READERS = frozenset({"rg", "ag", "ack", "tar", "zip", "7z", "rsync", "scp"})


def _reads_folders(argv: list[str]) -> bool:
    """A command that reads every file under a folder it is given (``grep -r``, ``rg``, ``tar``, ``cp -r`` …)."""
    name, flags = argv[0], [a for a in argv[1:] if a.startswith("-")]
    if name in _FOLDER_READERS:
        return True
    short = "".join(f[1:] for f in flags if not f.startswith("--"))
    if name in ("grep", "egrep", "fgrep"):
        return "r" in short or "R" in short or any(f.startswith(("--recursive", "--dereference-recursive")) for f in flags)
    if name == "cp":
        return any(c in short for c in "rRa") or "--recursive" in flags or "--archive" in flags
    return name == "find" and any(a in ("-exec", "-execdir", "-ok", "-okdir") for a in argv)


def command_denied_reason(command: str, cwd: Path, *, hermes_home: Path | None = None, recursive: bool = False) -> str | None:
    """Why a shell command names a path on the deny list (as a reader would see it), or None.

    Every word of every simple command the parser finds (arguments, redirection targets,
    ``--opt=VALUE`` values, quoted strings inside ``python -c`` code), with ``~`` and
    environment variables expanded and globs matched, resolved against the working folder
    and each folder a ``cd`` in the command names. It cannot see paths built at run time.
    With ``recursive`` (a server), a command that reads a whole folder (``grep -r``, ``rg``,
    ``tar``, ``cp -r``, ``find -exec``) holding a deny-listed path (HERMES_HOME, ``~/.ssh``, a
    home folder) is denied too: nobody is there to approve it, and no allow-list pattern opens it.
    """
    from .shell import simple_commands

    parsed = simple_commands(command)
    folders = [Path(cwd)]
    for item in parsed:
        if item.name in ("cd", "pushd") and len(item.argv) > 1:
            target = Path(os.path.expanduser(os.path.expandvars(item.argv[1])))
            folders.append(target if target.is_absolute() else Path(cwd) / target)
        elif item.name in ("cd", "pushd"):
            folders.append(Path.home())
    for item in parsed:
        words = item.argv[1:] + item.writes + item.reads
        if recursive and item.argv and _reads_folders(item.argv):
            for word in [*item.argv[1:], "."]:  # "." : with no folder given, most of them read the working one
                expanded = os.path.expanduser(os.path.expandvars(word))
                for folder in folders:
                    full = Path(os.path.realpath(expanded if os.path.isabs(expanded) else os.path.join(folder, expanded)))
                    if full.is_dir() and (held := denied_inside(full, hermes_home=hermes_home)):
                        return f"{word}: reading it whole reads {held.removeprefix('it holds ')}"
        for word in words:
            for candidate in _candidates(word):
                expanded = os.path.expanduser(os.path.expandvars(candidate))
                for folder in folders:
                    full = expanded if os.path.isabs(expanded) else os.path.join(folder, expanded)
                    matches = glob.glob(full)[:200] if _GLOB_CHARS.search(full) else [full]
                    for match in matches:
                        spelled = Path(os.path.abspath(match))
                        for path in (spelled, Path(os.path.realpath(match))):
                            reason = denied_reason(path, write=False, hermes_home=hermes_home)
                            if reason is not None:
                                return f"{candidate}: {reason}"
    return None


def _setting_paths(config: Any) -> list[str]:
    value = config.get("tools.allowed_paths", []) if config is not None and hasattr(config, "get") else []
    if isinstance(value, str):
        value = [value]
    return [str(v) for v in value or [] if v]


def workspace_roots(ctx: ToolContext) -> list[Path]:
    """The working directory and ``tools.allowed_paths``, each resolved."""
    roots = [Path(os.path.realpath(ctx.cwd))]
    for raw in _setting_paths(ctx.config):
        path = Path(os.path.expanduser(raw))
        if not path.is_absolute():
            path = Path(ctx.cwd) / path
        roots.append(Path(os.path.realpath(path)))
    return roots


def _read_roots(ctx: ToolContext) -> list[Path]:
    results = getattr(ctx.home, "results_dir", None)
    return [Path(os.path.realpath(results))] if results is not None else []


def check_path(ctx: ToolContext, path: Path, raw: str, *, write: bool) -> None:
    """Raise ToolError unless a file tool may read (or ``write``) ``path`` (``raw`` as the model gave it)."""
    spelled = Path(os.path.abspath(path))
    resolved = Path(os.path.realpath(path))
    hermes_home = getattr(ctx.home, "root", None)
    for candidate in (spelled, resolved):
        reason = denied_reason(candidate, write=write, hermes_home=hermes_home)
        if reason is not None:
            raise ToolError(
                f"{raw}: access denied: {reason}. This path is never open to the agent, not even with "
                "approval; do not try to reach it another way. Ask the user to do it themselves if it is needed."
            )
    roots = workspace_roots(ctx) + ([] if write else _read_roots(ctx))
    if any(is_inside(resolved, root) for root in roots):
        return
    verb = "write" if write else "read"
    approved: set[tuple[str, bool]] = ctx.state.setdefault(_APPROVED_KEY, set())
    if (str(resolved), write) in approved or (write is False and (str(resolved), True) in approved):
        return
    reason = f"{verb} outside the workspace ({roots[0]})"
    if ctx.approve is None:
        raise ToolError(
            f"{raw} ({resolved}) is outside the workspace ({', '.join(map(str, roots))}); to {verb} it needs "
            "the user's approval, which cannot be asked in a one-shot run. Work with files inside the "
            "workspace, or tell the user to add the folder with `hermes config set tools.allowed_paths "
            "'[FOLDER]'` (or to rerun with --yolo)."
        )
    if not ctx.ask_approval(f"{verb} {resolved}", reason):
        raise ToolError(
            f"the user declined to let you {verb} {raw} (outside the workspace). Do not retry it; "
            "work inside the workspace or ask the user how to proceed."
        )
    approved.add((str(resolved), write))


def check_no_markers(path: Path, text: str, raw: str) -> None:
    """Refuse to write redaction markers (``[REDACTED:openai-key]``) into ``path``.

    The model sees secrets as markers; writing them back would replace the real keys in the
    file. Markers the file already holds (a document about redaction) may stay.
    """
    from .redact import MARKER_RE

    found = set(MARKER_RE.findall(text))
    if not found:
        return
    try:
        existing = set(MARKER_RE.findall(path.read_text(encoding="utf-8", errors="replace")))
    except OSError:
        existing = set()
    new = sorted(found - existing)
    if new:
        raise ToolError(
            f"{raw}: the text holds {', '.join(new)}, a redaction marker standing for a secret you were not "
            "shown; writing it would replace the real value. Leave those lines out (edit around them with "
            "patch), or ask the user to change the secret themselves."
        )
