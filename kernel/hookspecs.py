"""Lifecycle hook specifications of the hermes kernel: its table of contents.

Every hook takes keyword arguments only, and an implementation may accept any
subset of a spec's arguments. The kernel calls each implementation separately
(``PluginHost.call``), so one implementation that raises is logged and
recorded while the others still run and their results are still returned.

Two hooks can block what they are asked about, by returning
:class:`~hermes.kernel.Veto`: ``before_tool_call`` and
``before_approval_request``. They fail closed: an implementation that raises,
or takes longer than ``plugins.hook_timeout`` seconds, blocks too, unless its
plugin is advisory (``hermes_advisory = True`` on the plugin, or its name in
``plugins.advisory``). Every veto is logged with the plugin's name
(:mod:`hermes.kernel.hook_calls`).

``transform_*`` hooks chain: each implementation receives the text the one
before it returned, in call order; None leaves the text as it is.
"""

from __future__ import annotations

from typing import Any

import pluggy

__all__ = ["hookimpl", "hookspec", "PROJECT_NAME"]

PROJECT_NAME = "hermes"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


# --- command line and configuration -----------------------------------------


@hookspec
def register_commands(app: Any) -> None:
    """Fires once, before the ``hermes`` command line is parsed.

    :param app: the root ``typer.Typer`` application; add commands or sub-apps.

    The return value is ignored.
    """


@hookspec
def config_keys() -> list[Any] | None:
    """Fires when the config schema is built (``hermes config set``, ``schema``, ``doctor``).

    Return a list of :class:`~hermes.kernel.ConfigKey` entries for the keys the
    plugin reads, or None. A ``*`` segment declares an open-ended map
    (``mcp.servers.*.command``). A plugin never redefines a kernel key: the
    kernel's entry wins.
    """


# --- sessions -----------------------------------------------------------------


@hookspec
def on_session_start(session_id: str, source: str, parent_session_id: str | None) -> None:
    """Fires once when an agent opens a new session (not when it resumes a stored one).

    :param session_id: the new session.
    :param source: who runs it: ``cli``, ``serve``, ``acp``, ``subagent``, ``review``, ...
    :param parent_session_id: the session it continues or was delegated from, or None.

    The return value is ignored. A compression child is announced by
    ``on_session_switch`` (reason ``compression``) instead.
    """


@hookspec
def on_session_switch(old_session_id: str | None, new_session_id: str, reason: str) -> None:
    """Fires when the active session changes.

    :param old_session_id: the session left behind, or None when there was none.
    :param new_session_id: the session now active.
    :param reason: one of ``compression``, ``branch``, ``resume``, ``new``, ``reset``.

    The return value is ignored.
    """


@hookspec
def on_session_reset(old_session_id: str | None, new_session_id: str) -> None:
    """Fires when the user starts over in the same chat (``/new``, ``/reset``).

    :param old_session_id: the session that ended, or None when none had started.
    :param new_session_id: the fresh session.

    The return value is ignored. Fires after ``on_session_end`` of the old session
    and ``on_session_switch`` to the new one.
    """


@hookspec
def on_session_end(session_id: str, messages: list[dict[str, Any]], reason: str) -> None:
    """Fires when a session really ends: exit, ``/new``, expiry. Never per turn.

    :param session_id: the session that ended.
    :param messages: its final message list.
    :param reason: why it ended (``user_exit``, ``new``, ``timeout``, ...).

    The return value is ignored.
    """


@hookspec
def on_session_finalize(session_id: str, reason: str) -> None:
    """Fires after ``on_session_end``, once the store holds every message of the session.

    :param session_id: the session that ended.
    :param reason: the same reason ``on_session_end`` was given.

    The return value is ignored. Read the session back from the store here
    (export, upload, index); nothing is written to it afterwards.
    """


# --- a user turn --------------------------------------------------------------


@hookspec
def on_turn_start(session_id: str, turn: int, message: str) -> None:
    """Fires before the first model call of a user turn.

    :param session_id: the session the turn belongs to.
    :param turn: 1-based number of this user turn within the session.
    :param message: the user's message text, as typed.

    The return value is ignored.
    """


@hookspec
def prefetch(session_id: str, query: str) -> str | None:
    """Fires once per user turn, after ``on_turn_start``, to recall context.

    :param session_id: the session the turn belongs to.
    :param query: the text to recall against (the user's message).

    Return text to add, or None. Every result is fenced in
    ``<memory-context>`` and added to this turn's user message at request
    time only; it is never persisted.
    """


# --- a model call -------------------------------------------------------------


