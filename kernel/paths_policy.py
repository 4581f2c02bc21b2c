"""Where file tools may read and write.

* Inside the workspace roots (the working directory plus ``tools.allowed_paths``) the file
  tools work freely. Saved tool outputs (``HERMES_HOME/results``) are readable too, since the
  kernel itself tells the model to read them.
* Outside them a read or a write needs approval (``ToolContext.approve``): the REPL asks, a
  one-shot run refuses with a message the model can act on, ``--yolo`` approves.
* The deny list (SSH and GPG keys, ``.netrc``, ``.pgpass``, git and cloud credentials,
  ``HERMES_HOME/.env`` and ``auth.json``, ``/etc/shadow``, ``/etc/sudoers``; ``/etc/passwd``
  for writes) is refused whatever the approval mode.

Symlinks and ``..`` are resolved before any check, and both the spelled and the resolved
path must pass the deny list. This is a guard against a model's mistakes and a hostile
file's suggestions, not a sandbox.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from .home import hermes_root
from .tools import ToolContext, ToolError

__all__ = [
    "DENIED_HOME_DIRS",
    "DENIED_HOME_FILES",
    "check_no_markers",
    "check_path",
    "denied_reason",
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
# In HERMES_HOME and every profile in it.
_HERMES_SECRETS = (".env", "auth.json")

_APPROVED_KEY = "approved_paths"  # ctx.state: paths the user already approved this session


def _inside(path: Path, root: Path) -> bool:
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
        if _inside(path, home / name):
            return f"~/{name} holds keys or credentials"
    for name in DENIED_HOME_FILES:
        if path == home / name:
            return f"~/{name} holds credentials"
    text = str(path)
    if text in _DENIED_SYSTEM or any(_inside(path, Path(d)) for d in _DENIED_SYSTEM_DIRS):
        return f"{text} is a system security file"
    if write and text in _DENIED_SYSTEM_WRITES:
        return f"{text} is a system account file"
    root = _real(str(hermes_home or hermes_root()))
    if path.name in _HERMES_SECRETS and (path.parent == root or path.parent.parent == root / "profiles"):
        return f"{path.name} in HERMES_HOME holds the agent's own keys"
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
    if any(_inside(resolved, root) for root in roots):
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
    if not ctx.approve(f"{verb} {resolved}", reason):
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
