"""Tools an API client runs: offered beside the agent's own, the turn stops at their calls, the results continue it."""

from __future__ import annotations

from hermes.kernel.agent import Agent
from hermes.kernel.agent.history import CLIENT_TOOLS, repair_history
from hermes.kernel.testing import Reply, ScriptedProvider, ToolCall

from .conftest import OBJ, echo_tools

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": OBJ}}
THEIR_ECHO = {"type": "function", "function": {"name": "echo", "description": "the client's echo", "parameters": OBJ}}


def test_a_client_tool_call_ends_the_turn_and_its_result_continues_it(make_agent, store, tmp_path) -> None:
    seen: list[str] = []
    provider = ScriptedProvider(
        Reply(tool_calls=[ToolCall("echo", {"text": "mine"}, id="s1"), ToolCall("get_weather", {"text": "Oslo"}, id="c1")]),
        Reply("Oslo is sunny."),
    )
    agent = make_agent(provider, tools=echo_tools(seen))
    agent.client_tools = [WEATHER]
    agent.request_options = {"tool_choice": "auto", "response_format": {"type": "json_object"}}
    result = agent.run_conversation("weather?")
    assert [c["id"] for c in result["client_tool_calls"]] == ["c1"] and result["completed"]
    assert seen == ["mine"]  # the agent's own call in the same step ran; the client's did not
    assert [t["function"]["name"] for t in provider.requests[0].tools] == ["echo", "get_weather"]
    assert provider.requests[0].extra_body == {"tool_choice": "auto", "response_format": {"type": "json_object"}}
    stored = store.get_messages(result["session_id"])
    assert stored[1]["marker"] == CLIENT_TOOLS and [m["role"] for m in stored] == ["user", "assistant", "tool"]
    # Another process resumes it: the client's call stays open (no "skipped" result) for its result.
    again = Agent(routes=agent.routes, tools=echo_tools(), host=agent.host, store=store, session_id=result["session_id"],
                  cwd=tmp_path, stream=False)  # fmt: skip
    assert [m["role"] for m in again.messages] == ["user", "assistant", "tool"]
    again.messages.append({"role": "tool", "tool_call_id": "c1", "content": "sunny"})
    done = again.run_conversation(None)
    assert done["final_response"] == "Oslo is sunny." and done["client_tool_calls"] == []
    assert provider.requests[-1].messages[-1]["content"] == "sunny" and again.turn == 1
    assert [m["role"] for m in store.get_messages(result["session_id"])] == ["user", "assistant", "tool", "tool", "assistant"]


def test_the_client_wins_a_name_clash_and_can_be_alone(make_agent) -> None:
    seen: list[str] = []
    provider = ScriptedProvider(Reply(tool_calls=[ToolCall("echo", {"text": "x"}, id="c1")]), Reply("ok"))
    agent = make_agent(provider, tools=echo_tools(seen))
    agent.client_tools, agent.offer_own_tools = [THEIR_ECHO], False
    result = agent.run_conversation("echo it")
    assert seen == [] and result["client_tool_calls"][0]["id"] == "c1"
    assert [t["function"].get("description") for t in provider.requests[0].tools] == ["the client's echo"]


def test_open_client_calls_are_closed_only_mid_history() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    waiting = [{"role": "user", "content": "q"}, {"role": "assistant", "content": None, "tool_calls": [call], "marker": CLIENT_TOOLS}]
    assert repair_history(waiting) == waiting
    moved_on = repair_history([*waiting, {"role": "user", "content": "never mind"}])
    assert [m["role"] for m in moved_on] == ["user", "assistant", "tool", "user"] and moved_on[2]["marker"] == "no_result"
    unmarked = repair_history(waiting[:1] + [{**waiting[1], "marker": None}])
    assert unmarked[-1]["marker"] == "no_result"
