"""The MCP reference servers from npm, installed once into the test cache.

``server_command("filesystem", "/some/dir")`` is the command that runs
``@modelcontextprotocol/server-filesystem`` with Debian's ``node``. The
packages are installed with ``npm install --prefix`` into
``<cache>/npm`` (``HERMES_TEST_CACHE`` or ``~/.cache/hermes-kernel-tests``)
the first time a test needs them and reused afterwards; ``.ci/run`` runs
``python3 tests/npm_servers.py`` to do that before the suite. Without node or
npm, or when the install fails, the helper fails with one line saying what to
install: reference-server tests never skip silently.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["PACKAGES", "npm_dir", "server_command"]

# Pinned so every run tests the same servers; bump deliberately.
PACKAGES = {
    "filesystem": ("@modelcontextprotocol/server-filesystem", "2026.8.31"),
    "everything": ("@modelcontextprotocol/server-everything", "2026.8.31"),
}


class NpmUnavailable(RuntimeError):
    """node/npm missing or the install failed; the message says how to fix it."""


def npm_dir() -> Path:
    root = os.environ.get("HERMES_TEST_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "hermes-kernel-tests"
    )
    path = Path(root) / "npm"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _installed(root: Path, package: str, version: str) -> Path | None:
    """The entry script of ``package`` at ``version`` under ``root``, or None."""
    manifest = root / "node_modules" / package / "package.json"
    try:
        data = json.loads(manifest.read_text())
    except (OSError, ValueError):
        return None
    if data.get("version") != version:
        return None
    bins = data.get("bin")
    entry = next(iter(bins.values())) if isinstance(bins, dict) and bins else bins
    return manifest.parent / entry if isinstance(entry, str) else None


def ensure_installed() -> Path:
    """Install every pinned package into the cache (once; xdist workers share it)."""
    root = npm_dir()
    if all(_installed(root, *spec) for spec in PACKAGES.values()):
        return root
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise NpmUnavailable(f"{tool} is not installed; the MCP reference-server tests need it (apt-get install -y nodejs npm)")
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if all(_installed(root, *spec) for spec in PACKAGES.values()):
            return root
        wanted = [f"{name}@{version}" for name, version in PACKAGES.values()]
        proc = subprocess.run(
            ["npm", "install", "--prefix", str(root), "--no-audit", "--no-fund", "--loglevel=error", *wanted],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        if proc.returncode != 0 or not all(_installed(root, *spec) for spec in PACKAGES.values()):
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise NpmUnavailable(f"npm install {' '.join(wanted)} into {root} failed: {last}")
    return root


def server_command(name: str, *args: str) -> dict[str, object]:
    """A ``mcp.servers`` entry running reference server ``name`` (``filesystem``, ``everything``)."""
    package, version = PACKAGES[name]
    entry = _installed(ensure_installed(), package, version)
    assert entry is not None
    node = shutil.which("node")
    if node is None:
        raise NpmUnavailable("node is not installed (apt-get install -y nodejs)")
    return {"command": node, "args": [str(entry), *args]}


if __name__ == "__main__":
    try:
        print(f"npm servers ready in {ensure_installed()}")
    except NpmUnavailable as exc:
        print(f"ci: {exc}", file=sys.stderr)
        sys.exit(1)
