"""The session_search tool: registered in hermes.tools, finds past sessions grouped by lineage root."""

from __future__ import annotations

import json
import threading
import time
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel import Config, HermesHome, ToolContext, ToolError, tools_from_plugin
from hermes.kernel.store import SessionStore


def _tool():
    [ep] = [ep for ep in entry_points(group="hermes.tools") if ep.name == "session_search"]
    [tool] = tools_from_plugin(ep.load())
    return tool


@pytest.fixture
def seeded(tmp_path: Path) -> tuple[SessionStore, dict[str, str]]:
    store = SQLiteSessionStore(tmp_path / "state.db")
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


SECRET = "marigold-7731"


@pytest.fixture
def two_tenants(tmp_path: Path) -> tuple[SessionStore, dict[str, str]]:
    """One real SQLite store: tenant a's secret (in text, title and context), tenant b's own work."""
    store = SQLiteSessionStore(tmp_path / "tenants.db")
    a = store.create_session(source="api", tenant="a", title=f"Vault {SECRET}")
    store.append_messages(a, [{"role": "user", "content": "what is the vault code?"},
                              {"role": "assistant", "content": f"The vault code is {SECRET}."},
                              {"role": "user", "content": f"thanks, {SECRET} noted for the vault"}])  # fmt: skip
    a_child = store.compression_child(a, [{"role": "user", "content": f"summary: vault code {SECRET}"}])
    # b's session hangs from a's by a link made by hand: its lineage root must not become a's.
    b = store.create_session(source="api", tenant="b", title="B vault plans", parent_session_id=a)
    store.append_messages(b, [{"role": "user", "content": "plan our vault migration"},
                              {"role": "assistant", "content": "the vault moves on Monday"}])  # fmt: skip
    yield store, {"a": a, "a_child": a_child, "b": b}
    store.close()


def _as(tenant: str | None, store: SessionStore) -> ToolContext:
    from hermes.kernel import TENANT_SERVICE

    return ToolContext(services={"store": store, **({TENANT_SERVICE: tenant} if tenant is not None else {})})


def test_a_tenant_never_finds_another_tenants_text_by_query(two_tenants) -> None:
    store, ids = two_tenants
    for query in ("vault", SECRET, "marigold", "7731", "arigol", "code", "vault OR code", '"vault code"', "summary"):
        for sort in ("rank", "time"):
            result = _tool().handler({"query": query, "sort": sort, "limit": 50}, _as("b", store))
            text = json.dumps(result["conversations"])  # (the query itself is echoed back)
            assert SECRET not in text and "marigold" not in text and ids["a"] not in text and ids["a_child"] not in text, query
            assert {h["session_id"] for c in result["conversations"] for h in c["hits"]} <= {ids["b"]}, query
    [conversation] = _tool().handler({"query": "vault"}, _as("b", store))["conversations"]
    assert (conversation["root_session_id"], conversation["title"]) == (ids["b"], "B vault plans")
    # Tenant a finds its own; without a tenant everything is found, as before.
    assert SECRET in json.dumps(_tool().handler({"query": SECRET}, _as("a", store)))
    everyone = _tool().handler({"query": "vault", "limit": 50}, _as(None, store))
    assert {h["session_id"] for c in everyone["conversations"] for h in c["hits"]} == {ids["a"], ids["a_child"], ids["b"]}


def test_another_tenants_session_id_is_not_found_word_for_word_as_a_missing_one(two_tenants) -> None:
    store, ids = two_tenants
    missing_id = "20990101_000000_ffffff"
    with pytest.raises(ToolError) as missing:
        _tool().handler({"query": "vault", "session_id": missing_id}, _as("b", store))
    for foreign in (ids["a"], ids["a_child"]):
        for query in ("vault", SECRET):
            with pytest.raises(ToolError) as refused:
                _tool().handler({"query": query, "session_id": foreign, "include_current": True}, _as("b", store))
            assert str(refused.value) == str(missing.value).replace(missing_id, foreign)
            assert SECRET not in str(refused.value)
    own = _tool().handler({"query": "vault", "session_id": ids["b"]}, _as("b", store))
    assert {h["session_id"] for c in own["conversations"] for h in c["hits"]} == {ids["b"]}
    # Without a tenant any existing id may be searched; a missing one is still not found.
    assert SECRET in json.dumps(_tool().handler({"query": SECRET, "session_id": ids["a"]}, _as(None, store)))
    with pytest.raises(ToolError, match="no session"):
        _tool().handler({"query": "vault", "session_id": missing_id}, _as(None, store))
    with pytest.raises(ToolError, match="must be a string"):
        _tool().handler({"query": "vault", "session_id": 7}, _as(None, store))


def test_an_agent_of_tenant_b_running_the_tool_sees_nothing_of_a(two_tenants, tmp_path: Path) -> None:
    from hermes.kernel import Agent, ModelRoute, PluginHost, ToolRegistry
    from hermes.kernel.providers.client import ModelClient
    from hermes.kernel.testing import Reply, ScriptedProvider, ToolCall

    store, ids = two_tenants
    provider = ScriptedProvider(
        Reply(tool_calls=[ToolCall("session_search", {"query": "vault code"}, id="q1"),
                          ToolCall("session_search", {"query": "vault", "session_id": ids["a"]}, id="q2")]),
        Reply("nothing of a's"),
    )  # fmt: skip
    client = ModelClient("scripted", lambda **kw: provider, None)
    agent = Agent(routes=[ModelRoute(client, "m")], tools=ToolRegistry([_tool()]), host=PluginHost(load_plugins=""),
                  store=store, stream=False, cwd=tmp_path, tenant="b")  # fmt: skip
    result = agent.run_conversation("find a's code")
    results = [m["content"] for m in result["messages"] if m["role"] == "tool"]
    assert len(results) == 2 and all(SECRET not in r and "marigold" not in r for r in results)
    assert json.loads(results[0])["conversations"] == [] and "no session" in results[1]
    sent = json.dumps([r.messages for r in provider.requests])  # all the model was ever shown
    assert SECRET not in sent and store.get_session(result["session_id"])["tenant"] == "b"


def test_hits_a_store_returns_from_outside_the_tenant_are_dropped_all_the_same(two_tenants) -> None:
    store, ids = two_tenants

    class IgnoresTenants:
        """A store that takes the tenant argument and forgets it."""

        def get_session(self, session_id: str):
            return store.get_session(session_id)

        def search(self, query: str, *, tenant: str | None = None, **kw):
            return store.search(query, **kw)

    leaky = IgnoresTenants()
    assert {h.session_id for h in leaky.search("vault", tenant="b")} == {ids["a"], ids["a_child"], ids["b"]}
    result = _tool().handler({"query": "vault", "limit": 50}, _as("b", leaky))
    [conversation] = result["conversations"]
    assert (conversation["root_session_id"], conversation["title"]) == (ids["b"], "B vault plans")  # not a's root
    assert SECRET not in json.dumps(result) and {h["session_id"] for h in conversation["hits"]} == {ids["b"]}


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
    with SQLiteSessionStore(tmp_path / "state.db") as store:
        sid = store.create_session()
        store.append_message(sid, {"role": "tool", "tool_call_id": "c", "content": "error ok " * 111_112})
        result = _tool().handler({"query": "error"}, ToolContext(services={"store": store}))
    [conversation] = result["conversations"]
    [hit] = conversation["hits"]
    assert result["complete"] is True and hit["snippet"] == "**error** ok " * 5 + "**error** ok…"
