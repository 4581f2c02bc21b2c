"""docs/memory-providers.md: its example package is written out verbatim and must work."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from hermes.kernel import Config, HermesHome, MemoryManager, PluginHost
from hermes.kernel.config import DEFAULTS

DOC = Path(__file__).resolve().parents[2] / "docs" / "memory-providers.md"


def _files() -> dict[str, str]:
    """Every code block whose first line is ``# <path>``, by path."""
    blocks = re.findall(r"```(?:toml|python)\n# (\S+)\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    return {path: body for path, body in blocks}


@pytest.fixture
def package(tmp_path: Path, fake_dists, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "hermes-memory-notes"
    for path, body in _files().items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(body, encoding="utf-8")
    monkeypatch.syspath_prepend(str(root))
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    # Registered from the doc's own pyproject.toml, as pip would (tests/e2e installs the sqlite example for real).
    fake_dists.add(project["name"], {g: dict(eps) for g, eps in project["entry-points"].items()})
    fake_dists._modules.add("hermes_memory_notes")
    return root


def test_the_doc_has_the_whole_package() -> None:
    assert set(_files()) == {"pyproject.toml", "hermes_memory_notes/__init__.py", "tests/test_notes.py"}


def test_the_documented_test_passes(package: Path, tmp_path: Path) -> None:
    namespace: dict = {}
    exec(compile((package / "tests" / "test_notes.py").read_text(), "tests/test_notes.py", "exec"), namespace)
    namespace["test_recalls_a_turn_from_an_earlier_session"](tmp_path / "author-home")


def test_the_entry_point_selects_it(package: Path, tmp_path: Path) -> None:
    host = PluginHost(load_plugins="hermes-memory-notes")
    config = Config({**DEFAULTS, "memory": {**DEFAULTS["memory"], "provider": "notes"}})
    manager = MemoryManager.from_config(host, config, HermesHome(root=tmp_path / "h", profile="default"))
    assert [(r["name"], r["available"]) for r in manager.status()] == [("builtin", True), ("notes", True)]
