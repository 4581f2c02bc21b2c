"""The hooks around calls (issue 29): each spec takes exactly the arguments its contract names.

These pin the names and arguments other plugins (and the Hermes Agent hook mapping) build on:
a listener that asks for every argument of the contract receives each one, and one that asks
for an argument outside it is skipped with a recorded mismatch.
"""

from __future__ import annotations

from typing import Any

from hermes.kernel import PluginHost, Veto, hookimpl

CONTRACT: dict[str, dict[str, Any]] = {
    "on_session_start": {"session_id": "s1", "source": "cli", "parent_session_id": None},
    "on_session_reset": {"old_session_id": "s1", "new_session_id": "s2"},
    "on_session_finalize": {"session_id": "s1", "reason": "user_exit"},
    "before_model_call": {"session_id": "s1", "model": "m", "messages": [], "tools": ["terminal"]},
    "after_model_call": {"session_id": "s1", "model": "m", "message": {"role": "assistant"}, "usage": {}, "duration_s": 0.1},
    "transform_model_output": {"session_id": "s1", "model": "m", "text": "t"},
    "before_api_request": {"session_id": "s1", "provider": "p", "model": "m", "attempt": 1},
    "after_api_request": {"session_id": "s1", "provider": "p", "model": "m", "attempt": 1, "usage": {}, "duration_s": 0.1},
    "on_api_error": {"session_id": "s1", "provider": "p", "model": "m", "attempt": 2, "reason": "rate_limit",
                     "message": "429", "will_retry": True},
    "before_tool_call": {"session_id": "s1", "tool_name": "t", "arguments": {"a": 1}, "call_id": "c1"},
    "after_tool_call": {"session_id": "s1", "tool_name": "t", "arguments": {}, "call_id": "c1", "result": "r",
                        "error": None, "duration_s": 0.1},
    "transform_tool_result": {"session_id": "s1", "tool_name": "t", "arguments": {}, "result": "r"},
    "transform_terminal_output": {"session_id": "s1", "command": "ls", "output": "o", "exit_code": 0},
    "before_approval_request": {"session_id": "s1", "tool_name": "terminal", "command": "rm x", "reason": "why"},
    "after_approval_response": {"session_id": "s1", "tool_name": "terminal", "command": "rm x", "decision": "once"},
    "on_subagent_start": {"parent_session_id": "p", "session_id": "c", "task": "t"},
    "on_subagent_stop": {"parent_session_id": "p", "session_id": "c", "task": "t", "status": "completed", "summary": "s"},
}  # fmt: skip


def _listener(hook: str, args: list[str], seen: list[tuple[str, dict[str, Any]]]) -> object:
    namespace: dict[str, Any] = {}
    exec(f"def {hook}(self, {', '.join(args)}):\n    seen.append(({hook!r}, dict(locals())))\n", {"seen": seen}, namespace)
    return type("Listener", (), {hook: hookimpl(namespace[hook])})()


def _arrives(hook: str) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    host = PluginHost(load_plugins="")
    host.register(_listener(hook, list(CONTRACT[hook]), seen))
    host.call(hook, **CONTRACT[hook])
    assert host.hook_mismatches == []
    assert [(name, {k: v for k, v in args.items() if k != "self"}) for name, args in seen] == [(hook, CONTRACT[hook])]


def test_hook_on_session_start() -> None:
    _arrives('on_session_start')


def test_hook_on_session_reset() -> None:
    _arrives('on_session_reset')


def test_hook_on_session_finalize() -> None:
    _arrives('on_session_finalize')


def test_hook_before_model_call() -> None:
    _arrives('before_model_call')


def test_hook_after_model_call() -> None:
    _arrives('after_model_call')


def test_hook_transform_model_output() -> None:
    _arrives('transform_model_output')


def test_hook_before_api_request() -> None:
    _arrives('before_api_request')


def test_hook_after_api_request() -> None:
    _arrives('after_api_request')


def test_hook_on_api_error() -> None:
    _arrives('on_api_error')


def test_hook_before_tool_call() -> None:
    _arrives('before_tool_call')


def test_hook_after_tool_call() -> None:
    _arrives('after_tool_call')


def test_hook_transform_tool_result() -> None:
    _arrives('transform_tool_result')


def test_hook_transform_terminal_output() -> None:
    _arrives('transform_terminal_output')


def test_hook_before_approval_request() -> None:
    _arrives('before_approval_request')


def test_hook_after_approval_response() -> None:
    _arrives('after_approval_response')


def test_hook_on_subagent_start() -> None:
    _arrives('on_subagent_start')


def test_hook_on_subagent_stop() -> None:
    _arrives('on_subagent_stop')


def test_an_argument_outside_the_contract_is_a_recorded_mismatch() -> None:
    host = PluginHost(load_plugins="")
    host.register(_listener("before_tool_call", ["tool_name", "tool_args"], []), name="guard")
    assert [(m.plugin, m.hook) for m in host.hook_mismatches] == [("guard", "before_tool_call")]


def test_every_contract_hook_is_a_spec() -> None:
    assert set(CONTRACT) <= set(PluginHost(load_plugins="").pm.hook.__dict__)


def test_veto_is_a_value_with_a_reason() -> None:
    assert Veto("no") == Veto("no") != Veto("yes")
    assert Veto("").reason == "no reason given"
    assert repr(Veto("rm -rf")) == "Veto('rm -rf')"
    assert len({Veto("a"), Veto("a")}) == 1
