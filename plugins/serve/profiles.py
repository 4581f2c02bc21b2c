"""The agent profiles a server offers as models, and how one turn's agent is built for them.

Every turn gets its own agent, plugin host and store connection, built from
the stored session: the store is the only shared state, so another process
on the same store can take the next turn of the conversation, and hooks of
one conversation never reach the listeners of another running beside it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes.kernel.approvals import UNATTENDED_SERVICE
from hermes.kernel.config import Config, load_config
from hermes.kernel.errors import ConfigError
from hermes.kernel.home import DEFAULT_PROFILE, HermesHome, validate_profile_name
from hermes.kernel.host import PluginHost
from .settings import ServeSettings
from .tenants import Scope

__all__ = ["Profile", "ProfileSet", "WORKSPACE_SERVICE", "server_toolsets"]

log = logging.getLogger(__name__)

#: ``ToolContext.services`` key of the folder file tools are confined to.
WORKSPACE_SERVICE = "workspace"
#: ``ToolContext.services`` key of the agent's :class:`~.limits.MeterSlot` (the running turn's spend limits).
METER_SERVICE = "serve.meter"


#: Toolsets a server leaves out unless ``serve.toolsets`` names them.
OFF_ON_A_SERVER = ("terminal",)


def server_toolsets(config: Config, host: PluginHost) -> list[str]:
    """The toolsets a server's agents get: ``serve.toolsets``, else the CLI's minus ``terminal``."""
    from hermes.kernel.tool_registry import TOOLS_GROUP

    chosen = config.get("serve.toolsets", []) or []
    if isinstance(chosen, str):
        chosen = [part.strip() for part in chosen.split(",") if part.strip()]
    if chosen:
        return [str(name) for name in chosen]
    cli = [str(name) for name in config.get("toolsets", []) or []] or [*host.available(TOOLS_GROUP), "memory"]
    return [name for name in cli if name not in OFF_ON_A_SERVER]


@dataclass
class Profile:
    """One servable profile: its home and configuration, read once at start."""

    name: str
    home: HermesHome
    config: Config
    created: float = 0.0
    _host_disabled: tuple[str, ...] = field(default=(), repr=False)
    _shared: list[tuple[Any, str]] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def open(cls, home: HermesHome) -> Profile:
        config = load_config(home)
        path = home.path
        created = path.stat().st_mtime if path.exists() else 0.0
        return cls(home.profile, home, config, created, tuple(config.disabled_plugins))

    @property
    def model_id(self) -> str:
        return "hermes" if self.name == DEFAULT_PROFILE else f"hermes-{self.name}"

    def _routes(self, host: PluginHost, slot: Any = None) -> list[Any]:
        """This profile's model routes, each agent on its own credential lease.

        The model clients (and the SDK connections inside them) are opened once
        and shared: opening one costs about 0.1 s of CPU (TLS setup), which
        would otherwise be paid by every session's first turn.
        """
        from hermes.kernel.agent.calling import ModelRoute
        from hermes.kernel.agent.factory import open_routes

        with self._lock:
            if self._shared is None:
                self._shared = [(r.client, r.model) for r in open_routes(host, self.config, self.home)]
            shared = self._shared
        from .limits import MeteredClient

        # Every model call of the agent (loop, summaries, titles, sub-agents) asks the turn's meter first.
        return [ModelRoute(MeteredClient(client, slot) if slot is not None else client, model, lease=client.lease())
                for client, model in shared]  # fmt: skip

    def host(self) -> PluginHost:
        host = PluginHost(disabled=self._host_disabled)
        host.load_plugins()
        return host

    def build_agent(
        self,
        settings: ServeSettings,
        *,
        session_id: str | None,
        on_event: Callable[[Any], None],
        scope: Scope | None = None,
    ) -> Any:
        """The agent for one turn: ``source=api``, tools confined to the workspace, no one to ask.

        ``scope`` (tenants.py) chooses the tenant: its home, workspace folder and sessions.
        """
        from hermes.kernel.agent.factory import build_agent
        from .limits import MeteredClient, MeterSlot

        scope = scope or Scope()
        slot = MeterSlot()
        workspace = scope.workspace(settings.workspace)
        workspace.mkdir(parents=True, exist_ok=True, mode=0o700)
        home = scope.home(self.home)
        host = self.host()
        agent = build_agent(
            host=host,
            routes=self._routes(host, slot),
            # The clients it opens itself (auxiliary summary model, sub-agents' own model) ask the meter too.
            wrap_client=lambda client: MeteredClient(client, slot),
            config=self.config,
            home=home,
            tenant=scope.writes,
            resume=session_id,
            interactive=False,
            source="api",
            stream=True,  # deltas reach streaming clients, and an interrupt lands mid-answer
            on_event=on_event,
            approve=settings.approver(),
            cwd=workspace,
            toolsets=server_toolsets(self.config, host),
        )
        agent.tool_context.services[WORKSPACE_SERVICE] = workspace.resolve()
        agent.tool_context.services[METER_SERVICE] = slot
        agent.tool_context.services[UNATTENDED_SERVICE] = True
        if scope.isolated:
            agent.memory.user_id = scope.tenant  # providers that keep memory elsewhere scope it by user
        return agent


class ProfileSet:
    """The serving profile plus every other profile under the same root, by model id."""

    def __init__(self, serving: HermesHome) -> None:
        self.serving = Profile.open(serving)
        self._by_model: dict[str, Profile] = {self.serving.model_id: self.serving}
        for home in self._other_homes(serving):
            try:
                profile = Profile.open(home)
            except ConfigError as exc:  # another profile's broken config must not stop this one
                log.warning("profile %s is not offered as a model: %s", home.profile, exc)
                continue
            self._by_model.setdefault(profile.model_id, profile)

    @staticmethod
    def _other_homes(serving: HermesHome) -> list[HermesHome]:
        homes = []
        if serving.profile != DEFAULT_PROFILE:
            homes.append(HermesHome(serving.root, DEFAULT_PROFILE))
        folder: Path = serving.root / "profiles"
        if folder.is_dir():
            for child in sorted(folder.iterdir()):
                try:
                    name = validate_profile_name(child.name)
                except Exception:
                    continue
                if child.is_dir() and name != serving.profile:
                    homes.append(HermesHome(serving.root, name))
        return homes

    def models(self) -> list[Profile]:
        return list(self._by_model.values())

    def get(self, model: str | None) -> Profile | None:
        """The profile a request's ``model`` names; empty means the serving profile."""
        if not model:
            return self.serving
        return self._by_model.get(model)
