"""Cost of the hooks around calls per loop step: the kernel's path against a hand loop.

One step is what the agent does around one model call and one tool call: the model-call
hooks (``before_model_call`` on the request, ``after_model_call`` and
``transform_model_output`` on the reply) and the tool-call hooks (``before_tool_call``,
``transform_tool_result``, ``after_tool_call``) around a real ``ToolRegistry.dispatch``.

The kernel runs them through :class:`~hermes.kernel.hook_calls.CallHooks` exactly as the
loop does, with 0, 1 and 10 plugins listening to all six hooks. The hand loop calls the
same tool dispatch and the same listener functions directly, with no policy (no
look-up, no fail-closed deadline, no failure isolation). The difference is what the
kernel's hook machinery adds per step. With no plugin it must be tiny: the kernel looks
for listeners and calls nothing. The veto hook runs each listener on a deadline thread
(``plugins.hook_timeout``); the ``no timeout`` rows show that hand-off's share.
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

PLUGIN_COUNTS = (0, 1, 10)
#: Most the kernel may add per step with no plugin listening, in microseconds.
TARGET_EMPTY_US = 5.0


def _listener_class() -> type:
    from hermes.kernel import hookimpl

    class Listener:
        """Listens to all six hooks and changes nothing (the cheapest honest plugin)."""

        def __init__(self) -> None:
            self.seen = 0

        @hookimpl
        def before_model_call(self, session_id: str, model: str, messages: list[dict[str, Any]], tools: list[str]) -> None:
            self.seen += 1

        @hookimpl
        def after_model_call(self, session_id: str, model: str, message: dict[str, Any], usage: dict[str, Any], duration_s: float) -> None:
            self.seen += 1

        @hookimpl
        def transform_model_output(self, session_id: str, model: str, text: str) -> None:
            return None

        @hookimpl
        def before_tool_call(self, session_id: str, tool_name: str, arguments: dict[str, Any], call_id: str) -> None:
            return None

        @hookimpl
        def transform_tool_result(self, session_id: str, tool_name: str, arguments: dict[str, Any], result: str) -> None:
            return None

        @hookimpl
        def after_tool_call(self, session_id: str, tool_name: str, arguments: dict[str, Any], call_id: str,
                            result: str, error: str | None, duration_s: float) -> None:  # fmt: skip
            self.seen += 1

    return Listener


class _Fixture:
    """The pieces of one step: a registry with one tool, a call, a request and a reply."""

    def __init__(self, plugins: int, timeout: float) -> None:
        from hermes.kernel import PluginHost, Tool, ToolContext
        from hermes.kernel.hook_calls import CallHooks
        from hermes.kernel.providers.base import ModelResponse
        from hermes.kernel.tool_registry import ToolCall, ToolRegistry
        from hermes.kernel.usage import CanonicalUsage

        schema = {"type": "object", "properties": {"text": {"type": "string"}}}
        self.registry = ToolRegistry([Tool("echo", "Echo.", schema, lambda args, ctx: f"ok {args['text']}", "bench", read_only=True)])
        self.call = ToolCall("call_1", "echo", json.dumps({"text": "step"}))
        self.messages = [{"role": "system", "content": "bench"}, {"role": "user", "content": "run the step"}]
        self.schemas = self.registry.schemas()
        self.usage = CanonicalUsage(input_tokens=100, output_tokens=10, request_count=1)
        self.response = lambda: ModelResponse(message={"role": "assistant", "content": "done"}, finish_reason="stop", usage=self.usage)
        self.host = PluginHost(load_plugins="")
        self.host.register(object(), name="engine")  # an agent always has a listener (its engine): pluggy is up
        listener = _listener_class()
        self.listeners = [listener() for _ in range(plugins)]
        for index, one in enumerate(self.listeners):
            self.host.register(one, name=f"plugin-{index}")
        self.hooks = CallHooks(self.host, timeout=timeout)
        self.kernel_ctx = ToolContext(session_id="s1", hooks=self.hooks)
        self.hand_ctx = ToolContext(session_id="s1")


def _kernel_steps(f: _Fixture, steps: int) -> float:
    hooks, registry, call, ctx = f.hooks, f.registry, f.call, f.kernel_ctx
    started = time.perf_counter()
    for _ in range(steps):
        hooks.model_context("s1", "m", f.messages, (t["function"]["name"] for t in f.schemas))
        hooks.model_answered("s1", "m", f.response(), 0.001)
        registry.dispatch(call, ctx)
    return time.perf_counter() - started


def _hand_steps(f: _Fixture, steps: int) -> float:
    registry, call, ctx, listeners = f.registry, f.call, f.hand_ctx, f.listeners
    started = time.perf_counter()
    for _ in range(steps):
        response = f.response()
        if not listeners:  # a hand loop without plugins calls nothing
            registry.dispatch(call, ctx)
            continue
        names = [t["function"]["name"] for t in f.schemas]
        for one in listeners:
            one.before_model_call("s1", "m", f.messages, names)
        usage = response.usage.as_dict()
        for one in listeners:
            one.after_model_call("s1", "m", response.message, usage, 0.001)
            one.transform_model_output("s1", "m", response.message["content"])
        arguments = json.loads(call.arguments)
        for one in listeners:
            one.before_tool_call("s1", call.name, arguments, call.id)
        result = registry.dispatch(call, ctx)
        for one in listeners:
            one.transform_tool_result("s1", call.name, arguments, result.content)
            one.after_tool_call("s1", call.name, arguments, call.id, result.content, None, 0.0)
    return time.perf_counter() - started


def _measure(plugins: int, timeout: float, steps: int, runs: int) -> dict[str, Any]:
    fixture = _Fixture(plugins, timeout)
    _kernel_steps(fixture, 50)  # warm: threads started, caches filled
    _hand_steps(fixture, 50)
    kernel, hand = [], []
    for _ in range(runs):  # interleaved, so drift hits both alike
        kernel.append(_kernel_steps(fixture, steps))
        hand.append(_hand_steps(fixture, steps))
    kernel_us = statistics.median(kernel) / steps * 1e6
    hand_us = statistics.median(hand) / steps * 1e6
    return {
        "plugins": plugins,
        "hook_timeout": timeout,
        "kernel_us_per_step": round(kernel_us, 2),
        "hand_us_per_step": round(hand_us, 2),
        "added_us_per_step": round(kernel_us - hand_us, 2),
        "ratio": round(kernel_us / hand_us, 2),
    }


def run(runs: int | None = None, steps: int = 2000) -> dict[str, Any]:
    runs = max(1, runs or 7)
    rows = [_measure(n, 5.0, steps, runs) for n in PLUGIN_COUNTS]
    rows += [_measure(n, 0.0, steps, runs) for n in PLUGIN_COUNTS if n]
    empty = rows[0]
    result = {
        "benchmark": "hooks",
        "runs": runs,
        "steps": steps,
        "rows": rows,
        "empty_added_us": empty["added_us_per_step"],
        "target_empty_added_us": TARGET_EMPTY_US,
    }
    verdict = "meets" if empty["added_us_per_step"] <= TARGET_EMPTY_US else "misses"
    print(f"hooks ({runs} runs of {steps} steps; a step = one model call's and one tool call's six hooks)")
    print("  plugins  timeout   kernel µs   hand µs   added µs   ratio")
    for row in rows:
        timeout = f"{row['hook_timeout']:g} s" if row["hook_timeout"] else "none"
        print(f"  {row['plugins']:7d}  {timeout:>7}  {row['kernel_us_per_step']:10.2f}  {row['hand_us_per_step']:8.2f}"
              f"  {row['added_us_per_step']:9.2f}  {row['ratio']:5.2f} x")  # fmt: skip
    print(f"  no plugin: {empty['added_us_per_step']:.2f} µs added per step ({verdict} target {TARGET_EMPTY_US:g} µs)")
    return result
