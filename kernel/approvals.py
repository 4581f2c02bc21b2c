"""Who approves what a tool needs approval for: the user, nobody (one-shot), or everything (--yolo).

A tool asks through ``ToolContext.approve(subject, reason)``. That callback is the one switch:
the REPL prompts, a one-shot run has none (so anything needing approval is refused), and
``--yolo`` or ``approvals.mode: off`` installs :func:`approve_everything`. Deny lists (the path
policy's credential files) are checked before approval is asked, so no mode opens them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .errors import ConfigError

__all__ = ["APPROVAL_MODES", "Approver", "approval_callback", "approve_everything", "approvals_off"]

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
