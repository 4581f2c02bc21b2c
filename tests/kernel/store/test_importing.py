"""The import rules every backend shares (kernel/store/importing.py), on a fake target."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from hermes.kernel.errors import HermesError
from hermes.kernel.store.importing import COUNTER_COLUMNS, import_batch, import_values
from hermes.kernel.store.session_store import SESSION_COLUMNS


class Fake:
    """A target whose every title is taken: no numbered title can ever be free."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.inserted: list[str] = []

    def message_count(self, session_id: str) -> int | None:
        return None

    def title_taken(self, title: str) -> bool:
        return True

    def next_numbered_title(self, title: str) -> str:
        self.asked.append(title)
        return title + "+"

    def insert(self, values: Mapping[str, Any], rows: Sequence[tuple[Any, ...]]) -> None:
        self.inserted.append(values["id"])


def test_a_title_never_free_gives_up_with_one_line_and_inserts_nothing() -> None:
    fake = Fake()
    with pytest.raises(HermesError, match=r"^no free numbered title for 'Busy' in the target; rename that session"):
        import_batch(fake, [({"id": "a", "title": "Busy"}, [])], SESSION_COLUMNS)
    assert fake.inserted == [] and len(fake.asked) == 10  # bounded: ten candidates, each from the last
    assert fake.asked[:2] == ["Busy", "Busy+"]


def test_import_values_zero_unset_counters_and_count_the_rows() -> None:
    row = {"id": "a", "title": "t", "input_tokens": None, "api_call_count": 4, "message_count": 99}
    values = import_values(row, 2, SESSION_COLUMNS, lambda v: v.upper() if isinstance(v, str) else v)
    assert (values["message_count"], values["api_call_count"], values["id"], values["title"]) == (2, 4, "A", "T")
    assert all(values[c] == 0 for c in COUNTER_COLUMNS if c != "api_call_count")
    assert set(values) == set(SESSION_COLUMNS)
