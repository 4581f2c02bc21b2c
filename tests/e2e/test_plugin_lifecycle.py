"""A third-party plugin package for real: pip install, list, run, disable, enable, remove.

examples/hermes-hello is installed with ``hermes plugin install`` into a
virtual environment of the test's own (which also sees the suite's packages),
so the environment running the suite is never changed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def test_install_list_run_disable_enable_remove(venv_hermes, hermes_home: Path) -> None:
    assert "hello" not in venv_hermes("--help").stdout

    installed = venv_hermes("plugin", "install", "examples/hermes-hello")
    assert installed.returncode == 0, installed.stderr
    assert "installed hermes-hello 0.1.0" in installed.stdout
    assert "hermes.plugins: hello" in installed.stdout

    rows = json.loads(venv_hermes("plugin", "list", "--json").stdout)
    assert [(r["group"], r["name"], r["distribution"], r["enabled"], r["error"]) for r in rows] == [
        ("hermes.plugins", "hello", "hermes-hello", True, None)
    ]
    assert "hello" in venv_hermes("--help").stdout
    assert venv_hermes("hello", "--name", "Ada").stdout == "hello, Ada! (from hermes-hello)\n"

    assert venv_hermes("plugin", "disable", "hello").returncode == 0
    assert venv_hermes("hello").returncode != 0
    assert json.loads(venv_hermes("plugin", "list", "--json").stdout)[0]["enabled"] is False

    assert venv_hermes("plugin", "enable", "hello").returncode == 0
    assert venv_hermes("hello").stdout == "hello, world! (from hermes-hello)\n"

    removed = venv_hermes("plugin", "remove", "hermes-hello")
    assert removed.returncode == 0 and "removed hermes-hello" in removed.stdout
    assert json.loads(venv_hermes("plugin", "list", "--json").stdout) == []
    assert venv_hermes("hello").returncode != 0


def test_install_failure_is_reported_not_raised(venv_hermes, tmp_path: Path) -> None:
    result = venv_hermes("plugin", "install", str(tmp_path / "does-not-exist"))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "error: pip install failed with exit code 1; see the pip output above"
    )
    assert "Traceback" not in result.stderr
