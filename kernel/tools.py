"""The tool contract: what a ``hermes.tools`` entry point provides.

A tool is a JSON schema for its arguments, a handler, the toolset it belongs
to, an optional availability check and an optional cap on its result size. An
entry point in ``hermes.tools`` names a :class:`Tool`, a list of them, or a
callable returning either, so one plugin can ship a whole toolset.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Tool", "ToolContext", "ToolHandler", "tools_from_plugin"]


@dataclass
class ToolContext:
    """What a handler may use besides its arguments.

    ``services`` carries kernel objects by name (``"store"`` for the session
    store, ...); a handler that needs one it was not given reports an error
    result rather than raising.
    """

    session_id: str | None = None
    home: Any = None
    config: Any = None
    services: dict[str, Any] = field(default_factory=dict)


ToolHandler = Callable[[dict[str, Any], ToolContext], Any]


@dataclass(frozen=True)
class Tool:
    """One callable tool the model can use."""

    name: str
    description: str
    parameters: dict[str, Any]
    handler: ToolHandler
    toolset: str
    check: Callable[[], bool] | None = None
    max_result_chars: int | None = None

    def is_available(self) -> bool:
        """True when the tool's dependencies and configuration are present."""
        return self.check is None or bool(self.check())

    def schema(self) -> dict[str, Any]:
        """The OpenAI Chat ``tools`` entry for this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


def tools_from_plugin(obj: Any) -> list[Tool]:
    """The tools named by a ``hermes.tools`` entry point (a Tool, a list, or a factory)."""
    if callable(obj) and not isinstance(obj, Tool):
        obj = obj()
    items: Iterable[Any] = [obj] if isinstance(obj, Tool) else obj
    tools = list(items)
    for item in tools:
        if not isinstance(item, Tool):
            raise TypeError(f"expected a hermes.kernel.Tool, got {type(item).__name__}")
    return tools
