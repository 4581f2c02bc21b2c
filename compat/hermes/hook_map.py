"""Hermes Agent's hook names on the kernel's hooks (the table in docs/hermes-agent.md).

A Hermes plugin's ``ctx.register_hook(name, callback)`` lands in a
:class:`HookTable`; the listener built for the plugin (:func:`listener_class`)
has one ``@hookimpl`` per kernel hook that some callback needs, and nothing
else, so a hook nobody asked for still costs nothing. Each method turns the
kernel's keyword arguments into the ones Hermes Agent passes (``args`` for
``arguments``, ``tool_call_id`` for ``call_id``, ...), and a callback's answer
into the kernel's (a ``{"action": "block"}`` dict into a :class:`Veto`).
"""

from __future__ import annotations

import contextlib

from collections.abc import Callable
from typing import Any

from hermes.kernel import Veto, hookimpl

from .adapter import _fit

__all__ = ["HERMES_HOOKS", "KERNEL_HOOK", "UNSUPPORTED", "HookTable", "listener_class"]

#: Hermes Agent 0.19.0's hook name -> the kernel hook it rides on.
KERNEL_HOOK: dict[str, str] = {
    "pre_tool_call": "before_tool_call",
    "post_tool_call": "after_tool_call",
    "transform_tool_result": "transform_tool_result",
    "transform_terminal_output": "transform_terminal_output",
    "pre_llm_call": "before_model_call",
    "post_llm_call": "after_model_call",
    "transform_llm_output": "transform_model_output",
    "pre_api_request": "before_api_request",
    "post_api_request": "after_api_request",
    "api_request_error": "on_api_error",
    "on_session_start": "on_session_start",
    "on_session_end": "on_session_end",
    "on_session_finalize": "on_session_finalize",
    "on_session_reset": "on_session_reset",
    "subagent_start": "on_subagent_start",
    "subagent_stop": "on_subagent_stop",
    "pre_approval_request": "before_approval_request",
    "post_approval_response": "after_approval_response",
}

#: Hermes Agent hooks with no kernel counterpart, and why.
UNSUPPORTED: dict[str, str] = {
    "pre_verify": "the kernel has no verify-before-stop loop",
    "pre_gateway_dispatch": "it needs the gateway (not yet available)",
    "kanban_task_claimed": "the kernel has no kanban board",
    "kanban_task_completed": "the kernel has no kanban board",
    "kanban_task_blocked": "the kernel has no kanban board",
}

#: Every hook name Hermes Agent 0.19.0 accepts.
HERMES_HOOKS = frozenset(KERNEL_HOOK) | frozenset(UNSUPPORTED)

_PLATFORM = "cli"


class HookTable:
    """Callbacks by Hermes hook name, in registration order."""

    def __init__(self, scope: Callable[[], Any] | None = None) -> None:
        self.callbacks: dict[str, list[Callable[..., Any]]] = {}
        # The host modules the callbacks may import (``hermes_constants``, ``agent.*``), swapped in
        # while they run: ``scope()`` gives a context manager (the plugin's ProviderScope.active).
        self._scope = scope

    def _active(self) -> Any:
        return contextlib.nullcontext() if self._scope is None else self._scope()

    def add(self, hermes_name: str, callback: Callable[..., Any]) -> None:
        self.callbacks.setdefault(hermes_name, []).append(callback)

    def kernel_hooks(self) -> set[str]:
        return {KERNEL_HOOK[name] for name in self.callbacks if name in KERNEL_HOOK}

    def fire(self, hermes_name: str, **kwargs: Any) -> list[Any]:
        """Call each callback with the keywords it accepts; non-None answers in order.

        Every callback runs even when an earlier one raised; then the first
        error is raised again, so the kernel records it (and a veto hook fails
        closed) under this plugin's name.
        """
        answers: list[Any] = []
        error: BaseException | None = None
        for callback in self.callbacks.get(hermes_name, ()):
            try:
                with self._active():
                    answer = callback(**_fit(callback, kwargs))
            except Exception as exc:  # the others still run; the first error is raised below
                error = error or exc
                continue
            if answer is not None:
                answers.append(answer)
        if error is not None:
            raise error
        return answers

    def chain(self, hermes_name: str, value_key: str, value: str, **kwargs: Any) -> str | None:
        """A transform: each callback's string replaces ``value`` for the next; None when none changed it."""
        changed = False
        for callback in self.callbacks.get(hermes_name, ()):
            with self._active():
                answer = callback(**_fit(callback, {**kwargs, value_key: value}))
            if isinstance(answer, str) and answer:
                value, changed = answer, True
        return value if changed else None


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages or []):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else str(content or "")
    return ""


