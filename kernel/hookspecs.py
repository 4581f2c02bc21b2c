"""Lifecycle hook specifications of the hermes kernel.

Every hook takes keyword arguments only. The kernel calls each implementation
separately (``PluginHost.call``), so one implementation that raises is logged
and recorded while the others still run and their results are still returned.
Implementations may accept any subset of a spec's arguments.
"""

from __future__ import annotations

from typing import Any

import pluggy

__all__ = ["hookimpl", "hookspec", "PROJECT_NAME"]

PROJECT_NAME = "hermes"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


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


# --- sessions -----------------------------------------------------------------


@hookspec
def on_session_switch(old_session_id: str | None, new_session_id: str, reason: str) -> None:
    """Fires when the active session changes.

    :param old_session_id: the session left behind, or None when there was none.
    :param new_session_id: the session now active.
    :param reason: one of ``compression``, ``branch``, ``resume``, ``new``, ``reset``.

    The return value is ignored.
    """


@hookspec
def on_session_end(session_id: str, messages: list[dict[str, Any]], reason: str) -> None:
    """Fires when a session really ends: exit, ``/new``, expiry. Never per turn.

    :param session_id: the session that ended.
    :param messages: its final message list.
    :param reason: why it ended (``user_exit``, ``new``, ``timeout``, ...).

    The return value is ignored.
    """


# --- command line -------------------------------------------------------------


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


# --- memory and delegation --------------------------------------------------------


@hookspec
def on_memory_write(action: str, target: str, content: str) -> None:
    """Fires after the builtin memory committed a write (mirror it elsewhere).

    :param action: ``add``, ``replace`` or ``remove``.
    :param target: ``memory`` (the agent's notes) or ``user`` (the user profile).
    :param content: the entry written, or the entry removed.

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
