"""Run-time tool sources in the registry: asked late, asked again, closed with the registry."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from hermes.kernel import Tool, ToolContext, ToolSource
from hermes.kernel.tool_registry import ToolCall, ToolRegistry


class Counting(ToolSource):
    toolset = "counting"

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.asked = 0
        self.closed = False
        self.configured: tuple[Any, Any] | None = None

    def configure(self, config: Any, home: Any) -> None:
        self.configured = (config, home)

    def tools(self) -> list[Tool]:
        self.asked += 1
        return [Tool(n, f"tool {n}", {"type": "object", "properties": {}}, lambda a, c, n=n: f"ran {n}", "counting")
                for n in self.names]  # fmt: skip

    def close(self) -> None:
        self.closed = True


def test_a_source_is_not_asked_until_tools_are_needed_and_then_every_time() -> None:
    source = Counting(["dyn_a"])
    registry = ToolRegistry([Tool("fixed", "f", {"type": "object"}, lambda a, c: "fixed", "x")])
    registry.add_source(source)
    assert registry.names == ["fixed"] and source.asked == 0  # building an agent starts nothing
    assert [s["function"]["name"] for s in registry.schemas()] == ["fixed", "dyn_a"]
    source.names = ["dyn_a", "dyn_b"]  # the server's list changed
    assert "dyn_b" in registry and registry.names == ["fixed", "dyn_a", "dyn_b"]
    result = registry.dispatch(ToolCall("1", "dyn_b", "{}"), ToolContext())
    assert result.content == "ran dyn_b" and not result.is_error
    registry.close()
    assert source.closed


def test_a_fixed_tool_wins_over_a_source_tool_of_the_same_name() -> None:
    registry = ToolRegistry([Tool("same", "fixed", {"type": "object"}, lambda a, c: "fixed", "x")])
    registry.add_source(Counting(["same"]))
    assert registry.dispatch(ToolCall("1", "same", "{}"), ToolContext()).content == "fixed"
    assert len(registry) == 1


def test_a_failing_source_loses_its_tools_not_the_turn() -> None:
    class Broken(Counting):
        def tools(self) -> list[Tool]:
            raise RuntimeError("server gone")

    registry = ToolRegistry([Tool("fixed", "f", {"type": "object"}, lambda a, c: "ok", "x")])
    registry.add_source(Broken([]))
    assert [s["function"]["name"] for s in registry.schemas()] == ["fixed"]
    result = registry.dispatch(ToolCall("1", "gone", "{}"), ToolContext())
    assert result.is_error and "available tools: fixed" in result.content


def test_the_mcp_toolset_loads_through_its_entry_point_without_servers_or_the_sdk() -> None:
    probe = (
        "import json, sys\n"
        "from hermes.kernel import Config, PluginHost\n"
        "from hermes.kernel.tool_registry import ToolRegistry\n"
        "r = ToolRegistry.load(PluginHost(), ['mcp'], config=Config({'mcp': {'servers': {}}}), home=None)\n"
        "print(json.dumps([len(r.sources), r.sources[0].toolset, len(r.schemas()), 'mcp' in sys.modules]))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [1, "mcp", 0, False]
