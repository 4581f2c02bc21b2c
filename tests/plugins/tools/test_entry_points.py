"""The built-in toolsets load through their real entry points, as a third party's would."""

from __future__ import annotations

import pytest

from hermes.kernel import PluginHost, Tool, tools_from_plugin

EXPECTED = {
    "files": {"read_file", "write_file", "patch", "search_files"},
    "terminal": {"terminal"},
    "todo": {"todo"},
    "clarify": {"clarify"},
}


def _loaded() -> dict[str, list[Tool]]:
    host = PluginHost(load_plugins="")
    plugins = host.extensions("hermes.tools", list(EXPECTED))
    assert not host.load_failures
    return {p.name: tools_from_plugin(p.obj) for p in plugins}


def test_toolsets_load_from_entry_points() -> None:
    loaded = _loaded()
    assert {name: {t.name for t in tools} for name, tools in loaded.items()} == EXPECTED
    for toolset, tools in loaded.items():
        for tool in tools:
            assert tool.toolset == toolset, f"{tool.name} claims toolset {tool.toolset}"
            assert tool.is_available()


def test_schemas_are_well_formed() -> None:
    for tools in _loaded().values():
        for tool in tools:
            schema = tool.schema()["function"]
            params = schema["parameters"]
            assert params["type"] == "object"
            assert len(schema["description"]) > 40, tool.name
            assert set(params.get("required", [])) <= set(params["properties"]), tool.name
            for name, prop in params["properties"].items():
                assert prop.get("description"), f"{tool.name}.{name} lacks a description"
            for name in tool.path_params:
                assert name in params["properties"], f"{tool.name}: path param {name} not in schema"


@pytest.mark.parametrize(
    ("name", "read_only", "paths", "interactive", "spill"),
    [
        ("read_file", True, ("path",), False, False),
        ("write_file", False, ("path",), False, True),
        ("patch", False, ("path",), False, True),
        ("search_files", True, ("path",), False, True),
        ("terminal", False, (), False, True),
        ("todo", False, (), False, True),
        ("clarify", False, (), True, True),
    ],
)
def test_scheduling_flags(name: str, read_only: bool, paths: tuple[str, ...], interactive: bool, spill: bool) -> None:
    tools = {t.name: t for ts in _loaded().values() for t in ts}
    tool = tools[name]
    assert (tool.read_only, tool.path_params, tool.interactive, tool.spill_large_results) == (
        read_only, paths, interactive, spill,
    )
