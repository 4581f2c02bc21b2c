"""Hundreds of MCP tools in a real ``hermes chat``: schemas deferred behind tool_search, never past 128.

A 1,000-tool and a 5,000-tool server (written with the SDK, tests/plugins/mcp/many_tools_server.py)
against the fake OpenAI server: what each request offers, the search, the load, the call, its result.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.e2e.test_chat import chat_env, hermes_chat
from tests.plugins.mcp.servers import write_config

pytestmark = pytest.mark.slow

SERVER = Path(__file__).parents[1] / "plugins" / "mcp" / "many_tools_server.py"


def offered(server: FakeModelServer, index: int) -> list[str]:
    return [t["function"]["name"] for t in server.requests[index].body.get("tools", [])]


def tool_messages(server: FakeModelServer, index: int) -> list[str]:
    return [m["content"] for m in server.requests[index].messages if m.get("role") == "tool"]


@pytest.mark.parametrize("count", [1000, 5000])
def test_thousands_of_tools_are_searched_loaded_and_called(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path, count: int
) -> None:
    server = fake_model_server
    write_config(hermes_home, {"many": {"command": sys.executable, "args": [str(SERVER), str(count)]}},
                 connect_timeout=120)  # fmt: skip
    server.tool_calls(("tool_search", {"query": "weather forecast"}))
    server.tool_calls(("mcp_many_forecast_weather", {"city": "Oslo"}))
    server.reply("Sunny in Oslo.")
    result = hermes_chat("-q", "what's the weather in Oslo tomorrow?", env=chat_env(server), cwd=tmp_path, timeout=240)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Sunny in Oslo.\n"
    assert len(server.requests) == 3
    first, second, third = (offered(server, i) for i in range(3))
    assert all(len(names) <= 128 for names in (first, second, third))
    assert "tool_search" in first and not any(n.startswith("mcp_many_") for n in first)
    search = next(t for t in server.requests[0].body["tools"] if t["function"]["name"] == "tool_search")
    assert f"{count} more tools" in search["function"]["description"]
    assert second[: len(first)] == first and second[len(first)] == "mcp_many_forecast_weather"  # appended
    assert third == second  # loaded tools stay loaded, in the same place
    found = tool_messages(server, 1)[0]
    assert found.startswith("Loaded 1 tool") and "- mcp_many_forecast_weather: [MCP server many] Forecast" in found
    assert tool_messages(server, 2)[-1] == 'forecast_weather ran with {"city": "Oslo"}'
    assert "warning" not in result.stderr.lower()  # deferral is the normal path: nothing to warn about
    log = [json.loads(line) for line in (hermes_home / "logs" / "requests.jsonl").read_text().splitlines()]
    tools = [entry["tools"] for entry in log]
    assert [t["offered"] for t in tools] == [len(first), len(second), len(third)]
    assert all(t["deferred"] >= count - 1 for t in tools)
    assert tools[0]["tokens_saved"] > count * 30  # each deferred schema is ~40 tokens
    assert (tools[-1]["searches"], tools[-1]["calls_after_search"]) == (1, 1)


def test_deferral_off_still_never_sends_more_than_openai_accepts(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path
) -> None:
    server = fake_model_server
    write_config(hermes_home, {"many": {"command": sys.executable, "args": [str(SERVER), "1000"]}})
    config = hermes_home / "config.yaml"
    config.write_text(config.read_text() + "tools:\n  defer:\n    mode: never\n")
    server.reply("ok")
    result = hermes_chat("-q", "hi", env=chat_env(server), cwd=tmp_path, timeout=240)
    assert result.returncode == 0, result.stderr
    assert len(offered(server, 0)) == 128
    warnings = [line for line in result.stderr.splitlines() if "accepts at most 128" in line]
    assert len(warnings) == 1, result.stderr


def test_deferral_works_through_the_anthropic_provider(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path
) -> None:
    server = fake_model_server
    write_config(hermes_home, {"many": {"command": sys.executable, "args": [str(SERVER), "1000"]}})
    server.tool_calls(("tool_search", {"query": "select:mcp_many_forecast_weather"}))
    server.tool_calls(("mcp_many_forecast_weather", {"city": "Bergen"}))
    server.reply("Rain in Bergen.")
    result = hermes_chat("-q", "weather in Bergen?", env=chat_env(server, "anthropic"), cwd=tmp_path, timeout=240)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Rain in Bergen.\n"
    first, second = ([t["name"] for t in server.requests[i].body["tools"]] for i in (0, 1))
    assert "tool_search" in first and len(first) < 30  # the built-ins and the search tool, no MCP schema
    assert second[: len(first)] == first and second[len(first):] == ["mcp_many_forecast_weather"]
    loaded = next(t for t in server.requests[1].body["tools"] if t["name"] == "mcp_many_forecast_weather")
    assert loaded["input_schema"]["required"] == ["city"]
    results = [b for m in server.requests[-1].body["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])
               if b.get("type") == "tool_result"]  # fmt: skip
    texts = [b["content"] if isinstance(b["content"], str) else b["content"][0]["text"] for b in results]
    assert texts[-1] == 'forecast_weather ran with {"city": "Bergen"}'
