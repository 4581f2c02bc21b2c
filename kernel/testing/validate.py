"""A strict check that a message list is one every provider API accepts.

Context engines, history repair and plugins that rewrite conversations all
have to hand the provider a list it takes. The rules here are the strictest
of the OpenAI Chat Completions and Anthropic Messages APIs together:

* roles are ``system``, ``user``, ``assistant`` or ``tool``; system messages
  only at the very start;
* the first message after them is a ``user`` message (Anthropic rejects an
  assistant first);
* no two ``user`` or two ``assistant`` messages in a row (a ``tool`` result
  followed by a ``user`` message is fine: both become one user turn);
* every assistant tool call (``id``, ``function.name``, JSON-object
  ``function.arguments``) is answered by exactly one ``tool`` result in the run
  of tool messages right after it, and every tool result answers such a call;
* no empty content: user and tool messages carry text (or content parts),
  an assistant message carries text or tool calls.

Use :func:`message_problems` for the list of what is wrong, or
:func:`validate_messages` to raise :class:`InvalidMessages` with all of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..arguments import decode_arguments

__all__ = ["InvalidMessages", "message_problems", "validate_messages"]

_ROLES = {"system", "user", "assistant", "tool"}
_PART_TYPES = {"text", "image_url", "image", "input_image"}


class InvalidMessages(ValueError):
    """A message list a provider would reject; ``problems`` lists every reason."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("invalid message list:\n  " + "\n  ".join(problems))


def _content_problem(content: Any) -> str | None:
    if isinstance(content, str):
        return None if content.strip() else "empty content"
    if isinstance(content, list):
        if not content:
            return "empty content (no parts)"
        for part in content:
            if not isinstance(part, dict) or part.get("type") not in _PART_TYPES:
                return f"unknown content part {part!r:.80}"
            if part["type"] == "text" and not str(part.get("text") or "").strip():
                return "an empty text part"
        return None
    return "empty content" if content is None else f"content of type {type(content).__name__}"


def _call_problems(where: str, call: Any) -> list[str]:
    if not isinstance(call, dict):
        return [f"{where}: a tool call that is not an object"]
    problems = []
    if not isinstance(call.get("id"), str) or not call["id"]:
        problems.append(f"{where}: a tool call without an id")
    function = call.get("function")
    if not isinstance(function, dict) or not function.get("name"):
        return [*problems, f"{where}: a tool call without a function name"]
    arguments = function.get("arguments")
    try:
        parsed = decode_arguments(arguments) if isinstance(arguments, str) and arguments.strip() else None
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        problems.append(f"{where}: tool call {call.get('id')!r} has arguments that are not a JSON object")
    return problems


def message_problems(messages: Sequence[dict[str, Any]], *, allow_system: bool = True) -> list[str]:
    """Every reason a provider would reject ``messages`` (empty when it is valid)."""
    problems: list[str] = []
    previous: str | None = None  # role of the previous non-system message
    open_calls: dict[str, bool] = {}  # ids of the current tool batch -> answered
    seen_non_system = False
    for index, message in enumerate(messages):
        where = f"message {index}"
        role = message.get("role") if isinstance(message, dict) else None
        if role not in _ROLES:
            problems.append(f"{where}: unknown role {role!r}")
            continue
        if role != "tool" and open_calls:
            missing = [c for c, answered in open_calls.items() if not answered]
            if missing:
                problems.append(f"{where}: tool calls {missing} have no result before this {role} message")
            open_calls = {}
        if role == "system":
            if not allow_system:
                problems.append(f"{where}: a system message where none is allowed")
            elif seen_non_system:
                problems.append(f"{where}: a system message after the conversation started")
            continue
        if not seen_non_system and role != "user":
            problems.append(f"{where}: the first message after the system prompt is {role!r}, not 'user'")
        seen_non_system = True
        if role in ("user", "assistant") and previous == role:
            problems.append(f"{where}: two {role} messages in a row")
        content = message.get("content")
        if role == "assistant":
            calls = message.get("tool_calls") or []
            if content not in (None, "") or not calls:
                issue = _content_problem(content)
                if issue:
                    problems.append(f"{where}: assistant message with {issue}" + ("" if calls else " and no tool calls"))
            for call in calls:
                problems.extend(_call_problems(where, call))
                call_id = call.get("id") if isinstance(call, dict) else None
                if isinstance(call_id, str) and call_id:
                    if call_id in open_calls:
                        problems.append(f"{where}: tool call id {call_id!r} used twice")
                    open_calls[call_id] = False
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if previous not in ("assistant", "tool") or call_id not in open_calls:
                problems.append(f"{where}: tool result {call_id!r} answers no call of the assistant message before it")
            elif open_calls[call_id]:
                problems.append(f"{where}: a second result for tool call {call_id!r}")
            else:
                open_calls[call_id] = True
            issue = _content_problem(content)
            if issue:
                problems.append(f"{where}: tool result with {issue}")
        else:
            issue = _content_problem(content)
            if issue:
                problems.append(f"{where}: user message with {issue}")
        previous = role
    missing = [c for c, answered in open_calls.items() if not answered]
    if missing:
        problems.append(f"end: tool calls {missing} have no result")
    if not seen_non_system:
        problems.append("no user message at all")
    return problems


def validate_messages(messages: Sequence[dict[str, Any]], *, allow_system: bool = True) -> None:
    """Raise :class:`InvalidMessages` unless every provider would accept ``messages``."""
    problems = message_problems(messages, allow_system=allow_system)
    if problems:
        raise InvalidMessages(problems)
