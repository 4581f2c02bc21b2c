"""The ``mcp`` toolset: every configured MCP server's tools as kernel Tools.

Tools are named ``mcp_<server>_<tool>``; a server that lists resources adds
``mcp_<server>_list_resources`` and ``mcp_<server>_read_resource``, one with
prompts ``mcp_<server>_get_prompt``; ``include``/``exclude`` filter all of
them, and :mod:`.offer` keeps names distinct and withdraws dead servers. All servers of one home share one
:class:`~.hub.McpHub` per process, started the first time the tools are
needed and stopped when the process exits.
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes.kernel import Tool, ToolContext, ToolError, ToolSource

from .convert import render_result, safe_schema, tool_name
from .offer import OFFERED_STATUSES, Notices, unique_names

if TYPE_CHECKING:  # the hub (asyncio, threads) is imported only once a server is configured
    from .hub import McpHub, ServerState
from .settings import GlobalSettings, ServerSpec, env_lookup, parse_servers

__all__ = ["McpToolSource", "admin", "close_all_hubs", "hub_for"]

log = logging.getLogger(__name__)

_HUBS: dict[str, McpHub] = {}


def hub_for(config: Any, home: Any, *, sampler: Any = None) -> McpHub:
    """The process's hub for this home and ``mcp`` section (created, not started)."""
    from .hub import McpHub

    section = config.get("mcp", {}) if config is not None else {}
    section = section if isinstance(section, dict) else {}
    key = json.dumps([str(getattr(home, "path", "")), section], sort_keys=True, default=str)
    hub = _HUBS.get(key)
    if hub is None:
        specs, problems = parse_servers(section)
        for problem in problems:
            log.warning("mcp: %s", problem)
        log_dir = getattr(home, "path", None)
        hub = McpHub(
            specs,
            GlobalSettings.from_config(section),
            lookup=env_lookup(home),
            log_dir=Path(log_dir) / "logs" if log_dir is not None else None,
            sampler=sampler,
        )
        _HUBS[key] = hub
    return hub


def close_all_hubs() -> None:
    """Stop every hub of this process (runs at exit)."""
    while _HUBS:
        _, hub = _HUBS.popitem()
        hub.close(timeout=2.0)
    from .children import CHILDREN

    CHILDREN.stop_all()  # whatever an orderly close could not stop


atexit.register(close_all_hubs)


