"""The built-in providers as plugins, and the Anthropic message mapping."""

from __future__ import annotations

import pytest

from hermes.kernel import ModelProvider, PluginHost, PluginNotFoundError
from hermes.plugins.anthropic_provider import AnthropicProvider, to_anthropic
from hermes.plugins.openai_provider import OpenAIProvider


def test_providers_load_as_drivers() -> None:
    host = PluginHost(load_plugins="")
    assert host.driver("hermes.model_providers", "openai") is OpenAIProvider
    assert host.driver("hermes.model_providers", "anthropic") is AnthropicProvider
    assert all(issubclass(c, ModelProvider) for c in (OpenAIProvider, AnthropicProvider))
    with pytest.raises(PluginNotFoundError, match="available: anthropic, openai"):
        host.driver("hermes.model_providers", "gemini")


def test_repr_never_shows_the_key() -> None:
    provider = OpenAIProvider(api_key="sk-secret-value-1234567890", base_url="http://x")
    assert "sk-secret" not in repr(provider)


def test_tool_messages_map_to_blocks_and_back_to_alternating_roles() -> None:
    calls = [{"id": "c1", "type": "function", "function": {"name": "a", "arguments": '{"x": 1}'}},
             {"id": "c2", "type": "function", "function": {"name": "b", "arguments": "not json"}}]
    system, messages = to_anthropic([
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c1", "content": "r1"},
        {"role": "tool", "tool_call_id": "c2", "content": "r2"},
        {"role": "user", "content": "and then?"},
    ], cache=False)
    assert system == [{"type": "text", "text": "sys"}]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [
        {"type": "tool_use", "id": "c1", "name": "a", "input": {"x": 1}},
        {"type": "tool_use", "id": "c2", "name": "b", "input": {"_raw_arguments": "not json"}},
    ]
    assert [b["type"] for b in messages[2]["content"]] == ["tool_result", "tool_result", "text"]
    assert messages[2]["content"][1] == {"type": "tool_result", "tool_use_id": "c2", "content": "r2"}


def test_cache_breakpoints_are_at_most_four() -> None:
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(9)]
    system, messages = to_anthropic([{"role": "system", "content": "s"}, *turns])
    marks = sum("cache_control" in b for b in system) + sum(
        "cache_control" in b for m in messages for b in m["content"])
    assert marks == 4
    assert "cache_control" in messages[-1]["content"][-1]
    assert "cache_control" not in messages[0]["content"][-1]
