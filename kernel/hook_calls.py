"""The hooks around an agent's calls: tool calls, model calls, provider requests and approvals.

:class:`CallHooks` is the one place the rules of these hooks live, so the loop,
the tool registry and the model client each say only *when* a hook fires:

* With no listener for a hook nothing is built and nothing is called: the
  check is one look-up (``python -m bench hooks`` measures it).
* Veto hooks (``before_tool_call``, ``before_approval_request``) fail closed.
  A listener that raises, or does not answer within ``plugins.hook_timeout``
  seconds, blocks the call as if it had vetoed, unless its plugin is advisory
  (``hermes_advisory = True`` on the plugin, or its name in ``plugins.advisory``);
  then its failure is recorded and the call goes on. Every veto is a warning on
  the ``hermes.hooks`` logger naming the plugin, and is recorded with the host's
  hook failures (``hermes plugin list``, ``hermes doctor``).
* ``transform_*`` hooks chain in call order; other hooks keep the host's policy
  (a raise is logged and recorded, the other listeners still run).
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .deadline import DeadlineExceeded, Progress, call_with_deadline
from .tools import ToolError
from .veto import Veto

if TYPE_CHECKING:
    from .host import PluginHost
    from .tool_registry import ToolCall, ToolResult
    from .tools import ToolContext

__all__ = ["ADVISORY_ATTRIBUTE", "ApiObserver", "ApprovalVetoed", "CallHooks", "DEFAULT_HOOK_TIMEOUT", "PLUGIN_CONTEXT_TAG"]

log = logging.getLogger("hermes.hooks")

#: Seconds a veto listener may take before it counts as a veto (``plugins.hook_timeout``).
DEFAULT_HOOK_TIMEOUT = 5.0
#: Set to True on a plugin (module or object) whose veto-hook failures let the call through.
ADVISORY_ATTRIBUTE = "hermes_advisory"
PLUGIN_CONTEXT_TAG = "plugin-context"

_TOOL_HOOKS = ("before_tool_call", "transform_tool_result", "after_tool_call")
_APPROVAL_HOOKS = ("before_approval_request", "after_approval_response")
#: The kernel's fence tags: a plugin's text cannot close its fence early or open another.
_FENCE_TAGS = re.compile(r"</?\s*(?:memory-context|carry-over|plugin-context)\s*>", re.I)
_current = threading.local()  # the tool call running on this thread, for the approval hooks


class ApprovalVetoed(ToolError):
    """Raised by :meth:`CallHooks.approve` when a plugin denied an approval without asking.

    A ToolError, so every tool turns it into its error result, as it does with a timed-out prompt.
    """


def _plugin_label(impl: Any) -> str:
    return str(impl.plugin_name).partition("@")[0]


class CallHooks:
    """The hooks around one agent's calls, fired on ``host``'s listeners.

    :param timeout: ``plugins.hook_timeout``: seconds a veto listener may take (0: no limit).
    :param advisory: ``plugins.advisory``: plugin names whose veto-hook failures fail open.
    """

    def __init__(self, host: PluginHost, *, timeout: float = DEFAULT_HOOK_TIMEOUT, advisory: Collection[str] = ()) -> None:
        self.host = host
        self.timeout = float(timeout)
        self.advisory = frozenset(advisory)

    @classmethod
    def from_config(cls, host: PluginHost, config: Any) -> CallHooks:
        if config is None:
            return cls(host)
        timeout = config.get("plugins.hook_timeout", DEFAULT_HOOK_TIMEOUT)
        advisory = config.get("plugins.advisory", []) or []
        return cls(host, timeout=DEFAULT_HOOK_TIMEOUT if timeout is None else float(timeout), advisory=advisory)

    # --- the three ways a hook is called -------------------------------------------

    def listening(self, *hooks: str) -> bool:
        """True when any of ``hooks`` has a listener (the cheap check before anything is built)."""
        return any(self.host.listeners(hook) for hook in hooks)

    def notify(self, hook: str, **kwargs: Any) -> None:
        """Fire an observer hook; a raise is logged and recorded, the others still run."""
        for impl in self.host.listeners(hook):
            try:
                impl.function(*[kwargs[arg] for arg in impl.argnames])
            except Exception as exc:
                self.host.record_hook_failure(hook, _plugin_label(impl), exc)

    def chain(self, hook: str, key: str, **kwargs: Any) -> Any:
        """Fire a ``transform_*`` hook: each listener gets ``kwargs[key]`` as the one before left it.

        A listener returning None (or raising, which is recorded) leaves the value as it was;
        one returning something other than text is ignored with a warning.
        """
        for impl in self.host.listeners(hook):
            try:
                result = impl.function(*[kwargs[arg] for arg in impl.argnames])
            except Exception as exc:
                self.host.record_hook_failure(hook, _plugin_label(impl), exc)
                continue
            if result is None:
                continue
            if isinstance(result, str):
                kwargs[key] = result
            else:
                log.warning("%s: plugin %r returned %s, not text; ignored", hook, _plugin_label(impl), type(result).__name__)
        return kwargs[key]

    def is_advisory(self, impl: Any) -> bool:
        return _plugin_label(impl) in self.advisory or getattr(impl.plugin, ADVISORY_ATTRIBUTE, False) is True

    def veto(self, hook: str, what: str, rewrite: str | None = None, **kwargs: Any) -> tuple[Veto | None, str, dict[str, Any]]:
        """Fire a veto hook, failing closed. Returns ``(veto or None, plugin, kwargs)``.

        A listener may return a dict to replace ``kwargs[rewrite]`` for the listeners after it
        and for the call. The first veto stops the round; the plugin that gave it is named.
        ``what`` says what was blocked, for the log. All listeners run in one hand-off to a
        deadline thread, each with its own ``timeout``.
        """
        impls = self.host.listeners(hook)
        start = 0
        while start < len(impls):
            pending = impls[start:]
            progress = Progress(kwargs)
            try:
                if self.timeout > 0:
                    veto, plugin, kwargs = call_with_deadline(
                        self._round, (hook, pending, kwargs, rewrite, progress), self.timeout, progress=progress)
                else:
                    veto, plugin, kwargs = self._round(hook, pending, kwargs, rewrite, progress)
            except DeadlineExceeded:
                index, kwargs = progress.abandon()
                impl, start = pending[index], start + index + 1
                plugin = _plugin_label(impl)
                why = f"did not answer within {self.timeout:g} s (plugins.hook_timeout)"
                if self.is_advisory(impl):
                    self.host.record_hook_failure(hook, plugin, f"TimeoutError: {why}; advisory, so the call went on")
                    continue
                self.host.record_hook_failure(hook, plugin, f"TimeoutError: {why}")
                veto = Veto(f"its {hook} hook {why}")
            if veto is not None:
                self._record_veto(hook, plugin, what, veto)
            return veto, plugin, kwargs
        return None, "", kwargs

    def _round(self, hook: str, impls: Sequence[Any], kwargs: dict[str, Any], rewrite: str | None,
               progress: Progress) -> tuple[Veto | None, str, dict[str, Any]]:  # fmt: skip
        """Run veto listeners in order until one vetoes; stops as soon as the caller has given up."""
        for index, impl in enumerate(impls):
            if not progress.mark(index, kwargs):
                return None, "", kwargs  # abandoned: the caller decides without us
            plugin = _plugin_label(impl)
            try:
                result = impl.function(*[kwargs[arg] for arg in impl.argnames])
            except Exception as exc:
                if progress.cancelled:
                    return None, "", kwargs
                failure = self.host.record_hook_failure(hook, plugin, exc)
                if self.is_advisory(impl):
                    continue
                result = Veto(f"its {hook} hook failed ({failure.error}), so the call is blocked")
            if isinstance(result, Veto):
                return result, plugin, kwargs
            if isinstance(result, dict) and rewrite is not None:
                kwargs = {**kwargs, rewrite: result}
            elif result is not None:
                log.warning("%s: plugin %r returned %s; expected None, a dict or Veto; ignored", hook, plugin, type(result).__name__)
        progress.mark(len(impls), kwargs)
        return None, "", kwargs

    def _record_veto(self, hook: str, plugin: str, what: str, veto: Veto) -> None:
        from .host import HookFailure

        log.warning("%s: plugin %r blocked %s: %s", hook, plugin, what, veto.reason)
        self.host.hook_failures.append(HookFailure(hook, plugin, f"vetoed {what}: {veto.reason}"))

    # --- a tool call -----------------------------------------------------------------

    def run_tool(self, call: ToolCall, ctx: ToolContext, dispatch: Callable[[ToolCall, ToolContext], ToolResult]) -> ToolResult:
        """``dispatch(call, ctx)`` with ``before_tool_call``, ``transform_tool_result`` and ``after_tool_call`` around it."""
        if not self.listening(*_TOOL_HOOKS, *_APPROVAL_HOOKS):
            return dispatch(call, ctx)
        from .arguments import ArgumentsError, decode_arguments
        from .tool_registry import ToolCall, ToolResult

        session_id = ctx.session_id or ""
        try:
            arguments = decode_arguments(call.arguments)
        except ArgumentsError:
            arguments = None  # the dispatch reports it; no hook sees arguments that are not an object
        result = None
        if isinstance(arguments, dict) and self.host.listeners("before_tool_call"):
            veto, plugin, given = self.veto(
                "before_tool_call", f"tool call {call.name}", rewrite="arguments",
                session_id=session_id, tool_name=call.name, arguments=arguments, call_id=call.id,
            )  # fmt: skip
            if veto is not None:
                result = ToolResult(call.id, call.name, f"error: blocked by {plugin}: {veto.reason}", is_error=True)
            elif given["arguments"] is not arguments:
                arguments = given["arguments"]
                call = ToolCall(call.id, call.name, json.dumps(arguments, ensure_ascii=False, default=str))
        started = time.perf_counter()
        if result is None:
            outer, _current.tool = getattr(_current, "tool", None), call.name
            try:
                result = dispatch(call, ctx)
            finally:
                _current.tool = outer
        duration = time.perf_counter() - started
        shown = arguments if isinstance(arguments, dict) else {}
        if self.listening("transform_tool_result", "after_tool_call"):
            from .redact import redact_tool_results

            redact_tool_results([result], ctx.config)  # a plugin never reads a secret the model would not
        if self.host.listeners("transform_tool_result"):
            result.content = self.chain("transform_tool_result", "result", session_id=session_id, tool_name=call.name,
                                        arguments=shown, result=result.content)  # fmt: skip
        self.notify("after_tool_call", session_id=session_id, tool_name=call.name, arguments=shown, call_id=call.id,
                    result=result.content, error=result.content if result.is_error else None, duration_s=duration)  # fmt: skip
        return result

    def terminal_output(self, session_id: str | None, command: str, output: str, exit_code: int | None) -> str:
        """The ``terminal`` tool's output after ``transform_terminal_output``."""
        if not self.host.listeners("transform_terminal_output"):
            return output
        return self.chain("transform_terminal_output", "output", session_id=session_id or "", command=command,
                          output=output, exit_code=exit_code)  # fmt: skip

    # --- approvals ---------------------------------------------------------------------

    def approve(self, ctx: ToolContext, subject: str, reason: str) -> bool:
        """Ask ``ctx.approve`` about ``subject``, with the approval hooks around the question.

        A veto denies without asking (:class:`ApprovalVetoed`, a ToolError naming the plugin).
        """
        assert ctx.approve is not None
        if not self.listening(*_APPROVAL_HOOKS):
            return bool(ctx.approve(subject, reason))
        from .approval_records import ApprovalCancelled, ApprovalTimedOut

        session_id, tool = ctx.session_id or "", getattr(_current, "tool", None) or ""
        veto, plugin, _ = self.veto("before_approval_request", f"approval of {subject!r}", session_id=session_id,
                                    tool_name=tool, command=subject, reason=reason)  # fmt: skip
        decided = dict(session_id=session_id, tool_name=tool, command=subject)
        if veto is not None:
            self.notify("after_approval_response", **decided, decision="deny")
            raise ApprovalVetoed(f"blocked by {plugin}: {veto.reason} (denied without asking the user; do not retry it)")
        try:
            allowed = bool(ctx.approve(subject, reason))
        except ApprovalTimedOut:
            self.notify("after_approval_response", **decided, decision="timeout")
            raise
        except ApprovalCancelled:
            self.notify("after_approval_response", **decided, decision="deny")
            raise
        self.notify("after_approval_response", **decided, decision="once" if allowed else "deny")
        return allowed

    # --- a model call --------------------------------------------------------------------

    def model_context(self, session_id: str | None, model: str, messages: list[dict[str, Any]], tools: Iterable[str]) -> list[dict[str, Any]]:
        """``messages`` with the ``before_model_call`` texts fenced on the last user message (a copy; the history is untouched)."""
        if not self.host.listeners("before_model_call"):
            return messages
        texts = self.host.call("before_model_call", session_id=session_id or "", model=model, messages=messages,
                               tools=list(tools))  # fmt: skip
        block = fence_plugin_context(t for t in texts if isinstance(t, str))
        if not block:
            return messages
        messages = list(messages)
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if message.get("role") == "user" and isinstance(message.get("content"), str):
                messages[index] = {**message, "content": f"{block}\n\n{message['content']}"}
                return messages
        messages.append({"role": "user", "content": block})
        return messages

    def model_answered(self, session_id: str | None, model: str, response: Any, duration: float) -> None:
        """``after_model_call``, then ``transform_model_output`` on an answer without tool calls (in place)."""
        message = response.message
        if self.host.listeners("after_model_call"):
            self.notify("after_model_call", session_id=session_id or "", model=model, message=message,
                        usage=response.usage.as_dict(), duration_s=duration)  # fmt: skip
        text = message.get("content")
        if isinstance(text, str) and text and not message.get("tool_calls") and self.host.listeners("transform_model_output"):
            message["content"] = self.chain("transform_model_output", "text", session_id=session_id or "", model=model, text=text)

    def api_observer(self, session_id: str | None, provider: str) -> ApiObserver | None:
        """What the model client tells of each provider request, or None when nobody listens."""
        if not self.listening("before_api_request", "after_api_request", "on_api_error"):
            return None
        return ApiObserver(self, session_id or "", provider)