def _veto(answers: list[Any]) -> Veto | None:
    """Hermes's ``{"action": "block"|"approve", "message": ...}``: the first one blocks.

    ``approve`` asks Hermes Agent's human gate for a tool the kernel does not
    gate; blocking it is the closed side of that door.
    """
    for answer in answers:
        if isinstance(answer, dict) and answer.get("action") in ("block", "approve"):
            reason = str(answer.get("message") or answer.get("reason") or "blocked")
            return Veto(reason if answer["action"] == "block" else f"needs approval: {reason}")
    return None


def _context(answers: list[Any]) -> str | None:
    parts = [a.get("context") if isinstance(a, dict) else a for a in answers]
    text = "\n\n".join(p for p in parts if isinstance(p, str) and p.strip())
    return text or None


# One method per kernel hook; a listener class takes only those its plugin needs.
# `self.table` is the plugin's HookTable.


def before_tool_call(self: Any, session_id: str, tool_name: str, arguments: dict[str, Any], call_id: str) -> Any:
    answers = self.table.fire("pre_tool_call", tool_name=tool_name, args=arguments, task_id="",
                              session_id=session_id, tool_call_id=call_id)  # fmt: skip
    return _veto(answers)


def after_tool_call(self: Any, session_id: str, tool_name: str, arguments: dict[str, Any], call_id: str,
                    result: str, error: str | None, duration_s: float) -> None:  # fmt: skip
    self.table.fire("post_tool_call", tool_name=tool_name, args=arguments, result=result, error=error, task_id="",
                    session_id=session_id, tool_call_id=call_id, duration_ms=int(duration_s * 1000))  # fmt: skip


def transform_tool_result(self: Any, session_id: str, tool_name: str, arguments: dict[str, Any], result: str) -> str | None:
    return self.table.chain("transform_tool_result", "result", result, tool_name=tool_name, args=arguments,
                            task_id="", session_id=session_id, tool_call_id="")  # fmt: skip


def transform_terminal_output(self: Any, session_id: str, command: str, output: str, exit_code: int | None) -> str | None:
    return self.table.chain("transform_terminal_output", "output", output, command=command, exit_code=exit_code,
                            returncode=exit_code, task_id="", session_id=session_id)  # fmt: skip


def before_model_call(self: Any, session_id: str, model: str, messages: list[dict[str, Any]], tools: list[str]) -> str | None:
    users = sum(1 for m in messages or [] if m.get("role") == "user")
    answers = self.table.fire("pre_llm_call", session_id=session_id, task_id="", user_message=_last_user_text(messages),
                              conversation_history=list(messages or []), is_first_turn=users <= 1, model=model,
                              platform=_PLATFORM, tools=list(tools))  # fmt: skip
    return _context(answers)


def after_model_call(self: Any, session_id: str, model: str, message: dict[str, Any], usage: dict[str, Any],
                     duration_s: float) -> None:  # fmt: skip
    content = message.get("content") if isinstance(message, dict) else None
    self.table.fire("post_llm_call", session_id=session_id, task_id="", user_message="",
                    assistant_response=content if isinstance(content, str) else "", conversation_history=[],
                    model=model, platform=_PLATFORM, usage=usage)  # fmt: skip


def transform_model_output(self: Any, session_id: str, model: str, text: str) -> str | None:
    return self.table.chain("transform_llm_output", "response_text", text, session_id=session_id, model=model,
                            platform=_PLATFORM)  # fmt: skip


def before_api_request(self: Any, session_id: str, provider: str, model: str, attempt: int) -> None:
    self.table.fire("pre_api_request", session_id=session_id, task_id="", provider=provider, model=model,
                    attempt=attempt, api_call_count=attempt, platform=_PLATFORM)  # fmt: skip