@hookspec
def before_model_call(session_id: str, model: str, messages: list[dict[str, Any]], tools: list[str]) -> str | None:
    """Fires before each model call of a turn (each step, and each retry the agent makes).

    :param session_id: the session the call belongs to.
    :param model: the model asked.
    :param messages: the request's messages (read-only: a change is not sent).
    :param tools: the names of the tools offered to the model.

    Return text to add, or None. Every result is fenced in
    ``<plugin-context>`` and added to this request only; it is never persisted.
    """


@hookspec
def after_model_call(
    session_id: str, model: str, message: dict[str, Any], usage: dict[str, Any], duration_s: float
) -> None:
    """Fires after a model call answered, before its reply is stored or its tools run.

    :param session_id: the session the call belongs to.
    :param model: the model that answered.
    :param message: the assistant message (``content``, ``tool_calls``); read-only.
    :param usage: token counts of the call (``input_tokens``, ``output_tokens``, ...).
    :param duration_s: seconds the call took, retries included.

    The return value is ignored.
    """


@hookspec
def transform_model_output(session_id: str, model: str, text: str) -> str | None:
    """Fires for the text of a model's final answer, before it is shown as the answer and stored.

    :param session_id: the session the answer belongs to.
    :param model: the model that wrote it.
    :param text: the answer as the previous implementation left it.

    Return the new text, or None to keep it. Results chain in call order.
    Text that was already streamed to the screen stays as it was shown; the
    stored answer and the turn's result carry the transformed text.
    """


# --- provider requests (inside one model call) -------------------------------


@hookspec
def before_api_request(session_id: str, provider: str, model: str, attempt: int) -> None:
    """Fires before each HTTP request to a provider, retries included.

    :param session_id: the session the request serves ("" when none).
    :param provider: the model provider's name (``openai``, ``anthropic``, ...).
    :param model: the model asked.
    :param attempt: 1 for the first request of a call, then 2, 3, ... for retries.

    The return value is ignored.
    """


@hookspec
def after_api_request(
    session_id: str, provider: str, model: str, attempt: int, usage: dict[str, Any], duration_s: float
) -> None:
    """Fires after a provider request succeeded.

    :param session_id: the session the request serves ("" when none).
    :param provider: the model provider's name.
    :param model: the model that answered.
    :param attempt: which attempt succeeded (1 = the first).
    :param usage: token counts of the response.
    :param duration_s: seconds this request took.

    The return value is ignored.
    """


@hookspec
def on_api_error(
    session_id: str, provider: str, model: str, attempt: int, reason: str, message: str, will_retry: bool
) -> None:
    """Fires after a provider request failed.

    :param session_id: the session the request serves ("" when none).
    :param provider: the model provider's name.
    :param model: the model asked.
    :param attempt: which attempt failed (1 = the first).
    :param reason: the classified reason (``rate_limit``, ``auth``, ``server_error``, ...).
    :param message: the error in one line, secrets redacted.
    :param will_retry: True when the client retries (after a backoff, or with another key).

    The return value is ignored.
    """


# --- a tool call --------------------------------------------------------------


@hookspec
def before_tool_call(session_id: str, tool_name: str, arguments: dict[str, Any], call_id: str) -> Any:
    """Fires before a tool runs; may veto it or rewrite its arguments.

    :param session_id: the session the call belongs to.
    :param tool_name: the tool the model called.
    :param arguments: the decoded arguments (as rewritten by earlier implementations).
    :param call_id: the model's id of this call.

    Return None to let it run, a dict to run it with those arguments instead
    (the next implementation sees them), or :class:`~hermes.kernel.Veto` to
    block it: the tool does not run and the model reads
    ``blocked by PLUGIN: reason``. Fails closed: a raise or a timeout
    (``plugins.hook_timeout``) blocks, unless the plugin is advisory.
    """


@hookspec
def after_tool_call(
    session_id: str,
    tool_name: str,
    arguments: dict[str, Any],
    call_id: str,
    result: str,
    error: str | None,
    duration_s: float,
) -> None:
    """Fires after a tool ran (or was blocked), before its result reaches the model.

    :param session_id: the session the call belongs to.
    :param tool_name: the tool called.
    :param arguments: the arguments it ran with (after any rewrite).
    :param call_id: the model's id of this call.
    :param result: the result text the model will read.
    :param error: the error text when the call failed or was blocked, else None.
    :param duration_s: seconds the tool took.

    The return value is ignored.
    """


