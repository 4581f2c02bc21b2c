"""Deferred tool loading: the search ranking, the threshold, the provider's limit, the stable prefix."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes.kernel import Config
from hermes.kernel.tool_registry import ToolCall, ToolRegistry
from hermes.kernel.tool_search import TOOL_SEARCH, DeferralSettings, ToolSearch, rank_tools, words
from hermes.kernel.tools import Tool, ToolContext, ToolSource

NOUNS = ["issue", "file", "branch", "commit", "user", "invoice", "ticket", "channel", "page", "alert"]
VERBS = ["create", "list", "delete", "update", "get", "search", "merge", "close"]


def tool(name: str, description: str = "", toolset: str = "mcp", deferrable: bool | None = None) -> Tool:
    return Tool(name, description or f"The {name} tool.", {"type": "object", "properties": {"x": {"type": "string"}}},
                lambda args, ctx, n=name: f"ran {n}", toolset, deferrable=deferrable)  # fmt: skip


def catalogue(count: int) -> list[Tool]:
    """``count`` MCP-like tools with distinct names: server, verb, noun, number."""
    out = []
    for i in range(count):
        verb, noun = VERBS[i % len(VERBS)], NOUNS[(i // len(VERBS)) % len(NOUNS)]
        out.append(tool(f"mcp_srv{i % 7}_{verb}_{noun}_{i}", f"{verb.title()} a {noun} (variant {i}).", deferrable=True))
    return out


class Source(ToolSource):
    def __init__(self, tools: list[Tool]) -> None:
        self.listed = tools

    def tools(self) -> list[Tool]:
        return self.listed


def names(schemas: list[dict[str, Any]]) -> list[str]:
    return [s["function"]["name"] for s in schemas]


# --- ranking -------------------------------------------------------------------


def test_words_split_every_naming_style() -> None:
    assert words("mcp_github-createIssue.v2 HTTPServer") == ["mcp", "github", "create", "issue", "v2", "http", "server"]


def test_ranking_prefers_name_matches_rare_words_and_the_whole_name() -> None:
    tools = [
        tool("send_message", "Send a chat message to a channel."),
        tool("list_channels", "List every channel of the workspace."),
        tool("create_issue", "Create an issue; mentions a channel."),
        tool("mcp_github_create_pull_request", "Open a pull request."),
    ]
    assert [t.name for t in rank_tools("channel", tools)] == ["list_channels"]  # name beats description
    assert rank_tools("create issue", tools)[0].name == "create_issue"
    assert rank_tools("create_pull_request", tools)[0].name == "mcp_github_create_pull_request"
    assert rank_tools("select:send_message,nope,create_issue", tools) == [tools[0], tools[2]]
    assert rank_tools("weather forecast", tools) == []
    assert rank_tools("   ", tools) == [] and rank_tools("channel", tools, limit=0) == []


def test_matching_more_of_the_query_beats_one_rare_word() -> None:
    tools = [tool("list_branch_17", "List one branch in project 17."), tool("close_invoice_47", "Close one invoice."),
             *(tool(f"close_x_{i}", "Close one.") for i in range(5)), *(tool(f"get_invoice_{i}") for i in range(5))]
    assert rank_tools("close invoice 17", tools)[0].name == "close_invoice_47"


def test_a_parameter_name_is_searchable() -> None:
    tools = [tool("a_tool", "Does a."), Tool("b_tool", "Does b.", {"properties": {"repository": {}}}, lambda a, c: "", "x")]
    assert [t.name for t in rank_tools("repository", tools)] == ["b_tool"]


CATALOGUE = catalogue(200)


@settings(max_examples=40, deadline=None)
@given(index=st.integers(0, 199), limit=st.integers(1, 20), query=st.text(max_size=30))
def test_ranking_properties(index: int, limit: int, query: str) -> None:
    tools = CATALOGUE
    wanted = tools[index]
    assert rank_tools(wanted.name, tools, limit)[0] is wanted  # its whole name finds it first
    found = rank_tools(query, tools, limit)
    assert len(found) <= limit and len({t.name for t in found}) == len(found)
    assert all(t in tools for t in found)
    assert found == rank_tools(query, tools, limit)  # deterministic
    terms = set(words(query))
    for hit in found:  # every hit shares a word (or a word's start) with the query
        text = set(words(hit.name)) | set(words(hit.description)) | {"x"}
        assert any(any(w.startswith(t) for w in text) for t in terms)


# --- the threshold ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("count", "context", "mode", "deferred"),
    [
        (50, None, "auto", False),  # at the count threshold: all sent
        (51, None, "auto", True),  # past it
        (10, 2_000, "auto", True),  # few tools, but more than 10% of a small window
        (10, 1_000_000, "auto", False),
        (3, None, "always", True),
        (500, None, "never", False),
    ],
)
def test_threshold_count_and_context_share(count: int, context: int | None, mode: str, deferred: bool) -> None:
    registry = ToolRegistry([tool("read_file", toolset="files")])
    registry.add_source(Source(catalogue(count - 1)))
    offered = registry.offer(Config({"tools": {"defer": {"mode": mode}}}), context_length=context, record=True)
    assert (TOOL_SEARCH in names(offered)) is deferred
    assert len(offered) == (2 if deferred else count)
    assert names(offered)[0] == "read_file"  # fixed tools are never deferred
    assert (registry.search.last.tokens_saved > 0) is (deferred and count > 5)  # a search tool costs a few tools


def test_config_keys_move_the_threshold() -> None:
    config = Config({"tools": {"defer": {"min_tools": 5, "context_share": 0.5, "max_results": 2}}})
    assert DeferralSettings.from_config(config) == DeferralSettings("auto", 5, 0.5, 2)
    registry = ToolRegistry()
    registry.add_source(Source(catalogue(6)))
    assert names(registry.offer(config)) == [TOOL_SEARCH]


def test_fixed_tools_defer_only_when_marked() -> None:
    registry = ToolRegistry([tool(f"builtin_{i}", toolset="files") for i in range(60)] + [tool("big", deferrable=True)])
    offered = names(registry.offer(None))
    assert TOOL_SEARCH in offered and "big" not in offered and len(offered) == 61
    unmarked = ToolRegistry([tool(f"builtin_{i}", toolset="files") for i in range(60)])
    assert TOOL_SEARCH not in names(unmarked.offer(None))  # nothing deferrable: nothing to search


# --- the provider's limit ------------------------------------------------------------


def test_never_more_tools_than_the_provider_accepts(caplog: pytest.LogCaptureFixture) -> None:
    registry = ToolRegistry([tool(f"fixed_{i}", toolset="files") for i in range(200)])
    with caplog.at_level(logging.WARNING, logger="hermes.kernel.tool_search"):
        for _ in range(3):
            offered = registry.offer(None, max_tools=128, record=True, provider="openai:gpt")
    assert len(offered) == 128 and names(offered) == [f"fixed_{i}" for i in range(128)]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "openai:gpt accepts at most 128" in warnings[0]
    assert registry.search.stats.cut == 3


def test_mode_never_still_respects_the_limit() -> None:
    registry = ToolRegistry()
    registry.add_source(Source(catalogue(1000)))
    assert len(registry.offer(Config({"tools": {"defer": {"mode": "never"}}}), max_tools=128)) == 128


def test_loading_stops_at_the_limit() -> None:
    registry = ToolRegistry([tool(f"fixed_{i}", toolset="files") for i in range(5)])
    registry.add_source(Source(catalogue(300)))
    assert len(registry.offer(None, max_tools=8)) == 6
    ctx = ToolContext()
    first = registry.dispatch(ToolCall("1", TOOL_SEARCH, '{"query": "select:' + ",".join(
        t.name for t in catalogue(5)) + '", "max_results": 5}'), ctx)  # fmt: skip
    assert first.content.startswith("Loaded 2 tools")
    assert len(registry.offer(None, max_tools=8)) == 8
    full = registry.dispatch(ToolCall("2", TOOL_SEARCH, '{"query": "merge"}'), ctx)
    assert full.content.startswith("No room for more tools")


# --- searching, loading, the prefix ---------------------------------------------------


def test_search_loads_tools_appended_in_order_and_counts_calls() -> None:
    registry = ToolRegistry([tool("read_file", toolset="files")])
    tools = catalogue(1000)
    registry.add_source(Source(tools))
    first = registry.offer(None, max_tools=128, record=True)
    ctx = ToolContext()
    result = registry.dispatch(ToolCall("1", TOOL_SEARCH, f'{{"query": "{tools[17].name}"}}'), ctx)
    assert not result.is_error and f"- {tools[17].name}:" in result.content.splitlines()[1]
    second = registry.offer(None, max_tools=128, record=True)
    assert second[: len(first)] == first  # the prefix a provider caches is unchanged
    assert names(second)[len(first)] == tools[17].name
    registry.dispatch(ToolCall("2", TOOL_SEARCH, f'{{"query": "select:{tools[3].name},{tools[17].name}"}}'), ctx)
    third = names(registry.offer(None, max_tools=128, record=True))
    assert third[2:] == [tools[17].name, tools[3].name]
    assert registry.dispatch(ToolCall("3", tools[17].name, "{}"), ctx).content == f"ran {tools[17].name}"
    blind = registry.dispatch(ToolCall("4", tools[99].name, "{}"), ctx)  # called without a search: still runs
    assert blind.content == f"ran {tools[99].name}" and names(registry.offer(None))[-1] == tools[99].name
    stats = registry.search.stats
    assert (stats.searches, stats.calls, stats.calls_after_search, stats.requests) == (2, 2, 1, 3)
    assert stats.tokens_saved > 3 * 30_000  # ~40k tokens of schemas left out of each request


def test_search_errors_are_results_and_nothing_matches_says_so() -> None:
    registry = ToolRegistry()
    registry.add_source(Source(catalogue(100)))
    registry.offer(None)
    ctx = ToolContext()
    assert registry.dispatch(ToolCall("1", TOOL_SEARCH, "{}"), ctx).is_error
    assert registry.dispatch(ToolCall("2", TOOL_SEARCH, '{"query": "x", "max_results": 0}'), ctx).is_error
    assert "No tools match" in registry.dispatch(ToolCall("3", TOOL_SEARCH, '{"query": "zebra"}'), ctx).content
    unknown = registry.dispatch(ToolCall("4", "mcp_nope", "{}"), ctx).content
    assert "find the one you need with tool_search" in unknown and len(unknown) < 200


def test_a_resumed_history_reloads_the_tools_it_called() -> None:
    tools = catalogue(200)
    history = [{"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": tools[5].name, "arguments": "{}"}},
                                                    {"id": "b", "function": {"name": "read_file", "arguments": "{}"}}]}]
    registry = ToolRegistry([tool("read_file", toolset="files")])
    registry.add_source(Source(tools))
    assert names(registry.offer(None, history=history)) == ["read_file", TOOL_SEARCH, tools[5].name]


def test_a_source_may_keep_its_tools_undeferred() -> None:
    source = Source([tool(f"t{i}") for i in range(60)])  # deferrable=None: the source decides
    source.defer_tools = False
    registry = ToolRegistry()
    registry.add_source(source)
    assert TOOL_SEARCH not in names(registry.offer(None))
    assert ToolSearch().plan([], DeferralSettings()) == []
