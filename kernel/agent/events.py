"""Progress events for whoever displays a turn, and the one way every part of the agent sends them."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AgentEvent", "EventHandler", "emit"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AgentEvent:
    """Progress for whoever displays it: ``kind`` and details.

    Kinds: ``text`` / ``reasoning`` (streamed pieces), ``tool_start``,
    ``tool_end``, ``status`` (retries, fallbacks, compression, notes).
    """

    kind: str
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)


#: ``on_event(event)``: shows an event; what it raises is logged, never the turn's end.
EventHandler = Callable[[AgentEvent], None]


def emit(on_event: EventHandler | None, kind: str, text: str, **data: Any) -> None:
    """Send one event to ``on_event`` (if any); a display problem must not end the turn."""
    if on_event is None:
        return
    try:
        on_event(AgentEvent(kind, text, data))
    except Exception:
        log.debug("event handler failed", exc_info=True)
