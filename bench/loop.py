"""Kernel overhead per loop step: the agent against a minimal hand-written loop.

Both loops drive the same in-process scripted provider through ``steps``
model calls, each asking for one tool call, then a final answer. The agent
runs as a user meets it: 30 tools registered, 3 plugins listening to every
hook, a real session store on disk, the result budget on. The baseline is
the least a loop can do: call the provider, run the tool, append the
messages, nothing persisted. The difference per step is the kernel's
overhead. Target: at most 2 ms per step.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_MS = 2.0
TOOL_COUNT = 30
LISTENERS = 3


def _tools() -> Any:
    from hermes.kernel import Tool
    from hermes.kernel.tool_registry import ToolRegistry

    schema = {"type": "object", "properties": {"text": {"type": "string", "description": "what to echo"}}}
    return ToolRegistry(
        Tool(f"tool_{i:02d}", f"Echo tool number {i}.", schema, lambda args, ctx: f"ok {args.get('text', '')}", "bench",
             read_only=True)
        for i in range(TOOL_COUNT)
    )  # fmt: skip


def _host() -> Any:
    from hermes.kernel import PluginHost, hookimpl

    class Listener:
        @hookimpl
        def on_turn_start(self, session_id: str, turn: int, message: str) -> None:
            self.turn = turn

        @hookimpl
        def prefetch(self, session_id: str, query: str) -> str | None:
            return None

        @hookimpl
        def on_session_end(self, session_id: str, messages: list[dict[str, Any]], reason: str) -> None:
            self.ended = reason

    host = PluginHost(load_plugins="")
    for index in range(LISTENERS):
        host.register(Listener(), name=f"listener-{index}")
    return host


def _script(steps: int) -> list[Any]:
    from hermes.kernel.testing import Reply, ToolCall

    return [Reply(tool_calls=[ToolCall(f"tool_{i % TOOL_COUNT:02d}", {"text": f"step {i}"}, id=f"call_{i}")]) for i in range(steps)] + [Reply("done")]


def _agent_run(steps: int, folder: Path) -> float:
    from hermes.kernel.agent import Agent, ModelRoute
    from hermes.kernel.providers.client import ModelClient
    from hermes.kernel.store import open_store
    from hermes.kernel.testing import ScriptedProvider

    provider = ScriptedProvider(*_script(steps))
    client = ModelClient("scripted", lambda **kw: provider, None)
    store = open_store({}, None, url=str(folder / "state.db"))
    agent = Agent(routes=[ModelRoute(client, "bench-model")], tools=_tools(), host=_host(), store=store,
                  max_iterations=steps + 5, results_dir=folder / "results", cwd=folder, stream=False)
    started = time.perf_counter()
    result = agent.run_conversation("run the steps")
    elapsed = time.perf_counter() - started
    assert result["completed"] and result["api_calls"] == steps + 1, result
    store.close()
    return elapsed


def _baseline_run(steps: int) -> float:
    from hermes.kernel import ModelRequest
    from hermes.kernel.testing import ScriptedProvider

    provider = ScriptedProvider(*_script(steps))
    tools = _tools()
    schemas = tools.schemas()
    messages: list[dict[str, Any]] = [{"role": "system", "content": "bench"}, {"role": "user", "content": "run the steps"}]
    started = time.perf_counter()
    while True:
        response = provider.complete(ModelRequest(model="bench-model", messages=messages, tools=schemas))
        messages.append(response.message)
        if not response.tool_calls:
            break
        for call in response.tool_calls:
            tool = tools.get(call["function"]["name"])
            assert tool is not None
            output = tool.handler(json.loads(call["function"]["arguments"]), None)  # type: ignore[arg-type]
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})
    return time.perf_counter() - started


def run(runs: int | None = None, steps: int = 200) -> dict[str, Any]:
    runs = max(3, runs or 7)
    agent_times, base_times = [], []
    for _ in range(runs):  # interleaved, so drift hits both alike
        with tempfile.TemporaryDirectory() as tmp:
            agent_times.append(_agent_run(steps, Path(tmp)))
        base_times.append(_baseline_run(steps))
    calls = steps + 1
    agent_ms = statistics.median(agent_times) / calls * 1000
    base_ms = statistics.median(base_times) / calls * 1000
    overhead = agent_ms - base_ms
    result = {
        "benchmark": "loop",
        "runs": runs,
        "steps": steps,
        "tools": TOOL_COUNT,
        "listeners": LISTENERS,
        "agent_ms_per_step": round(agent_ms, 3),
        "baseline_ms_per_step": round(base_ms, 3),
        "overhead_ms_per_step": round(overhead, 3),
        "ratio": round(agent_ms / base_ms, 2),
        "target_overhead_ms": TARGET_MS,
    }
    verdict = "meets" if overhead <= TARGET_MS else "misses"
    print(f"loop ({runs} runs of {steps} tool steps, {TOOL_COUNT} tools, {LISTENERS} listeners, store on disk)")
    print(f"  agent                 {agent_ms:7.3f} ms per step")
    print(f"  hand-written loop     {base_ms:7.3f} ms per step")
    print(f"  overhead              {overhead:7.3f} ms per step ({verdict} target {TARGET_MS} ms), ratio {result['ratio']} x")
    return result
