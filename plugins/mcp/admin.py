"""What ``hermes mcp`` asks of the plugin: configured servers, their status, a timed probe."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

from .convert import tool_name
from .hub import McpCallError, McpHub, ServerState
from .settings import GlobalSettings, ServerSpec, env_lookup, mask_spec, parse_servers

__all__ = ["McpAdmin"]


class McpAdmin:
    """Read-only views of ``mcp.servers`` for the CLI; connects only when asked."""

    def __init__(self, config: Any, home: Any) -> None:
        section = config.get("mcp", {}) or {}
        self.section = section if isinstance(section, dict) else {}
        self.specs, self.problems = parse_servers(self.section)
        self.settings = GlobalSettings.from_config(self.section)
        self.home = home
        self.lookup = env_lookup(home)

    def spec(self, name: str) -> ServerSpec | None:
        return next((s for s in self.specs if s.name == name), None)

    def describe(self, spec: ServerSpec) -> dict[str, Any]:
        """The server's settings with env and header values masked."""
        return mask_spec(spec)

    def _hub(self, specs: list[ServerSpec]) -> McpHub:
        log_dir = self.home.path / "logs" if getattr(self.home, "path", None) is not None else None
        return McpHub(specs, self.settings, lookup=self.lookup, log_dir=log_dir, warn=False)

    def status(self) -> list[dict[str, Any]]:
        """Every server with its status and tool count (enabled ones are started, in parallel, then stopped)."""
        hub = self._hub([s for s in self.specs if s.enabled])
        try:
            if hub.states:
                hub.start()
                hub.wait_ready()
            rows = []
            for spec in self.specs:
                state = hub.states.get(spec.name)
                rows.append(self._row(spec, state))
            return rows
        finally:
            hub.close()

    def _row(self, spec: ServerSpec, state: ServerState | None) -> dict[str, Any]:
        if state is None:
            return {"name": spec.name, "transport": spec.transport, "enabled": False, "status": "disabled",
                    "tools": None, "error": ""}  # fmt: skip
        wanted = [t for t in state.tools if spec.wants(str(t.get("name")))]
        return {
            "name": spec.name, "transport": spec.transport, "enabled": True, "status": state.status,
            "tools": len(wanted) if state.status == "ready" else None, "error": state.error,
            "resources": state.has_resources, "prompts": len(state.prompts),
        }  # fmt: skip

    def tools(self, name: str) -> tuple[ServerState, list[dict[str, Any]]]:
        """One server's tools as the model sees them (after include/exclude)."""
        spec = self.spec(name)
        assert spec is not None
        hub = self._hub([replace(spec, enabled=True)])
        try:
            hub.start()
            hub.wait_ready()
            state = hub.states[name]
            listed = [
                {"name": tool_name(name, str(t.get("name"))), "server_name": t.get("name"),
                 "description": str(t.get("description") or "").strip().splitlines()[0] if t.get("description") else ""}
                for t in state.tools if spec.wants(str(t.get("name")))
            ]  # fmt: skip
            return replace(state), listed  # a copy: close() below marks the live state stopped
        finally:
            hub.close()

    def probe(self, name: str) -> dict[str, Any]:
        """Connect, list and ping one server (enabled or not), with timings in seconds."""
        spec = self.spec(name)
        assert spec is not None
        hub = self._hub([replace(spec, enabled=True)])
        report: dict[str, Any] = {"name": name, "transport": spec.transport, "ok": False}
        try:
            started = time.perf_counter()
            hub.start()
            hub.wait_ready()
            state = hub.states[name]
            report["connect_seconds"] = round(time.perf_counter() - started, 3)
            report["status"], report["error"] = state.status, state.error
            if state.status != "ready":
                return report
            report["tools"] = len([t for t in state.tools if spec.wants(str(t.get("name")))])
            report["resources"], report["prompts"] = state.has_resources, len(state.prompts)
            started = time.perf_counter()
            try:
                hub.run(name, lambda session: asyncio.wait_for(session.send_ping(), spec.timeout), what="ping")
            except McpCallError as exc:
                report["error"] = str(exc)
                return report
            report["ping_seconds"] = round(time.perf_counter() - started, 4)
            report["ok"] = True
            return report
        finally:
            hub.close()
