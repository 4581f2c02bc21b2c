"""Folder plugins for ``hermes plugin install|remove``: Hermes provider folders in HERMES_HOME/plugins/."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import HermesError
from ..home import HermesHome
from ..folder_plugins import is_folder_provider, is_general_plugin

__all__ = ["install_folder", "is_git_url", "remove_folder", "resolve_folder_spec"]

_GIT_URL = re.compile(r"^(git\+)?(https?|ssh|git|file)://|^git@|\.git/?$")
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$")
_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".git")


def is_git_url(spec: str) -> bool:
    """A git repository URL (``https://host/x.git``, ``git+https://...``, ``git@host:x``, ``file://...``)."""
    return bool(_GIT_URL.search(spec)) and not Path(spec).exists()


def _is_project(folder: Path) -> bool:
    return (folder / "pyproject.toml").is_file() or (folder / "setup.py").is_file()


def _clone(url: str, into: Path) -> Path:
    source = url[len("git+") :] if url.startswith("git+") else url
    ref = None
    if "@" in source.rsplit("/", 1)[-1]:  # git+https://host/repo.git@v1.2
        source, ref = source.rsplit("@", 1)
    dest = into / "clone"
    into.mkdir(parents=True, exist_ok=True)
    args = ["git", "clone", "--quiet", "--depth", "1", *(["--branch", ref] if ref else []), source, str(dest)]
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}  # fail instead of asking for a password
    try:
        result = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    except FileNotFoundError:
        raise HermesError("installing from a git URL needs git; install git and try again") from None
    except subprocess.TimeoutExpired:
        raise HermesError(f"git clone {source} took longer than 5 minutes; check the URL and the network") from None
    if result.returncode != 0:
        lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
        fatal = next((line for line in lines if line.startswith("fatal:")), lines[0] if lines else "")
        raise HermesError(f"git clone {source} failed: {fatal or f'exit code {result.returncode}'}")
    return dest


def resolve_folder_spec(spec: str, work: Path) -> Path | None:
    """The provider folder ``spec`` names (a clone under ``work`` for a git URL), or None for a pip spec."""
    path = Path(spec).expanduser()
    if path.is_dir():
        if _is_project(path):
            return None  # a Python project: pip installs it
        if not (is_folder_provider(path) or is_general_plugin(path)):
            raise HermesError(
                f"{spec} is neither a Hermes provider folder (an __init__.py defining a MemoryProvider), "
                "a Hermes Agent plugin folder (plugin.yaml + __init__.py) nor a Python project (pyproject.toml or setup.py)"
            )
        return path
    if not is_git_url(spec):
        return None
    clone = _clone(spec, work)
    if _is_project(clone):
        return None  # pip installs it from the URL
    if not (is_folder_provider(clone) or is_general_plugin(clone)):
        raise HermesError(
            f"{spec} holds neither a Hermes provider folder (an __init__.py defining a MemoryProvider), "
            "a Hermes Agent plugin folder (plugin.yaml + __init__.py) nor a Python project (pyproject.toml or setup.py)"
        )
    return clone


def _folder_name(folder: Path, url: str | None) -> str:
    from hermes.compat.hermes import read_manifest

    declared = str(read_manifest(folder).get("name") or "")
    if url is None:
        name = folder.resolve().name
    else:
        name = declared or re.sub(r"\.git$", "", url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].split("@")[0])
    if not _NAME.match(name):
        raise HermesError(f"cannot install a provider named {name!r}: use letters, digits, '-' or '_'")
    return name


def install_folder(folder: Path, home: HermesHome, *, replace: bool, url: str | None = None) -> tuple[str, Path]:
    """Copy ``folder`` to ``home``'s ``plugins/<name>/``; returns the name and the new folder.

    The copy is made beside the target and renamed into place, so a failure
    leaves the previous version (or nothing) and never half a folder.
    """
    name = _folder_name(folder, url)
    target = home.plugins_dir / name
    if target.exists() and not replace:
        raise HermesError(f"{target} already exists; use `hermes plugin install --upgrade` to replace it")
    home.plugins_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=home.plugins_dir))
    try:
        shutil.copytree(folder, staging / name, ignore=_SKIP)
        old = None
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{name}.old.", dir=home.plugins_dir))
            target.rename(old / name)
        (staging / name).rename(target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except OSError as exc:
        raise HermesError(f"cannot copy {folder} to {target}: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return name, target


def remove_folder(folder: Path, home: HermesHome) -> None:
    """Delete an installed provider folder (only one inside a plugins folder of this home)."""
    allowed = {home.plugins_dir.resolve(), (home.root / "plugins").resolve()}
    if folder.resolve().parent not in allowed:
        raise HermesError(f"{folder} is not inside {home.plugins_dir}; remove it by hand")
    try:
        shutil.rmtree(folder)
    except OSError as exc:
        raise HermesError(f"cannot remove {folder}: {exc.strerror or exc}") from None
