"""Deferred tools through the agent: search, load, call; loaded tools survive a compaction and a resume."""

from __future__ import annotations

from typing import Any

from hermes.context_engines.compressor import Compressor
from hermes.kernel import PluginHost, Tool
from hermes.kernel.testing import Reply, ScriptedProvider
from hermes.kernel.testing.script import ToolCall
from hermes.kernel.tools import ToolSource

from .conftest import echo_tools
from .test_compaction import history

NOTE = "## Active Task\nuse the deferred tools\n## Critical Context\nnone"


class Many(ToolSource):
    def __init__(self, count: int) -> None:
        self.listed = [Tool(f"mcp_big_tool_{i}", f"Tool {i} handles widget{i}.", {"type": "object", "properties": {}},
                            lambda a, c, i=i: f"widget {i} done", "mcp") for i in range(count)]  # fmt: skip

    def tools(self) -> list[Tool]:
        return self.listed


def names(request: Any) -> list[str]:
    return [t["function"]["name"] for t in request.tools]


def registry(count: int = 300):
    tools = echo_tools()
    tools.add_source(Many(count))
    return tools


def test_the_agent_searches_loads_calls_and_keeps_the_tool_after_a_compaction(make_agent, store) -> None:
    provider = ScriptedProvider(
        Reply(tool_calls=[ToolCall("tool_search", {"query": "widget42"})]),
        Reply(tool_calls=[ToolCall("mcp_big_tool_42", {})]),
        Reply("done"),
        Reply("again"),
    )
    engine = Compressor(context_length=200_000, summarizer=lambda s, p, m: NOTE)
    sid = store.create_session(source="cli", model="m", system_prompt="prompt")
    store.append_messages(sid, history(80))  # long enough to compress
    agent = make_agent(provider, tools=registry(), engine=engine, session_id=sid)
    result = agent.run_conversation("handle widget 42")
    assert result["final_response"] == "done"
    first, second, third = (names(r) for r in provider.requests[:3])
    assert first == ["echo", "tool_search"]
    assert second == ["echo", "tool_search", "mcp_big_tool_42"] and third == second
    results = [m["content"] for m in agent.messages if m.get("role") == "tool"][-2:]
    assert results[0].startswith("Loaded 1 tool") and results[1] == "widget 42 done"
    old = agent.session_id
    assert agent.compress(manual=True), agent.compress_note
    assert agent.session_id != old
    agent.run_conversation("and again")
    assert names(provider.requests[-1]) == second  # still loaded, still in its place
    stats = agent.tools.search.stats
    assert (stats.searches, stats.calls, stats.calls_after_search) == (1, 1, 1)
    assert stats.deferred_requests == 4 and stats.tokens_saved > 4 * 5_000


def test_a_resumed_session_offers_the_deferred_tools_it_called(make_agent, store) -> None:
    sid = store.create_session(source="cli", model="m", system_prompt="prompt")
    store.append_messages(sid, [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "mcp_big_tool_7", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "tool_name": "mcp_big_tool_7", "content": "widget 7 done"},
        {"role": "assistant", "content": "ok"},
    ])  # fmt: skip
    provider = ScriptedProvider(Reply("fine"))
    agent = make_agent(provider, tools=registry(), session_id=sid, host=PluginHost(load_plugins=""))
    agent.run_conversation("more")
    assert names(provider.requests[0]) == ["echo", "tool_search", "mcp_big_tool_7"]


def test_a_provider_limit_caps_every_request(make_agent) -> None:
    provider = ScriptedProvider(Reply("ok"))
    agent = make_agent(provider, tools=registry(), engine=None)
    agent.routes[0].client.provider_class.max_tools = 2  # type: ignore[attr-defined]
    agent.run_conversation("hi")
    assert names(provider.requests[0]) == ["echo", "tool_search"]
    assert agent.tools.search._room == 0  # nothing more may be loaded: the limit is reached
