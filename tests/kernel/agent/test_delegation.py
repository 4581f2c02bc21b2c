"""delegate_task: isolated sub-agents, in parallel, under one budget."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from hermes.kernel import IterationBudget, PluginHost, Tool, hookimpl
from hermes.kernel.agent import ModelRoute
from hermes.kernel.agent.delegation import Delegator
from hermes.kernel.testing import Fault, Reply, ScriptedProvider, ToolCall
from hermes.kernel.tool_registry import ToolRegistry
from hermes.plugins.tools.delegate import TOOLS as DELEGATE_TOOLS

from .conftest import scripted_client

OBJ = {"type": "object", "properties": {"text": {"type": "string"}}}


def registry(*extra: Tool) -> ToolRegistry:
    def echo(args: dict[str, Any], ctx) -> str:
        return f"echo {args.get('text', '')}"

    blocked = [Tool(n, n, OBJ, lambda a, c: "x", "blocked") for n in ("clarify", "memory")]
    return ToolRegistry([*DELEGATE_TOOLS, Tool("echo", "echo", OBJ, echo, "test", read_only=True), *blocked, *extra])


def delegating_agent(make_agent, provider: ScriptedProvider, tools: ToolRegistry, **settings: Any):
    agent = make_agent(provider, tools=tools, **settings.pop("agent", {}))
    client = agent.primary.client
    agent.tool_context.services["delegator"] = Delegator(
        agent,
        routes_for_child=lambda: [ModelRoute(client, "child-model")],
        tools_for=lambda toolsets: tools,
        **settings,
    )
    return agent


def delegate(*goals: str) -> Reply:
    return Reply(tool_calls=[ToolCall("delegate_task", {"tasks": [{"goal": g, "context": f"ctx for {g}"} for g in goals]}, id="d1")])


def test_three_children_run_in_parallel_and_report_in_order(make_agent, store) -> None:
    barrier = threading.Barrier(3, timeout=10)

    def meet(args, ctx) -> str:
        barrier.wait()  # passes only when all three children are running at once
        return "met"

    provider = ScriptedProvider(delegate("task one", "task two", "task three"), Reply("all three reported"))
    for n in ("one", "two", "three"):
        provider.script.lane(f"task {n}", Reply(tool_calls=[ToolCall("meet", {}, id=f"m-{n}"), ToolCall("echo", {"text": n}, id=f"e-{n}")]),
                             Reply(f"report {n}"))
    tools = registry(Tool("meet", "meet", OBJ, meet, "test"))
    agent = delegating_agent(make_agent, provider, tools)
    result = agent.run_conversation("split the work")
    assert result["final_response"] == "all three reported"
    tool_result = json.loads([m for m in result["messages"] if m["role"] == "tool"][0]["content"])["results"]
    assert [r["summary"] for r in tool_result] == ["report one", "report two", "report three"]
    assert [r["status"] for r in tool_result] == ["completed"] * 3
    assert [r["tools"] for r in tool_result] == [["meet", "echo"]] * 3
    assert all(r["tokens"]["output_tokens"] > 0 and r["duration"] > 0 for r in tool_result)
    children = [store.get_session(r["session_id"]) for r in tool_result]
    assert {(c["source"], c["parent_session_id"]) for c in children} == {("subagent", agent.session_id)}
    # A child sees its goal and context, never the parent's history, and no forbidden tools.
    child_request = next(r for r in provider.requests if "task two" in str(r.messages))
    assert [m["content"] for m in child_request.messages if m["role"] == "user"] == ["task two\n\nContext from the delegating agent:\nctx for task two"]
    assert {t["function"]["name"] for t in child_request.tools} == {"echo", "meet"}


def test_children_share_the_parent_budget(make_agent) -> None:
    provider = ScriptedProvider(delegate("loop forever"), Reply("parent answers anyway"))
    provider.script.lane("loop forever", *[Reply(tool_calls=[ToolCall("echo", {"text": str(i)}, id=f"l{i}")]) for i in range(5)],
                         Reply("child gives up"))
    agent = delegating_agent(make_agent, provider, registry(), agent={"budget": IterationBudget(6)}, max_iterations=50)
    result = agent.run_conversation("go")
    assert result["final_response"] == "parent answers anyway" and result["budget_exhausted"]
    report = json.loads([m for m in result["messages"] if m["role"] == "tool"][0]["content"])["results"][0]
    assert report["status"] == "budget_exhausted" and report["summary"] == "child gives up"
    assert agent.budget.used == 6  # parent 1 + child 5, then only grace calls


def test_a_failing_child_does_not_harm_its_siblings(make_agent) -> None:
    provider = ScriptedProvider(delegate("good task", "bad task"), Reply("done"))
    provider.script.lane("good task", Reply("fine"))
    provider.script.lane("bad task", Fault("auth"))
    seen: list[tuple[str, str]] = []

    class Listener:
        @hookimpl
        def on_delegation(self, parent_session_id, task, result):
            seen.append((task, result["status"]))

    host = PluginHost(load_plugins="")
    host.register(Listener())
    agent = delegating_agent(make_agent, provider, registry(), agent={"host": host})
    result = agent.run_conversation("go")
    reports = json.loads([m for m in result["messages"] if m["role"] == "tool"][0]["content"])["results"]
    assert [(r["status"], r["summary"][:4]) for r in reports] == [("completed", "fine"), ("failed", "scri")]
    assert seen == [("good task", "completed"), ("bad task", "failed")]


def test_a_hung_child_times_out_alone(make_agent) -> None:
    def stall(args, ctx) -> str:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not ctx.is_interrupted():
            time.sleep(0.02)
        return "stopped"

    provider = ScriptedProvider(delegate("quick task", "slow task"), Reply("done"))
    provider.script.lane("quick task", Reply("quick report"))
    provider.script.lane("slow task", Reply(tool_calls=[ToolCall("stall", {}, id="s")]), Reply("too late"))
    agent = delegating_agent(make_agent, provider, registry(Tool("stall", "stall", OBJ, stall, "test")), timeout=0.5)
    started = time.monotonic()
    result = agent.run_conversation("go")
    assert time.monotonic() - started < 4
    reports = json.loads([m for m in result["messages"] if m["role"] == "tool"][0]["content"])["results"]
    assert reports[0]["status"] == "completed"
    assert reports[1]["status"] == "failed" and "timed out" in reports[1]["summary"]


def test_interrupting_the_parent_reaches_every_child(make_agent) -> None:
    started = threading.Event()

    def wait_for_interrupt(args, ctx) -> str:
        started.set()
        deadline = time.monotonic() + 10
        while not ctx.is_interrupted() and time.monotonic() < deadline:
            time.sleep(0.02)
        return "interrupted" if ctx.is_interrupted() else "not interrupted"

    provider = ScriptedProvider(delegate("wait a", "wait b"), Reply("unused"))
    for key in ("wait a", "wait b"):
        provider.script.lane(key, Reply(tool_calls=[ToolCall("block", {}, id=key)]), Reply("unused child answer"))
    agent = delegating_agent(make_agent, provider, registry(Tool("block", "block", OBJ, wait_for_interrupt, "test")))
    threading.Timer(0.3, lambda: started.wait(5) and agent.interrupt()).start()
    result = agent.run_conversation("go")
    assert result["interrupted"]
    reports = json.loads([m for m in result["messages"] if m["role"] == "tool"][0]["content"])["results"]
    assert [r["status"] for r in reports] == ["interrupted", "interrupted"]


def test_no_delegator_means_a_clear_error_result(make_agent) -> None:
    provider = ScriptedProvider(Reply(tool_calls=[ToolCall("delegate_task", {"goal": "x"}, id="d")]), Reply("ok"))
    result = make_agent(provider, tools=registry()).run_conversation("go")
    tool_message = [m for m in result["messages"] if m["role"] == "tool"][0]["content"]
    assert tool_message.startswith("error: delegation is not available here")
    bad = ScriptedProvider(Reply(tool_calls=[ToolCall("delegate_task", {"tasks": []}, id="d")]), Reply("ok"))
    agent = delegating_agent(make_agent, bad, registry())
    content = [m for m in agent.run_conversation("go")["messages"] if m["role"] == "tool"][0]["content"]
    assert content == "error: tasks must be a non-empty list of {goal, context, toolsets} objects"
