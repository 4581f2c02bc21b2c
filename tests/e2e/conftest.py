"""Fixtures for end-to-end tests that install real packages."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import overlay_venv

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def venv_hermes(tmp_path: Path, hermes_home: Path):
    """``hermes`` in a virtual environment of the test's own that also sees the suite's packages.

    ``hermes plugin install`` there never changes the environment running the
    suite. Call it as ``venv_hermes(*args, input=None, extra=None, cwd=ROOT)``;
    ``.python`` and ``.env`` give its interpreter and environment.
    """
    python = overlay_venv(tmp_path / "venv")
    env = {k: v for k, v in os.environ.items() if k not in ("HERMES_LOAD_PLUGINS", "PYTHONPATH")}

    def run(
        *args: str, input: str | None = None, extra: dict[str, str] | None = None, cwd: Path = ROOT
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(python), "-m", "hermes.kernel", *args],
            capture_output=True, text=True, env={**env, **(extra or {})}, cwd=cwd, input=input, timeout=300,
        )  # fmt: skip

    run.python = python  # type: ignore[attr-defined]
    run.env = env  # type: ignore[attr-defined]
    return run
