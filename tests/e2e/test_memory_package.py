"""examples/hermes-memory-sqlite as a new user meets it: pip install, one config command, status.

The package is installed with ``hermes plugin install`` into a virtual
environment of the test's own (which also sees the suite's packages), so the
environment running the suite is never changed.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def test_install_select_and_see_the_sqlite_provider(venv_hermes, hermes_home: Path) -> None:
    installed = venv_hermes("plugin", "install", "examples/hermes-memory-sqlite")
    assert installed.returncode == 0, installed.stderr
    assert "installed hermes-memory-sqlite 0.1.0" in installed.stdout
    assert "hermes.memory_providers: sqlite" in installed.stdout

    assert venv_hermes("config", "set", "memory.provider", "sqlite").returncode == 0
    status = json.loads(venv_hermes("memory", "status", "--json").stdout)
    assert status["provider"] == "sqlite"
    assert [(r["name"], r["kind"], r["available"]) for r in status["providers"]] == [
        ("builtin", "builtin", True), ("sqlite", "external", True)
    ]
    assert status["providers"][1]["summary"].startswith("no turns stored yet")
    table = venv_hermes("memory", "status").stdout
    assert "external provider: sqlite" in table and "sqlite" in table

    # The installed provider, driven through the kernel's manager in that environment.
    probe = (
        "from hermes.kernel import MemoryManager, PluginHost, load_config, resolve_home\n"
        "home = resolve_home(); host = PluginHost(); m = MemoryManager.from_config(host, load_config(home), home)\n"
        "m.start('s1'); m.sync_turn('where do backups go?', 'Backups go to s3://acme-backups nightly.', 's1'); m.shutdown()\n"
        "m = MemoryManager.from_config(host, load_config(home), home); m.start('s2')\n"
        "print(host.call('prefetch', session_id='s2', query='backups location')[0]); m.shutdown()\n"
    )
    recalled = subprocess.run([str(venv_hermes.python), "-c", probe], capture_output=True, text=True,
                              env=venv_hermes.env, timeout=120)  # fmt: skip
    assert recalled.returncode == 0, recalled.stderr
    assert "Backups go to s3://acme-backups nightly." in recalled.stdout
    assert "1 turns in" in json.loads(venv_hermes("memory", "status", "--json").stdout)["providers"][1]["summary"]

    removed = venv_hermes("plugin", "remove", "hermes-memory-sqlite")
    assert removed.returncode == 0, removed.stderr
    gone = venv_hermes("memory", "status")
    assert gone.returncode == 1 and "no 'hermes.memory_providers' plugin named 'sqlite'" in gone.stderr
