"""A ToolContext rooted in a fresh working directory per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes.kernel import ToolContext


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def ctx(work: Path) -> ToolContext:
    return ToolContext(session_id="s-test", cwd=work)
