from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes.kernel.store import SessionStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    """A store on a real file (trigram index present)."""
    with SessionStore(tmp_path / "state.db") as s:
        yield s


@pytest.fixture
def store_without_trigram(tmp_path: Path) -> Iterator[SessionStore]:
    """A store created as if the SQLite build had no trigram tokenizer."""
    with SessionStore(tmp_path / "plain.db", trigram=False) as s:
        yield s
