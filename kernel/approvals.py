"""Who approves what a tool needs approval for: the user, nobody (one-shot), everything (--yolo), or a server's allow-list.

A tool asks through ``ToolContext.approve(subject, reason)``. That callback is the one switch:
the REPL prompts, a one-shot run has none (so anything needing approval is refused), and
``--yolo`` or ``approvals.mode: off`` installs :func:`approve_everything`. Deny lists (the path
policy's credential files) are checked before approval is asked, so no mode opens them.

On a server nobody can be asked. ``serve.approvals: allow-list`` installs a
:class:`CommandAllowList`: a command that needs approval runs only when **every part it
executes** matches one of the ``serve.allowed_commands`` patterns on its own. This module is
the one place that rule lives:

* The command is read by the same parser as the terminal's command rule (:mod:`hermes.kernel.shell`,
  :mod:`hermes.kernel.command_safety`):
  every simple command of a list (``;``, ``&&``, ``||``, ``&``, newlines), of a pipeline, of a
  subshell or ``{ …; }`` group, inside ``$(…)``, backticks, ``<(…)``/``>(…)``, the text of
  ``sh -c``/``bash -c``/``eval``, ``find -exec`` and ``ssh host …``.
* A pattern is an ``fnmatch`` glob (``*``, ``?``, ``[…]``, case-sensitive) over **one whole
  simple command**: its words joined by single spaces, quotes removed, wrappers (``sudo``,
  ``env``, ``xargs`` …) and leading ``VAR=value`` assignments kept, ``if``/``then``/``do``/``{``
  dropped. ``git push origin *`` matches ``git push origin main`` but not the
  ``rm -rf ~`` of ``git push origin main; rm -rf ~``, which is a part of its own.
* Each redirection is a part of its own, ``> TARGET`` or ``< SOURCE`` (``>>``, ``&>`` and
  ``2>`` read as ``>``): ``git status > ~/.bashrc`` needs a pattern for ``> ~/.bashrc`` too.
  Only ``/dev/null``, ``/dev/stdout``, ``/dev/stderr`` and descriptor copies (``2>&1``) pass
  without one.
* ``sh -c TEXT``, ``bash -c TEXT`` (exactly those words) and ``eval …`` are not parts: the
  commands in their text are. Any other shell invocation is a part like any command.
* What the parser cannot read before it runs is refused whatever the patterns: a program
  named by a variable, a substitution or a glob (``$CMD x``, ``$(cat f) x``, ``/???/rm``),
  text nested deeper than the parser follows, unbalanced quotes. On a server these are
  refused even when the command rule would pass them (:func:`unreadable_part`).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError

__all__ = [
    "ALLOWED_COMMANDS_KEY",
    "APPROVAL_MODES",
    "UNATTENDED_SERVICE",
    "Approver",
    "CommandAllowList",
    "approval_callback",
    "approve_everything",
    "approvals_off",
    "command_parts",
    "is_unattended",
    "unreadable_part",
]

#: ``ask``: the REPL asks, a one-shot run refuses; ``off``: everything is approved.
APPROVAL_MODES = ("ask", "off")

Approver = Callable[[str, str], bool]


def approve_everything(subject: str, reason: str) -> bool:
    """The approver of ``--yolo`` and ``approvals.mode: off``: yes to everything it is asked."""
    return True


def approvals_off(config: Any) -> bool:
    """True when ``approvals.mode`` is ``off``; an unknown mode is a ConfigError naming the choices."""
    mode = config.get("approvals.mode", "ask") if config is not None else "ask"
    mode = "off" if mode is False else str(mode or "ask")  # YAML reads a bare `off` as False
    if mode not in APPROVAL_MODES:
        raise ConfigError(
            f"approvals.mode must be one of {', '.join(APPROVAL_MODES)}, got {mode!r}; "
            "fix it with `hermes config set approvals.mode ask`"
        )
    return mode == "off"


def approval_callback(config: Any, prompt: Approver | None, *, yolo: bool = False) -> Approver | None:
    """The ``approve`` callback for a session: ``prompt`` (None in one-shot), or approve-all."""
    if approvals_off(config) or yolo:
        return approve_everything
    return prompt


#: The config key that holds a server's allow-list.
ALLOWED_COMMANDS_KEY = "serve.allowed_commands"
#: ``ToolContext.services`` key set (True) by front-ends where nobody can be asked (``hermes serve``).
UNATTENDED_SERVICE = "unattended"

_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_LEADING_KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "time"})
_UNKNOWN_PROGRAM = re.compile(r"[$`*?\[]")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _shells() -> frozenset[str]:
    from .shell import SHELLS

    return SHELLS


def _as_run(words: list[str]) -> list[str]:
    """The words of a simple command without the reserved words in front (``if``, ``do``, ``{`` …)."""
    index = 0
    while index < len(words) and words[index] in _LEADING_KEYWORDS:
        index += 1
    return words[index:]


def _transparent(words: list[str]) -> bool:
    """``sh -c TEXT`` / ``bash -c TEXT`` / ``eval …``: only the commands in the text are parts."""
    if words and words[0] == "eval":
        return True
    return len(words) == 3 and words[0] in _shells() and words[1] == "-c"


def _program(words: list[str]) -> str:
    for word in words:
        if not _ASSIGNMENT.match(word):
            return word
    return ""


def _unreadable(command: Any) -> str | None:
    """Why the parser cannot know what this simple command runs, or None."""
    if command.note:
        return f"the parser cannot read it ({command.note})"
    words = _as_run(command.words)
    for program in (_program(words), command.name):
        if program and _UNKNOWN_PROGRAM.search(program):
            return f"its program `{program}` is only known when it runs (a variable, substitution or glob)"
    return None


def command_parts(command: str) -> list[tuple[str, str | None]]:
    """Every part ``command`` executes, in order, as ``(text a pattern must match, why it is unreadable or None)``."""
    from .shell import simple_commands

    parts: list[tuple[str, str | None]] = []
    for parsed in simple_commands(command):
        words = _as_run(parsed.words)
        unreadable = _unreadable(parsed)
        if unreadable is not None:
            parts.append((" ".join(words) or command.strip(), unreadable))
            continue
        if words and not _transparent(words):
            parts.append((" ".join(words), None))
        for target in parsed.writes:
            if target and not target.isdigit() and target != "-" and target not in _HARMLESS_TARGETS:
                parts.append((f"> {target}", None))
        for source in parsed.reads:
            if source and not source.isdigit() and source != "-" and source not in _HARMLESS_TARGETS:
                parts.append((f"< {source}", None))
    return parts


def unreadable_part(command: str) -> str | None:
    """A sentence naming the first part of ``command`` the parser cannot read before it runs, or None."""
    for text, unreadable in command_parts(command):
        if unreadable is not None:
            return f"`{text}` cannot be checked: {unreadable}"
    return None


@dataclass(frozen=True)
class CommandAllowList:
    """The approver of ``serve.approvals: allow-list``: yes only when every executed part matches a pattern.

    Called as an approver with the command as its subject; :meth:`refusal` says which part
    was not allowed (the terminal tool puts that in its error).
    """

    patterns: tuple[str, ...]
    config_key: str = ALLOWED_COMMANDS_KEY

    def allows(self, part: str) -> bool:
        """True when one pattern matches the whole ``part`` (one simple command or one redirection)."""
        return any(fnmatch.fnmatchcase(part, " ".join(pattern.split())) for pattern in self.patterns if pattern.strip())

    def refusal(self, command: str) -> str | None:
        """None when ``command`` may run; otherwise a sentence naming the part that may not."""
        parts = command_parts(command)
        for text, unreadable in parts:
            if unreadable is not None:
                return f"`{text}` cannot be checked against {self.config_key}: {unreadable}"
        for text, _ in parts:
            if not self.allows(text):
                return f"`{text}` is not allowed by any pattern in {self.config_key}"
        return None

    def __call__(self, subject: str, reason: str) -> bool:
        return self.refusal(subject) is None


def is_unattended(ctx: Any) -> bool:
    """True where nobody can be asked to approve (a server): its allow-list, or the front-end says so."""
    return isinstance(getattr(ctx, "approve", None), CommandAllowList) or bool(
        (getattr(ctx, "services", None) or {}).get(UNATTENDED_SERVICE)
    )