@hookspec
def transform_tool_result(session_id: str, tool_name: str, arguments: dict[str, Any], result: str) -> str | None:
    """Fires for each tool result before the model reads it and it is stored.

    :param session_id: the session the call belongs to.
    :param tool_name: the tool called.
    :param arguments: the arguments it ran with.
    :param result: the result text as the previous implementation left it.

    Return the new text, or None to keep it. Results chain in call order.
    """


@hookspec
def transform_terminal_output(session_id: str, command: str, output: str, exit_code: int | None) -> str | None:
    """Fires when the ``terminal`` tool's command finished, before its output is trimmed and returned.

    :param session_id: the session the call belongs to.
    :param command: the command that ran.
    :param output: its output (stdout and stderr) as the previous implementation left it.
    :param exit_code: its exit status, or None when it timed out or was stopped.

    Return the new text, or None to keep it. Results chain in call order.
    """


# --- approvals ----------------------------------------------------------------


@hookspec
def before_approval_request(session_id: str, tool_name: str, command: str, reason: str) -> Any:
    """Fires before the user is asked to approve what a tool wants to do.

    :param session_id: the session the tool call belongs to.
    :param tool_name: the tool asking (``terminal``, ``write_file``, ...).
    :param command: what would run (the command, or ``write /path``).
    :param reason: why it needs approval.

    Return None to ask as usual, or :class:`~hermes.kernel.Veto` to deny
    without asking. Fails closed like ``before_tool_call``.
    """


@hookspec
def after_approval_response(session_id: str, tool_name: str, command: str, decision: str) -> None:
    """Fires once an approval was decided.

    :param session_id: the session the tool call belongs to.
    :param tool_name: the tool that asked.
    :param command: what it asked about.
    :param decision: ``once`` (allowed), ``session``, ``always``, ``deny`` or ``timeout``.

    The return value is ignored.
    """


# --- context management -------------------------------------------------------


@hookspec
def on_pre_compress(session_id: str, messages: list[dict[str, Any]]) -> str | None:
    """Fires before a context engine compresses the conversation.

    :param session_id: the session about to be compressed.
    :param messages: the message list as it stands (read-only by convention).

    Return text, or None. Every result reaches the summarizer as extra context,
    so a plugin can save facts that the summary would otherwise drop.
    """


@hookspec
def on_post_compress(session_id: str, new_session_id: str, fidelity: dict[str, Any] | None) -> None:
    """Fires after a compression rotated the session, with the fidelity probe's verdict.

    :param session_id: the session that ended with ``compression``.
    :param new_session_id: the session that continues it with the compacted history.
    :param fidelity: the probe's result, or None when the engine reports none:
        ``score`` (0 to 1), ``checked``, ``missing`` (``"kind: text"`` items the new
        context lacks), ``summary_score`` and ``summary_missing`` (before any retry),
        ``retried``, ``restored`` (facts appended verbatim) and ``edited`` (a reviewed edit).

    The return value is ignored.
    """


# --- child agents -------------------------------------------------------------


@hookspec
def on_subagent_start(parent_session_id: str, session_id: str, task: str) -> None:
    """Fires when a sub-agent started by ``delegate_task`` begins its task.

    :param parent_session_id: the session that delegated.
    :param session_id: the sub-agent's own session.
    :param task: the task's goal as given to the sub-agent.

    The return value is ignored. A sub-agent fires none of its parent's other
    hooks: its own tool and model calls stay between it and the kernel.
    """


@hookspec
def on_subagent_stop(parent_session_id: str, session_id: str, task: str, status: str, summary: str) -> None:
    """Fires when a sub-agent finished, whatever its outcome; before ``on_delegation``.

    :param parent_session_id: the session that delegated.
    :param session_id: the sub-agent's own session.
    :param task: the task's goal.
    :param status: ``completed``, ``failed``, ``interrupted`` or ``budget_exhausted``.
    :param summary: its report (or why it failed).

    The return value is ignored.
    """


@hookspec
def on_delegation(parent_session_id: str, task: str, result: dict[str, Any]) -> None:
    """Fires when a sub-agent finished a delegated task.

    :param parent_session_id: the session that delegated.
    :param task: the task's goal as given to the sub-agent.
    :param result: its outcome: ``status``, ``summary``, ``session_id`` and more.

    The return value is ignored.
    """


# --- memory -------------------------------------------------------------------


@hookspec
def on_memory_write(action: str, target: str, content: str) -> None:
    """Fires after the builtin memory committed a write (mirror it elsewhere).

    :param action: ``add``, ``replace`` or ``remove``.
    :param target: ``memory`` (the agent's notes) or ``user`` (the user profile).
    :param content: the entry written, or the entry removed.

    The return value is ignored.
    """
