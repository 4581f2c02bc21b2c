"""Fixtures for skills tests: a home, its config, a host that sees only hermes-kernel's packs."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from hermes.kernel import HermesHome, PluginHost, load_config


def skill_md(name: str, description: str = "Does a useful thing.", body: str = "# Steps\n\n1. Do it.\n", **extra: Any) -> str:
    import yaml

    front = {"name": name, "description": description, **extra}
    return "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n" + textwrap.dedent(body)


def write_skill(root: Path, name: str, *, category: str = "", text: str | None = None, files: dict[str, str] | None = None, **kw: Any) -> Path:
    folder = root.joinpath(*(category.split("/") if category else ()), name)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(text if text is not None else skill_md(name, **kw), encoding="utf-8")
    for rel, content in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(content, encoding="utf-8")
    return folder


@pytest.fixture
def home(hermes_home: Path) -> HermesHome:
    return HermesHome(root=hermes_home, profile="default").ensure()


@pytest.fixture
def config(home: HermesHome):  # noqa: ANN201
    return load_config(home)


@pytest.fixture
def host() -> PluginHost:
    return PluginHost(load_plugins="")
