"""The session_search tool: registered in hermes.tools, finds past sessions grouped by lineage root."""

from __future__ import annotations

import threading
import time
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from hermes.kernel import Config, HermesHome, ToolContext, ToolError, tools_from_plugin
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


class _SlowStore:
    """A store whose search outlasts any budget: it blocks until released (``deadline``
    unknown to it, as to a third party's store written before the parameter existed)."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def search(self, query: str, **options: object) -> list[object]:
        self.release.wait(30)
        return []


class _LateStore:
    """A store that honours the deadline but returns a moment after it, with one hit."""

    def __init__(self, hit: object) -> None:
        self.hit = hit
        self.seen: dict[str, object] = {}

    def search(self, query: str, *, deadline: float | None = None, **options: object) -> list[object]:
        self.seen = {"deadline": deadline, **options}
        assert deadline is not None
        while time.monotonic() <= deadline:
            time.sleep(0.01)
        return [self.hit]


def test_a_search_past_its_time_budget_returns_what_it_found_and_says_so(seeded) -> None:
    store, ids = seeded
    [hit] = store.search("dump schema")
    config = Config({"sessions": {"search_time_budget": 0.2}})
    late = _LateStore(hit)
    result = _tool().handler({"query": "dump schema"}, ToolContext(services={"store": late}, config=config))
    assert result["complete"] is False and "time budget of 0.2 s" in result["note"]
    assert result["conversations"][0]["hits"][0]["message_id"] == hit.message_id
    assert late.seen["limit"] == 30  # the deadline reached the store with the other options
    # A store that cannot stop: the tool waits for the budget and a short grace, no longer.
    slow = _SlowStore()
    try:
        result = _tool().handler({"query": "dump schema"}, ToolContext(services={"store": slow}, config=config))
    finally:
        slow.release.set()
    assert result["complete"] is False and result["conversations"] == [] and result["total_hits"] == 0
    # Within the budget (10 s by default) the answer is complete and has no note.
    result = _tool().handler({"query": "dump schema"}, ToolContext(services={"store": store}))
    assert result["complete"] is True and "note" not in result


def test_a_huge_message_is_found_with_a_short_snippet(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "state.db") as store:
        sid = store.create_session()
        store.append_message(sid, {"role": "tool", "tool_call_id": "c", "content": "error ok " * 111_112})
        result = _tool().handler({"query": "error"}, ToolContext(services={"store": store}))
    [conversation] = result["conversations"]
    [hit] = conversation["hits"]
    assert result["complete"] is True and hit["snippet"] == "**error** ok " * 5 + "**error** ok…"
