"""docs/tools.md: its examples run, and it documents every built-in tool."""

from __future__ import annotations

import re
from pathlib import Path

from hermes.plugins.tools import clarify, files, terminal, todo

DOC = Path(__file__).resolve().parents[3] / "docs" / "tools.md"


def test_examples_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "docs/tools.md", "exec"), {"__name__": "docs_example"})


def test_every_builtin_tool_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    for module in (files, terminal, todo, clarify):
        for tool in module.TOOLS:
            assert f"`{tool.toolset}` | `{tool.name}(" in text, tool.name
            for param in tool.parameters["properties"]:
                assert re.search(rf"`{tool.name}\([^`]*\b{param}\b", text), f"{tool.name}: {param} undocumented"
