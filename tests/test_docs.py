"""Every hook spec has a doc entry with its exact signature, a test, and a runnable example."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hermes.kernel import PluginHost
from hermes.kernel import hookspecs

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "plugins.md"


def _specs() -> dict[str, list[str]]:
    host = PluginHost(load_plugins="")
    return {
        name: list(caller.spec.argnames)
        for name, caller in vars(host.pm.hook).items()
        if getattr(caller, "spec", None) is not None
    }


def _doc_sections() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    parts = re.split(r"^### `([^`]+)`\s*$", text, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def test_hookspecs_match_architecture() -> None:
    assert set(_specs()) == {
        "on_turn_start",
        "prefetch",
        "on_pre_compress",
        "on_post_compress",
        "on_session_switch",
        "on_session_end",
        "register_commands",
        "config_keys",
        "on_memory_write",
        "on_delegation",
        # around calls (issue 29)
        "on_session_start",
        "on_session_reset",
        "on_session_finalize",
        "before_model_call",
        "after_model_call",
        "transform_model_output",
        "before_api_request",
        "after_api_request",
        "on_api_error",
        "before_tool_call",
        "after_tool_call",
        "transform_tool_result",
        "transform_terminal_output",
        "before_approval_request",
        "after_approval_response",
        "on_subagent_start",
        "on_subagent_stop",
    }
    for name in _specs():
        assert getattr(hookspecs, name).__doc__.strip(), f"{name} has no docstring"


def test_every_hook_is_documented_with_its_signature() -> None:
    sections = _doc_sections()
    for name, args in _specs().items():
        heading = f"{name}({', '.join(args)})"
        assert heading in sections, f"docs/plugins.md lacks a '### `{heading}`' section"
        body = sections[heading]
        for arg in args:
            assert f"`{arg}`" in body, f"{heading}: parameter {arg} is not described"
        assert "**When:**" in body and "**Return:**" in body, f"{heading}: say when it fires and what to return"
        assert "```python" in body, f"{heading}: add a runnable example"


def test_every_hook_has_a_test() -> None:
    tests = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("test_*.py"))
    for name in _specs():
        assert re.search(rf"^def test_hook_{name}\(", tests, flags=re.M), f"no test_hook_{name}"


@pytest.mark.parametrize("heading", sorted(_doc_sections()))
def test_doc_example_runs(heading: str) -> None:
    blocks = re.findall(r"```python\n(.*?)```", _doc_sections()[heading], flags=re.S)
    assert blocks, heading
    for block in blocks:
        exec(compile(block, f"docs/plugins.md:{heading}", "exec"), {})
