"""Shared fixtures: an isolated HERMES_HOME per test and no third-party plugins.

``HERMES_LOAD_PLUGINS=""`` is set before anything loads, so the suite sees only
hermes-kernel's own entry points (and the fake distributions a test creates),
never whatever happens to be installed. Subprocesses inherit it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

os.environ["HERMES_LOAD_PLUGINS"] = ""

from tests.helpers import FakeDistributions, foreign_plugin_distributions  # noqa: E402

# postgres_cluster / postgres_url: a real throwaway server (one per xdist worker), never a skip.
pytest_plugins = ["hermes.kernel.testing.fixtures"]


_FOREIGN_PLUGINS = frozenset(foreign_plugin_distributions())


@pytest.fixture(autouse=True)
def _no_installed_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """Entry points of plugins installed in this environment are invisible in process too
    (HERMES_LOAD_PLUGINS keeps them from loading; this keeps them out of listings)."""
    import hermes.kernel.host as host_module

    scan = host_module._scan_entry_points

    def own_entries() -> dict:
        found, foreign = scan(), _FOREIGN_PLUGINS
        if not foreign:
            return found
        return {group: [e for e in entries if host_module.normalize_dist_name(e.distribution) not in foreign]
                for group, entries in found.items()}  # fmt: skip

    monkeypatch.setattr(host_module, "_scan_entry_points", own_entries)


@pytest.fixture(autouse=True)
def hermes_home(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty HERMES_HOME; outer HERMES_*, OPENAI_* and ANTHROPIC_* settings removed, no auto titles."""
    home = tmp_path / "hermes-home"
    for name in list(os.environ):
        if name.startswith(("HERMES_", "OPENAI_", "ANTHROPIC_")):
            monkeypatch.delenv(name)  # never a real key, endpoint or outer setting
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "")
    monkeypatch.setenv("HERMES_HOME", str(home))
    # The entry-point index of this test run's processes, never the user's ~/.cache.
    monkeypatch.setenv("HERMES_ENTRY_POINT_CACHE", str(tmp_path_factory.getbasetemp() / "entry-points"))
    monkeypatch.setattr("hermes.kernel.home._active", None)  # no active home left over from another test's CLI run
    # A background title call would take a scripted reply meant for the test's next turn;
    # tests of automatic titles turn it back on.
    monkeypatch.setenv("HERMES_SESSIONS__AUTO_TITLE", "false")
    return home


@pytest.fixture
def fake_dists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeDistributions:
    """Installable-looking distributions on sys.path (for this process and its children)."""
    dists = FakeDistributions(tmp_path / "site")
    monkeypatch.syspath_prepend(str(dists.root))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(dists.root), os.environ.get("PYTHONPATH")])))
    yield dists
    dists.unload_modules()


@pytest.fixture
def hermes() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the real ``hermes`` command line in a subprocess."""

    def run(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "hermes.kernel", *args],
            capture_output=True,
            text=True,
            input=input,
            env={**os.environ, **(env or {})},
            timeout=120,
        )

    return run
