"""The tools of one agent: loading by toolset, dispatch, and safe parallel batches.

Nothing a model sends can crash a turn here: an unknown tool, arguments that
are not a JSON object (or are too long or nested too deep, :mod:`.arguments`),
or a handler that raises all become an error result the model reads on its
next step.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .arguments import ArgumentsError, decode_arguments
from .approval_records import collecting_decisions, with_decisions
from .tool_search import TOOL_SEARCH, DeferralSettings, ToolSearch
from .tools import Tool, ToolContext, ToolError, ToolSource, tools_from_plugin

if TYPE_CHECKING:
    from .host import PluginHost

__all__ = ["TOOLS_GROUP", "ToolCall", "ToolRegistry", "ToolResult", "plan_batches"]

log = logging.getLogger(__name__)

TOOLS_GROUP = "hermes.tools"
_MAX_PARALLEL = 8


@dataclass(frozen=True)
class ToolCall:
    """A tool call as the model sent it (canonical OpenAI Chat form)."""

    id: str
    name: str
    arguments: str

    @classmethod
    def from_message(cls, call: dict[str, Any]) -> ToolCall:
        function = call.get("function") or {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            # Some servers send an object; keep it as the JSON text it stands for.
            arguments = json.dumps(arguments if arguments is not None else {})
        return cls(id=str(call.get("id") or ""), name=str(function.get("name") or ""), arguments=arguments)


@dataclass
class ToolResult:
    """What goes back to the model as a ``tool`` message."""

    call_id: str
    name: str
    content: str
    is_error: bool = False
    duration: float = 0.0

    def as_message(self) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": self.call_id, "tool_name": self.name, "content": self.content}


def _render(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


class ToolRegistry:
    """An ordered set of tools by name (order is kept so schemas stay byte-stable).

    Besides fixed tools it holds :class:`ToolSource` objects whose tools are
    found at run time; a source is first asked for its tools when the schemas
    or a tool are needed (so an MCP server starts on the first model call, not
    when the agent is built), and asked again each time, so its list may change.
    A fixed tool wins over a source's tool of the same name. Past a threshold
    the schemas of deferrable tools wait behind ``tool_search`` (:meth:`offer`,
    :mod:`.tool_search`); :attr:`search` holds what was loaded and the counts.
    """

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._sources: list[ToolSource] = []
        self._started: set[int] = set()  # ids of sources asked for their tools at least once
        self._marked: dict[int, tuple[list[Tool], list[Tool]]] = {}  # a source's list, and it marked deferrable
        self.search = ToolSearch()
        for tool in tools:
            self.add(tool)

    @classmethod
    def load(
        cls,
        host: PluginHost,
        toolsets: Sequence[str] | None = None,
        *,
        interactive: bool = False,
        config: Any = None,
        home: Any = None,
    ) -> ToolRegistry:
        """Tools of ``toolsets`` (all installed toolsets when empty or None).

        A toolset that fails to load is recorded by the host and skipped;
        unavailable tools (failed ``check``) and, outside an interactive
        session, interactive tools are left out. An unknown toolset name raises
        PluginNotFoundError listing the installed ones. A toolset that is a
        :class:`ToolSource` is configured with ``config`` and ``home`` and
        joins as a source.
        """
        registry = cls()
        for plugin in host.extensions(TOOLS_GROUP, list(toolsets) if toolsets else None):
            try:
                obj = plugin.obj
                if callable(obj) and not isinstance(obj, Tool):
                    obj = obj()
                if isinstance(obj, ToolSource):
                    obj.toolset = obj.toolset or plugin.name
                    obj.configure(config, home)
                    registry.add_source(obj)
                    continue
                tools = tools_from_plugin(obj)
            except Exception as exc:
                host.load_failures[(TOOLS_GROUP, plugin.name)] = f"{type(exc).__name__}: {exc}"
                log.warning("toolset %r could not be loaded: %s", plugin.name, exc)
                continue
            for tool in tools:
                if tool.interactive and not interactive:
                    continue
                try:
                    available = tool.is_available()
                except Exception as exc:  # a broken check means unavailable, not a crash
                    log.warning("availability check of tool %r raised %s", tool.name, exc)
                    available = False
                if available:
                    registry.add(tool)
        return registry

    def add(self, tool: Tool) -> None:
        """Add ``tool``; a second tool of the same name is refused (the first wins)."""
        if tool.name in self._tools:
            log.warning(
                "tool %r from toolset %r ignored: %r already provides it",
                tool.name, tool.toolset, self._tools[tool.name].toolset,
            )
            return
        self._tools[tool.name] = tool

    def add_source(self, source: ToolSource) -> None:
        """Add a run-time tool source; it is not asked for tools until they are needed."""
        self._sources.append(source)

    @property
    def sources(self) -> list[ToolSource]:
        return list(self._sources)

    def interrupt(self) -> None:
        """Tell every source the user interrupted, so none keeps the turn waiting on a connection."""
        for source in self._sources:
            try:
                source.interrupt()
            except Exception as exc:
                log.warning("interrupting tool source %r failed: %s", source.toolset, exc)

    def close(self) -> None:
        """Close every source (their connections and processes)."""
        for source in self._sources:
            try:
                source.close()
            except Exception as exc:  # closing one source must not leave the others open
                log.warning("closing tool source %r failed: %s", source.toolset, exc)

    def _all(self, *, start: bool = True) -> dict[str, Tool]:
        if not self._sources:
            return self._tools
        tools = dict(self._tools)
        for source in self._sources:
            if not start and id(source) not in self._started:
                continue
            self._started.add(id(source))
            try:
                found = self._deferrable(source, source.tools())
            except Exception as exc:  # a broken source loses its tools, not the turn
                log.warning("tool source %r failed: %s", source.toolset, exc)
                continue
            for tool in found:
                tools.setdefault(tool.name, tool)
        return tools

    def _deferrable(self, source: ToolSource, found: list[Tool]) -> list[Tool]:
        """``found`` with ``deferrable`` settled by the source (a source that caches its list is marked once)."""
        cached = self._marked.get(id(source))
        if cached is not None and cached[0] is found:
            return cached[1]
        marked = [t if t.deferrable is not None else replace(t, deferrable=source.defer_tools) for t in found]
        self._marked[id(source)] = (found, marked)
        return marked

    def remove(self, name: str) -> None:
        self._tools.pop(name, None)

    def get(self, name: str) -> Tool | None:
        tool = self._tools.get(name)
        if tool is None and name == TOOL_SEARCH and self.search.active:
            return self.search.tool
        return tool if tool is not None or not self._sources else self._all().get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._all()

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._all().values())

    def __len__(self) -> int:
        return len(self._all())

    @property
    def names(self) -> list[str]:
        """Names of the tools known without starting a source that was never asked yet."""
        return list(self._all(start=False))

    def schemas(self) -> list[dict[str, Any]]:
        """Every tool's schema (what a request would carry without deferral; see :meth:`offer`)."""
        return [tool.schema() for tool in self._all().values()]

    def offer(
        self,
        config: Any = None,
        *,
        context_length: int | None = None,
        max_tools: int | None = None,
        history: Iterable[Mapping[str, Any]] = (),
        record: bool = False,
        provider: str = "the provider",
    ) -> list[dict[str, Any]]:
        """The schemas one request carries: deferred past ``tools.defer.*``, never more than ``max_tools``."""
        return self.search.plan(
            list(self._all().values()), DeferralSettings.from_config(config), context_length=context_length,
            max_tools=max_tools, history=history, record=record, provider=provider,
        )  # fmt: skip

    # --- dispatch -------------------------------------------------------------

    def dispatch(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        """Run one call; every failure becomes an error result, never an exception."""
        started = time.perf_counter()
        with collecting_decisions() as decisions:  # the approvals this call asked for are stored with its result
            # The agent's tool-call hooks wrap the call (kernel/hook_calls.py); none outside an agent.
            result = self._dispatch(call, ctx) if ctx.hooks is None else ctx.hooks.run_tool(call, ctx, self._dispatch)
        result.content = with_decisions(result.content, decisions)
        result.duration = time.perf_counter() - started
        return result

    def _dispatch(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        def error(message: str) -> ToolResult:
            return ToolResult(call.id, call.name, f"error: {message}", is_error=True)

        tool = self.get(call.name)
        if tool is not None:
            self.search.note_call(call.name)
        if tool is None:
            names = list(self._all())
            if self.search.active or len(names) > 50:
                listing = f"{len(names)} tools exist; find the one you need with {TOOL_SEARCH}" if self.search.active \
                    else f"{len(names)} tools exist, among them: {', '.join(names[:50])}"
                return error(f"unknown tool {call.name!r}; {listing}")
            return error(f"unknown tool {call.name!r}; available tools: {', '.join(names) or 'none'}")
        try:
            args = decode_arguments(call.arguments)
        except ArgumentsError as exc:
            return error(f"the arguments for {call.name} {exc}; send a single JSON object")
        if not isinstance(args, dict):
            return error(f"the arguments for {call.name} must be a JSON object, not {type(args).__name__}")
        try:
            value = tool.handler(args, ctx)
        except ToolError as exc:
            return error(str(exc))
        except Exception as exc:
            log.warning("tool %s raised %s: %s", call.name, type(exc).__name__, exc)
            log.debug("tool failure", exc_info=exc)
            return error(f"{call.name} failed: {type(exc).__name__}: {exc}")
        return ToolResult(call.id, call.name, _render(value))

    def run(self, calls: Sequence[ToolCall], ctx: ToolContext) -> list[ToolResult]:
        """Run a step's calls, concurrently where safe; results in call order."""
        results: list[ToolResult] = []
        for batch in plan_batches(calls, self, ctx.cwd):
            if len(batch) == 1:
                results.append(self.dispatch(batch[0], ctx))
                continue
            with ThreadPoolExecutor(max_workers=min(_MAX_PARALLEL, len(batch))) as pool:
                results.extend(pool.map(lambda c: self.dispatch(c, ctx), batch))
        return results


def _paths(call: ToolCall, tool: Tool, cwd: Path) -> list[Path] | None:
    """Resolved paths a path tool touches, or None when they cannot be told."""
    try:
        args = decode_arguments(call.arguments)
    except ArgumentsError:
        return None
    if not isinstance(args, dict):
        return None
    paths = []
    for param in tool.path_params:
        value = args.get(param, ".")
        if not isinstance(value, str):
            return None
        paths.append(Path(os.path.normpath(cwd / os.path.expanduser(value))))
    return paths


def _overlap(a: Path, b: Path) -> bool:
    return a == b or a in b.parents or b in a.parents


def plan_batches(calls: Sequence[ToolCall], registry: ToolRegistry, cwd: Path) -> list[list[ToolCall]]:
    """Split calls into consecutive batches that are safe to run concurrently.

    A call joins the current batch only if its tool is read-only or names its
    paths, is not interactive, and touches no path that a writer in the batch
    touches (or, for a writer, that anything in the batch touches). Everything
    else runs alone. Concatenating the batches gives back the calls in order.
    """
    batches: list[list[ToolCall]] = []
    current: list[ToolCall] = []
    touched: list[tuple[Path, bool]] = []  # (path, written) in the current batch

    def flush() -> None:
        nonlocal current, touched
        if current:
            batches.append(current)
        current, touched = [], []

    for call in calls:
        tool = registry.get(call.name)
        paths = _paths(call, tool, cwd) if tool is not None else None
        safe = (
            tool is not None
            and not tool.interactive
            and (tool.read_only or bool(tool.path_params))
            and (paths is not None or not tool.path_params)
        )
        if not safe:
            flush()
            batches.append([call])
            continue
        assert tool is not None
        writes = not tool.read_only
        mine = [(p, writes) for p in paths or []]
        if any(_overlap(p, q) and (w or v) for p, w in mine for q, v in touched):
            flush()
        current.append(call)
        touched.extend(mine)
    flush()
    return batches
