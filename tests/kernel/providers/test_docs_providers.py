"""docs/providers.md: its Python examples run, and it documents every fault and reason."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hermes.kernel.providers.errors import REASONS
from hermes.kernel.testing import FAULT_KINDS

DOC = Path(__file__).resolve().parents[3] / "docs" / "providers.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_doc_example_runs(index: int) -> None:
    exec(compile(BLOCKS[index], f"docs/providers.md:block{index}", "exec"), {})


def test_every_fault_and_reason_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert len(BLOCKS) >= 3
    for kind in FAULT_KINDS:
        assert f"`{kind}`" in text, kind
    for reason in REASONS:
        assert f"| `{reason}` |" in text, reason