class McpToolSource(ToolSource):
    """Tools of the servers in ``mcp.servers``; none (and no process) when there are none."""

    toolset = "mcp"

    def __init__(self) -> None:
        self.hub: McpHub | None = None
        self.sampler: Any = None
        self._results_dir: Path | None = None
        self._cache: tuple[tuple[Any, ...], list[Tool]] | None = None
        self._stop_waiting = threading.Event()  # set by interrupt(): Ctrl-C during start-up
        self._notices = Notices()
        self._clashes_warned: set[str] = set()

    def configure(self, config: Any, home: Any) -> None:
        if config is None:  # loaded outside an agent: the active home's config
            from hermes.kernel import load_config, resolve_home

            home = home or resolve_home()
            config = load_config(home)
        from .sampling import Sampler

        section = config.get("mcp", {}) or {}
        self.sampler = Sampler(GlobalSettings.from_config(section if isinstance(section, dict) else {}), config, home)
        if self.hub is not None:
            self.close()  # configured again: let go of the previous hub
        results = getattr(home, "results_dir", None)
        self._results_dir = Path(results) if results is not None else None
        specs, problems = parse_servers(section if isinstance(section, dict) else {})
        if not specs:  # nothing to serve: no hub, and the chat pays nothing for MCP
            for problem in problems:
                log.warning("mcp: %s", problem)
            return
        self.hub = hub_for(config, home, sampler=self.sampler)
        self.hub.users += 1
        if self.hub.sampler is not self.sampler:  # a shared hub: calls bind its sampler
            self.sampler = self.hub.sampler

    def tools(self) -> list[Tool]:
        hub = self.hub
        if hub is None or not hub.states:
            return []
        hub.start()
        # After Ctrl-C, servers still starting are not waited for again; they join once up.
        hub.wait_ready(stop=self._stop_waiting)
        if all(s.status not in ("idle", "starting") for s in hub.states.values()):
            self._stop_waiting.clear()
        hub.wait_relisted()  # a tool added mid-session is offered on the very next step
        states = list(hub.states.values())
        # Rebuild only when a server's listing changed (tools/list_changed, restart).
        key = tuple((s.spec.name, s.status in OFFERED_STATUSES, id(s.tools), id(s.prompts)) for s in states)
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        tools: list[Tool] = []
        origins: list[str] = []
        for state in states:
            if state.status not in OFFERED_STATUSES:
                if state.status == "failed" and state.started_at:  # it was up, then gave up: tell the model
                    self._notices.add_once(
                        state.spec.name,
                        f"note: MCP server {state.spec.name!r} is down for good ({state.error}); "
                        "its tools were withdrawn",
                    )  # fmt: skip
                continue
            self._notices.forget(state.spec.name)
            for origin, tool in self._server_tools(state):
                origins.append(f"{state.spec.name}/{origin}")
                tools.append(dataclasses.replace(tool, handler=self._notices.wrap(tool.handler)))
        tools = unique_names(tools, origins, self._clashes_warned)
        self._cache = (key, tools)
        return tools

    def interrupt(self) -> None:
        """Ctrl-C: a :meth:`tools` call waiting for servers to start returns what is up now."""
        self._stop_waiting.set()

    def close(self) -> None:
        """Let go of the hub; the last source using it stops its servers."""
        hub, self.hub = self.hub, None
        if hub is None:
            return
        hub.users -= 1
        if hub.users <= 0:
            for key, value in list(_HUBS.items()):
                if value is hub:
                    del _HUBS[key]
            hub.close()

    @staticmethod
    def admin(config: Any, home: Any) -> Any:
        """Configured servers, status and probes for ``hermes mcp`` (nothing starts until asked)."""
        return admin(config, home)

    # --- tools of one server ------------------------------------------------------

    def _server_tools(self, state: ServerState) -> list[tuple[str, Tool]]:
        """``(name on the server, Tool)`` for every tool ``include``/``exclude`` let through."""
        spec = state.spec
        tools: list[tuple[str, Tool]] = []
        for listed in state.tools:
            name = str(listed.get("name", ""))
            if not name:
                continue
            description = str(listed.get("description") or listed.get("title") or name).strip()
            tools.append((name,
                Tool(
                    name=tool_name(spec.name, name),
                    description=f"[MCP server {spec.name}] {description}",
                    parameters=safe_schema(listed.get("inputSchema")),
                    handler=self._caller(spec, name),
                    toolset="mcp",
                    read_only=spec.parallel_safe,  # parallel_safe servers' calls may share a batch
                ),
            ))  # fmt: skip
        if state.has_resources:
            tools += zip(("list_resources", "read_resource"), self._resource_tools(spec), strict=True)
        if state.has_prompts and state.prompts:
            tools.append(("get_prompt", self._prompt_tool(spec, state.prompts)))
        # The filter applies to every tool the server contributes, resource and prompt tools too.
        return [(name, tool) for name, tool in tools if spec.wants(name)]

    def _run(self, spec: ServerSpec, ctx: ToolContext, what: str, operation: Callable[[Any], Any]) -> Any:
        assert self.hub is not None
        if self.sampler is not None:
            self.sampler.bind(ctx)
        from .hub import McpCallError

        try:
            return self.hub.run(spec.name, operation, is_interrupted=ctx.is_interrupted, what=what)
        except McpCallError as exc:
            raise ToolError(str(exc)) from None

    def _render(self, result: Any, stem: str) -> str:
        from hermes.kernel.redact import redact_text

        data = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        return render_result(
            data.get("content") or [], data.get("structuredContent"),
            results_dir=self._results_dir, stem=stem, redact=redact_text,
        )  # fmt: skip

    def _caller(self, spec: ServerSpec, tool: str) -> Callable[[dict[str, Any], ToolContext], str]:
        def call(args: dict[str, Any], ctx: ToolContext) -> str:
            result = self._run(
                spec, ctx, f"tool {tool}",
                lambda session: session.call_tool(tool, args, read_timeout_seconds=spec.timeout),
            )  # fmt: skip
            text = self._render(result, f"mcp-{spec.name}")
            if getattr(result, "is_error", False):
                raise ToolError(f"MCP tool {tool} on {spec.name!r} reported an error: {text}")
            return text

        return call

    def _resource_tools(self, spec: ServerSpec) -> list[Tool]:
        def list_resources(args: dict[str, Any], ctx: ToolContext) -> str:
            async def op(session: Any) -> Any:
                listed = await session.list_resources()
                return [r.model_dump(mode="json", by_alias=True, exclude_none=True) for r in listed.resources]

            resources = self._run(spec, ctx, "list_resources", op)
            if not resources:
                return "no resources"
            return "\n".join(
                f"- {r.get('uri')} ({r.get('name', '')}{', ' + r['mimeType'] if r.get('mimeType') else ''})"
                f"{': ' + r['description'] if r.get('description') else ''}"
                for r in resources
            )

        def read_resource(args: dict[str, Any], ctx: ToolContext) -> str:
            uri = args.get("uri")
            if not isinstance(uri, str) or not uri:
                raise ToolError("read_resource needs `uri`, as listed by list_resources")
            result = self._run(spec, ctx, f"read_resource {uri}", lambda session: session.read_resource(uri))
            from hermes.kernel.redact import redact_text

            data = result.model_dump(mode="json", by_alias=True, exclude_none=True)
            blocks = [{"type": "resource", "resource": c} for c in data.get("contents") or []]
            return render_result(blocks, results_dir=self._results_dir, stem=f"mcp-{spec.name}", redact=redact_text)

        return [
            Tool(
                name=tool_name(spec.name, "list_resources"),
                description=f"[MCP server {spec.name}] List the resources (documents, data) this server offers.",
                parameters={"type": "object", "properties": {}},
                handler=list_resources, toolset="mcp", read_only=True,
            ),
            Tool(
                name=tool_name(spec.name, "read_resource"),
                description=f"[MCP server {spec.name}] Read one resource by its URI.",
                parameters={"type": "object", "properties": {"uri": {"type": "string", "description": "The resource URI."}},
                            "required": ["uri"]},
                handler=read_resource, toolset="mcp", read_only=True,
            ),
        ]  # fmt: skip

    def _prompt_tool(self, spec: ServerSpec, prompts: list[dict[str, Any]]) -> Tool:
        listing = "; ".join(
            f"{p.get('name')}({', '.join(a.get('name', '') for a in p.get('arguments') or [])})"
            f"{': ' + p['description'] if p.get('description') else ''}"
            for p in prompts
        )

        def get_prompt(args: dict[str, Any], ctx: ToolContext) -> str:
            name = args.get("name")
            arguments = args.get("arguments") or {}
            if not isinstance(name, str) or not name:
                raise ToolError(f"get_prompt needs `name`; prompts: {listing}")
            if not isinstance(arguments, dict):
                raise ToolError("get_prompt `arguments` must be an object of strings")
            arguments = {str(k): str(v) for k, v in arguments.items()}
            result = self._run(spec, ctx, f"get_prompt {name}", lambda session: session.get_prompt(name, arguments))
            from hermes.kernel.redact import redact_text

            data = result.model_dump(mode="json", by_alias=True, exclude_none=True)
            lines = [f"[prompt {name}]" + (f" {data['description']}" if data.get("description") else "")]
            for message in data.get("messages") or []:
                body = render_result([message.get("content") or {}], results_dir=self._results_dir,
                                     stem=f"mcp-{spec.name}", redact=redact_text)  # fmt: skip
                lines.append(f"{message.get('role', 'user')}: {body}")
            return "\n".join(lines)

        return Tool(
            name=tool_name(spec.name, "get_prompt"),
            description=f"[MCP server {spec.name}] Get a prompt template filled in. Prompts: {listing}",
            parameters={
                "type": "object",
                "properties": {
                    "name": {"type": "string", "enum": [str(p.get("name")) for p in prompts]},
                    "arguments": {"type": "object", "additionalProperties": {"type": "string"}},
                },
                "required": ["name"],
            },
            handler=get_prompt, toolset="mcp", read_only=True,
        )  # fmt: skip


def admin(config: Any, home: Any) -> Any:
    """The views ``hermes mcp`` uses (see :mod:`.admin`)."""
    from .admin import McpAdmin

    return McpAdmin(config, home)
