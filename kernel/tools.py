"""The tool contract: what a ``hermes.tools`` entry point provides.

A tool is a JSON schema for its arguments, a handler, the toolset it belongs
to, an optional availability check and an optional cap on its result size.
An entry point in ``hermes.tools`` is named after a toolset and names a
:class:`Tool`, a list of them, or a callable returning either, so one plugin
can ship a whole toolset; ``toolsets`` in config chooses which load.

A handler takes ``(args, ctx)`` and returns text or a JSON-able value. It
raises :class:`ToolError` for a failure the model should read; any other
exception is turned into an error result by the kernel as well, so a broken
tool never ends the turn.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "CARRY_OVER_KEY", "CLIENT_WRAPPER_SERVICE", "TENANT_SERVICE", "Tool", "ToolContext", "ToolError", "ToolHandler", "ToolSource",
    "tools_from_plugin",
]  # fmt: skip

#: ``ctx.state[CARRY_OVER_KEY]`` maps a heading to text that must survive a
#: compaction (the live todo list): the kernel adds it to the system prompt it
#: rebuilds at that boundary.
CARRY_OVER_KEY = "carry_over"
#: ``ctx.services[TENANT_SERVICE]`` is the tenant the agent works for (None: no tenant).
#: A tool that reads stored sessions shows it only that tenant's (``session_search`` does).
TENANT_SERVICE = "tenant"
#: ``ctx.services[CLIENT_WRAPPER_SERVICE]`` wraps any model client a tool opens for the agent
#: (an MCP server's sampling request): a server meters it like the agent's own calls.
CLIENT_WRAPPER_SERVICE = "model.client_wrapper"
#: ``ctx.services[ROUTE_SERVICE]`` is the model route (client and model) of the step that asked
#: for the tool call: a tool that needs the model (an MCP server's sampling) uses the turn's own.
ROUTE_SERVICE = "model.route"


class ToolError(Exception):
    """A failure the model should see as the tool's result (``error: <message>``)."""


def _never() -> bool:
    return False


@dataclass
class ToolContext:
    """What a handler may use besides its arguments.

    ``services`` carries kernel objects by name (``"store"`` for the session
    store, :data:`TENANT_SERVICE` for the agent's tenant, ...); a handler that
    needs one it was not given raises ToolError.
    ``state`` is scratch space that lives as long as the agent (the todo list).
    ``ask_user`` and ``approve`` exist only in an interactive session (the
    REPL); in one-shot mode they are None, so a question cannot be asked and a
    command that needs approval is denied.
    """

    session_id: str | None = None
    home: Any = None
    config: Any = None
    cwd: Path = field(default_factory=Path.cwd)
    services: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    ask_user: Callable[[str, list[str] | None], str] | None = None
    approve: Callable[[str, str], bool] | None = None
    is_interrupted: Callable[[], bool] = _never
    #: The agent's :class:`~hermes.kernel.hook_calls.CallHooks` (None outside an agent).
    hooks: Any = None

    @property
    def interactive(self) -> bool:
        return self.ask_user is not None

    def ask_approval(self, subject: str, reason: str) -> bool:
        """Ask :attr:`approve` (which must be set) about ``subject``, with the approval hooks around it.

        A tool calls this rather than ``approve`` itself, so a plugin can deny without asking
        (a ToolError naming it) and hears every decision.
        """
        assert self.approve is not None, "nobody to ask: check ctx.approve first"
        if self.hooks is None:
            return bool(self.approve(subject, reason))
        return bool(self.hooks.approve(self, subject, reason))


ToolHandler = Callable[[dict[str, Any], ToolContext], Any]


@dataclass(frozen=True)
class Tool:
    """One callable tool the model can use.

    ``read_only`` tools may run beside each other in one batch; tools with
    ``path_params`` may run beside each other when the paths named by those
    arguments do not overlap; ``interactive`` tools (they ask the user) never
    run in a parallel batch and are left out of one-shot sessions.
    ``spill_large_results=False`` keeps a big result inline instead of saving
    it to ``results/`` (read_file: saving it would invite a read-back loop).
    ``deferrable`` tools may wait behind ``tool_search`` when many tools are on
    offer (:mod:`.tool_search`); None: as the tool's source says (a
    :class:`ToolSource`'s tools are deferrable, fixed tools are not).
    """

    name: str
    description: str
    parameters: dict[str, Any]
    handler: ToolHandler
    toolset: str
    check: Callable[[], bool] | None = None
    max_result_chars: int | None = None
    read_only: bool = False
    path_params: tuple[str, ...] = ()
    interactive: bool = False
    spill_large_results: bool = True
    deferrable: bool | None = None

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


class ToolSource(ABC):
    """A toolset whose tools are only known at run time (MCP servers).

    An entry point (or its factory) may return one instead of a list of tools.
    The registry calls :meth:`configure` once when it loads the toolset, then
    :meth:`tools` whenever it needs the current list: the first call may block
    while the source connects; later calls should be cheap, and the list may
    change between calls. :meth:`close` releases what the source holds.
    """

    #: the toolset this source provides (the entry point's name)
    toolset: str = ""
    #: its tools whose ``deferrable`` is None may be deferred (:mod:`.tool_search`)
    defer_tools: bool = True

    def configure(self, config: Any, home: Any) -> None:
        """Receive the agent's config and home before the first :meth:`tools` call."""

    @abstractmethod
    def tools(self) -> list[Tool]:
        """The tools available now."""

    def interrupt(self) -> None:
        """The user interrupted (Ctrl-C): a :meth:`tools` call blocked on connecting returns now (thread-safe)."""

    def close(self) -> None:
        """Release connections and processes (idempotent)."""


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