def after_api_request(self: Any, session_id: str, provider: str, model: str, attempt: int, usage: dict[str, Any],
                      duration_s: float) -> None:  # fmt: skip
    self.table.fire("post_api_request", session_id=session_id, task_id="", provider=provider, model=model,
                    attempt=attempt, api_call_count=attempt, usage=usage, api_duration=duration_s,
                    platform=_PLATFORM)  # fmt: skip


def on_api_error(self: Any, session_id: str, provider: str, model: str, attempt: int, reason: str, message: str,
                 will_retry: bool) -> None:  # fmt: skip
    self.table.fire("api_request_error", session_id=session_id, task_id="", provider=provider, model=model,
                    attempt=attempt, error_type=reason, error_message=message, retryable=will_retry,
                    platform=_PLATFORM)  # fmt: skip


def on_session_start(self: Any, session_id: str, source: str, parent_session_id: str | None) -> None:
    self.table.fire("on_session_start", session_id=session_id, model="", platform=source,
                    parent_session_id=parent_session_id)  # fmt: skip


def on_session_end(self: Any, session_id: str, messages: list[dict[str, Any]], reason: str) -> None:
    self.table.fire("on_session_end", session_id=session_id, task_id="", completed=True, interrupted=False,
                    model="", platform=_PLATFORM, reason=reason)  # fmt: skip


def on_session_finalize(self: Any, session_id: str, reason: str) -> None:
    self.table.fire("on_session_finalize", session_id=session_id, platform=_PLATFORM, reason=reason)


def on_session_reset(self: Any, old_session_id: str | None, new_session_id: str) -> None:
    self.table.fire("on_session_reset", session_id=new_session_id, old_session_id=old_session_id,
                    new_session_id=new_session_id, platform=_PLATFORM)  # fmt: skip


def on_subagent_start(self: Any, parent_session_id: str, session_id: str, task: str) -> None:
    self.table.fire("subagent_start", parent_session_id=parent_session_id, child_session_id=session_id,
                    session_id=session_id, goal=task, task=task)  # fmt: skip


def on_subagent_stop(self: Any, parent_session_id: str, session_id: str, task: str, status: str, summary: str) -> None:
    self.table.fire("subagent_stop", parent_session_id=parent_session_id, child_session_id=session_id,
                    session_id=session_id, goal=task, task=task, status=status, summary=summary,
                    child_summary=summary)  # fmt: skip


def before_approval_request(self: Any, session_id: str, tool_name: str, command: str, reason: str) -> None:
    # Observers only in Hermes Agent: its callbacks cannot deny an approval, so neither do they here.
    self.table.fire("pre_approval_request", command=command, description=reason, pattern_key="", pattern_keys=[],
                    session_key=session_id, session_id=session_id, tool_name=tool_name, surface=_PLATFORM)  # fmt: skip


def after_approval_response(self: Any, session_id: str, tool_name: str, command: str, decision: str) -> None:
    self.table.fire("post_approval_response", command=command, description="", pattern_key="", pattern_keys=[],
                    session_key=session_id, session_id=session_id, tool_name=tool_name, surface=_PLATFORM,
                    choice=decision)  # fmt: skip


_METHODS: dict[str, Callable[..., Any]] = {
    func.__name__: hookimpl(func)
    for func in (
        before_tool_call, after_tool_call, transform_tool_result, transform_terminal_output,
        before_model_call, after_model_call, transform_model_output,
        before_api_request, after_api_request, on_api_error,
        on_session_start, on_session_end, on_session_finalize, on_session_reset,
        on_subagent_start, on_subagent_stop, before_approval_request, after_approval_response,
    )
}  # fmt: skip
assert set(_METHODS) == set(KERNEL_HOOK.values())


def listener_class(kernel_hooks: set[str], extra: dict[str, Any] | None = None) -> type:
    """A class whose instances listen to ``kernel_hooks`` only (plus ``extra`` attributes and methods)."""
    attrs: dict[str, Any] = {name: _METHODS[name] for name in sorted(kernel_hooks)}
    attrs.update(extra or {})
    attrs["__module__"] = __name__
    return type("HermesPluginListener", (), attrs)