class ApiObserver:
    """Fires the provider-request hooks for one model call (carried on ``ModelRequest.observer``)."""

    def __init__(self, hooks: CallHooks, session_id: str, provider: str) -> None:
        self.hooks, self.session_id, self.provider = hooks, session_id, provider

    def before(self, model: str, attempt: int) -> None:
        self.hooks.notify("before_api_request", session_id=self.session_id, provider=self.provider, model=model, attempt=attempt)

    def after(self, model: str, attempt: int, usage: dict[str, Any], duration: float) -> None:
        self.hooks.notify("after_api_request", session_id=self.session_id, provider=self.provider, model=model,
                          attempt=attempt, usage=usage, duration_s=duration)  # fmt: skip

    def error(self, model: str, attempt: int, reason: str, message: str, will_retry: bool) -> None:
        from .redact import redact_text

        self.hooks.notify("on_api_error", session_id=self.session_id, provider=self.provider, model=model, attempt=attempt,
                          reason=reason, message=redact_text(" ".join(message.split())), will_retry=will_retry)  # fmt: skip


def fence_plugin_context(texts: Iterable[str]) -> str:
    """Plugin-given context, fenced so the model cannot mistake it for the user's words."""
    body = "\n\n".join(_FENCE_TAGS.sub("", t).strip() for t in texts if t and t.strip())
    if not body:
        return ""
    return (
        f"<{PLUGIN_CONTEXT_TAG}>\n"
        "[Context added by a plugin for this request, not part of the user's message.]\n"
        f"{body}\n"
        f"</{PLUGIN_CONTEXT_TAG}>"
    )
