"""docs/context-engines.md: its example engine runs, and what it names exists."""

from __future__ import annotations

import re
from pathlib import Path

from hermes.context_engines.compressor.summary import SECTIONS
from hermes.kernel import Config
from hermes.kernel.config import DEFAULTS

DOC = Path(__file__).resolve().parents[2] / "docs" / "context-engines.md"


def test_the_python_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), {})


def test_the_doc_lists_the_template_and_real_config_keys() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert ", ".join(SECTIONS) in re.sub(r"\s+", " ", text)
    config = Config(DEFAULTS)
    for key in re.findall(r"`((?:compression|auxiliary)\.[a-z_.]+)`", text):
        if key.endswith("."):
            continue
        assert config.get(key.split("/")[0], "missing") != "missing", key
