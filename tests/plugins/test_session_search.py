"""The session_search tool: registered in hermes.tools, finds past sessions grouped by lineage root."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest

from hermes.kernel import HermesHome, ToolContext, ToolError, tools_from_plugin
from hermes.kernel.store import SessionStore


def _tool():
    [ep] = [ep for ep in entry_points(group="hermes.tools") if ep.name == "session_search"]
    [tool] = tools_from_plugin(ep.load())
    return tool


@pytest.fixture
def seeded(tmp_path: Path) -> tuple[SessionStore, dict[str, str]]:
    store = SessionStore(tmp_path / "state.db")
    root = store.create_session(title="Database migration")
    store.append_messages(root, [{"role": "user", "content": "plan the postgres migration"},
                                 {"role": "assistant", "content": "First dump the schema."}])  # fmt: skip
    child = store.compression_child(root, [{"role": "user", "content": "summary: postgres migration half done"}])
    current = store.create_session()
    store.append_message(current, {"role": "user", "content": "what did we decide about postgres?"})
    yield store, {"root": root, "child": child, "current": current}
    store.close()


def test_registered_in_hermes_tools_with_a_schema() -> None:
    tool = _tool()
    assert tool.name == "session_search" and tool.toolset == "session_search"
    schema = tool.schema()
    assert schema["function"]["parameters"]["required"] == ["query"]
    assert tool.is_available()


def test_hits_are_grouped_under_the_lineage_root_and_skip_the_current_session(seeded) -> None:
    store, ids = seeded
    result = _tool().handler({"query": "postgres migration"}, ToolContext(session_id=ids["current"], services={"store": store}))
    assert [c["root_session_id"] for c in result["conversations"]] == [ids["root"]]
    [conversation] = result["conversations"]
    assert conversation["title"] == "Database migration"
    assert {h["session_id"] for h in conversation["hits"]} == {ids["root"], ids["child"]}
    first = next(h for h in conversation["hits"] if h["session_id"] == ids["root"])
    assert "**postgres**" in first["snippet"] and first["after"]["content"] == "First dump the schema."
    everything = _tool().handler(
        {"query": "postgres", "include_current": True, "limit": "2", "sort": "time"},
        ToolContext(session_id=ids["current"], services={"store": store}),
    )
    assert everything["total_hits"] == 2
    assert everything["conversations"][0]["root_session_id"] == ids["current"]  # newest first


def test_opens_the_store_from_home_when_no_service_is_given(seeded, tmp_path: Path) -> None:
    home = HermesHome(root=tmp_path, profile="default")
    result = _tool().handler({"query": "dump schema"}, ToolContext(home=home))
    assert result["conversations"][0]["hits"][0]["role"] == "assistant"


@pytest.mark.parametrize(
    ("args", "ctx", "message"),
    [
        ({"query": "x"}, ToolContext(), "no session store"),
        ({"query": "x"}, ToolContext(home=HermesHome(root=Path("/nonexistent-hermes"), profile="default")), "no past sessions"),
        ({"query": "  "}, ToolContext(services={"store": object()}), "non-empty"),
        ({"query": "x", "limit": "many"}, ToolContext(services={"store": object()}), "integer"),
        ({"query": "x", "sort": "best"}, ToolContext(services={"store": object()}), "'rank' or 'time'"),
    ],
)
def test_errors_are_tool_errors_with_a_clear_message(args, ctx, message) -> None:
    with pytest.raises(ToolError, match=message):
        _tool().handler(args, ctx)


def test_hostile_queries_return_results_not_exceptions(seeded) -> None:
    store, _ = seeded
    for query in ['"', "AND (", "NEAR(", "-postgres", "pg.migration*", "迁移", "x" * 10_000]:
        result = _tool().handler({"query": query}, ToolContext(services={"store": store}))
        assert isinstance(result["conversations"], list)
