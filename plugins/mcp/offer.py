"""Which MCP tools are offered, under which names, and what the model is told.

The list of tools a source hands the registry must say what is true: every
tool passes the server's ``include``/``exclude`` (resource and prompt tools
too), a server that gave up restarting offers nothing (and the model hears of
it once), and no two tools share a name after sanitising.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections.abc import Callable
from typing import Any

from hermes.kernel import Tool, ToolError

__all__ = ["Notices", "OFFERED_STATUSES", "unique_names"]

log = logging.getLogger(__name__)

_MAX_NAME = 64
#: server states whose tools are offered: up, or coming back after a crash
OFFERED_STATUSES = frozenset({"ready", "starting", "restarting"})


def _suffixed(name: str, origin: str, length: int) -> str:
    digest = hashlib.sha256(origin.encode()).hexdigest()[:length]
    return f"{name[: _MAX_NAME - length - 1]}_{digest}"


def unique_names(tools: list[Tool], origins: list[str], warned: set[str]) -> list[Tool]:
    """``tools`` with clashing names made distinct, deterministically.

    ``origins[i]`` is ``server/tool`` as the server spells it. Of the tools
    that share a name, the one whose origin sorts first keeps it; the others
    get ``_<hash of origin>``, so the same servers give the same names in
    every session whatever order they list in. Each clash is warned about
    once (``warned`` remembers which).
    """
    by_name: dict[str, list[int]] = {}
    for index, tool in enumerate(tools):
        by_name.setdefault(tool.name, []).append(index)
    taken = set(by_name)
    renamed = list(tools)
    for name, indexes in by_name.items():
        if len(indexes) < 2:
            continue
        ordered = sorted(indexes, key=lambda i: origins[i])
        for index in ordered[1:]:
            length = 6
            new = _suffixed(name, origins[index], length)
            while new in taken:  # a suffix that clashes again: a longer one
                length += 2
                new = _suffixed(name, origins[index], length)
            taken.add(new)
            renamed[index] = dataclasses.replace(tools[index], name=new)
            if origins[index] not in warned:
                warned.add(origins[index])
                log.warning(
                    "mcp: tool %s is offered as %s: its name %s is already used by %s",
                    origins[index], new, name, origins[ordered[0]],
                )  # fmt: skip
    return renamed


class Notices:
    """Lines the model must read once, added to the next MCP tool result."""

    def __init__(self) -> None:
        self._pending: list[str] = []
        self._told: set[str] = set()

    def add_once(self, key: str, line: str) -> None:
        if key not in self._told:
            self._told.add(key)
            self._pending.append(line)

    def forget(self, key: str) -> None:
        """``key`` may be told again (the server came back)."""
        self._told.discard(key)

    def take(self) -> str:
        lines, self._pending = self._pending, []
        return "\n".join(lines)

    def wrap(self, handler: Callable[[dict[str, Any], Any], str]) -> Callable[[dict[str, Any], Any], str]:
        """``handler`` whose result (or error) carries the pending notices."""

        def noted(args: dict[str, Any], ctx: Any) -> str:
            try:
                text = handler(args, ctx)
            except ToolError as exc:
                note = self.take()
                if note:
                    raise ToolError(f"{exc}\n{note}") from None
                raise
            note = self.take()
            return f"{text}\n{note}" if note else text

        return noted

