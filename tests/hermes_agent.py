"""Real Hermes Agent releases from PyPI, for tests that need files Hermes Agent itself wrote.

Each release is downloaded once (``pip download --no-deps``) into a cache shared
between runs and unpacked with ``pip install --no-deps --target``, never into
the suite's environment: its console script would replace ``hermes``. Its own
modules (``hermes_state``, ``hermes_cli``) then run in a subprocess with the
release on ``PYTHONPATH`` and ``HERMES_HOME`` pointing at the test's home.
A release that cannot be had fails the test loudly; nothing is skipped.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

__all__ = ["RELEASES", "LATEST", "cache_dir", "release_path", "run_release", "source_path"]

#: Every Hermes Agent release on PyPI with a distinct state.db schema, and that schema's version.
RELEASES: dict[str, int] = {
    "0.13.0": 11,
    "0.15.0": 13,
    "0.16.0": 14,
    "0.17.0": 16,
    "0.18.0": 17,
    "0.18.2": 19,
    "0.19.0": 22,
}
LATEST = "0.19.0"


def cache_dir() -> Path:
    """Where releases are kept between runs (``HERMES_TEST_CACHE`` or ``~/.cache/hermes-kernel-tests``)."""
    root = os.environ.get("HERMES_TEST_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "hermes-kernel-tests"
    )
    path = Path(root) / "hermes-agent"
    path.mkdir(parents=True, exist_ok=True)
    return path


def release_path(version: str) -> Path:
    """The folder holding Hermes Agent ``version``'s modules, fetched and unpacked on first use."""
    root = cache_dir()
    target = root / version
    done = target / ".complete"
    if done.exists():
        return target
    with open(root / ".lock", "w") as lock:  # xdist workers share the cache
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return target
        wheels = root / "wheels"
        wheel = next(wheels.glob(f"hermes_agent-{version}-*.whl"), None) if wheels.exists() else None
        if wheel is None:
            _pip("download", "--no-deps", "--only-binary", ":all:", "-d", str(wheels), f"hermes-agent=={version}")
            wheel = next(wheels.glob(f"hermes_agent-{version}-*.whl"))
        _pip("install", "--no-deps", "--no-compile", "--upgrade", "--target", str(target), str(wheel))
        done.touch()
    return target


def source_path(version: str) -> Path:
    """The unpacked source release (sdist) of ``version``: it alone holds ``skills/`` and ``optional-skills/``."""
    root = cache_dir()
    target = root / f"src-{version}"
    done = target / ".complete"
    if done.exists():
        return next(p for p in target.iterdir() if p.is_dir())
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            wheels = root / "wheels"
            sdist = wheels / f"hermes_agent-{version}.tar.gz"
            if not sdist.exists():
                _pip("download", "--no-deps", "--no-binary", ":all:", "-d", str(wheels), f"hermes-agent=={version}")
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir(parents=True)
            with tarfile.open(sdist) as archive:
                archive.extractall(target, filter="data")
            done.touch()
    return next(p for p in target.iterdir() if p.is_dir())


def _pip(*args: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"pip {' '.join(args)} failed (Hermes Agent releases come from PyPI):\n{proc.stderr[-2000:]}")


def run_release(version: str, code: str, home: Path, *, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``code`` with Hermes Agent ``version`` importable and ``HERMES_HOME=home``.

    The environment carries no ``HERMES_*`` setting of the suite's (only the
    home), so Hermes Agent sees what a user's shell would give it.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_", "ANTHROPIC_"))}
    env.update(HERMES_HOME=str(home), PYTHONPATH=str(release_path(version)), PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, timeout=300
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"Hermes Agent {version} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return proc
