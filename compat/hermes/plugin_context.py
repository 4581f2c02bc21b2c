"""The ``ctx`` a Hermes Agent general plugin's ``register(ctx)`` receives, on the kernel's slots.

Each ``register_*`` method records what the plugin offers in its
:class:`PluginContext`; :mod:`.general_plugins` turns that into a kernel hook
listener, kernel tools and typer commands. What the kernel cannot take (a
platform adapter, an unknown hook, a tool whose name is taken) becomes one line
in :attr:`PluginContext.notes`, shown by ``hermes plugin list`` and ``hermes
doctor``; the plugin's other parts still load.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes.kernel import Tool, ToolContext, ToolError, active_home

from .hook_map import HERMES_HOOKS, UNSUPPORTED, HookTable
from .standins import ProviderScope

__all__ = ["PluginContext", "PluginManifest"]

#: ``register_*`` methods of Hermes Agent 0.19.0's context that feed slots the kernel does not have.
_NO_SLOT = {
    "register_image_gen_provider": "image generation",
    "register_video_gen_provider": "video generation",
    "register_web_search_provider": "web-search backends",
    "register_browser_provider": "browser backends",
    "register_tts_provider": "text-to-speech",
    "register_transcription_provider": "speech-to-text",
    "register_dashboard_auth_provider": "dashboard sign-in providers",
    "register_secret_source": "secret sources",
    "register_slack_action_handler": "Slack actions (they need the gateway, not yet available)",
    "register_auxiliary_task": "auxiliary model tasks",
    "register_middleware": "request and execution middleware",
    "register_provider": "model-provider profiles",
}


class PluginManifest:
    """What Hermes Agent reads from ``plugin.yaml`` (or an entry point): name, version, kind, ..."""

    def __init__(self, name: str, data: dict[str, Any] | None = None, *, source: str, path: str = "") -> None:
        data = data or {}
        self.key = name
        self.name = str(data.get("name") or name)
        self.version = str(data.get("version") or "")
        self.description = str(data.get("description") or "")
        self.author = str(data.get("author") or "")
        self.kind = str(data.get("kind") or "standalone")
        self.provides_tools = list(data.get("provides_tools") or [])
        self.provides_hooks = list(data.get("hooks") or data.get("provides_hooks") or [])
        self.requires_env = list(data.get("requires_env") or [])
        self.source = source
        self.path = path


def _result_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _env_names(requires_env: list[Any] | None) -> list[str]:
    names = []
    for item in requires_env or []:
        name = item.get("name") if isinstance(item, dict) else item
        if isinstance(name, str) and name:
            names.append(name)
    return names


class PluginContext:
    """Hermes Agent's plugin context, recording into kernel terms.

    :param reserved: tool names that are not this plugin's to take (the
        kernel's built-ins, and those of plugins loaded before it), mapped to
        who owns them.
    """

    def __init__(self, manifest: PluginManifest, reserved: dict[str, str]) -> None:
        self.manifest = manifest
        self._reserved = reserved
        self._scope: ProviderScope | None = None
        self.tools: list[Tool] = []
        self.hooks = HookTable(scope=lambda: self.scope.active())
        self.commands: dict[str, dict[str, Any]] = {}
        self.cli_commands: dict[str, dict[str, Any]] = {}
        self.skills: dict[str, dict[str, Any]] = {}
        self.context_engine: Any = None
        self.memory_provider: Any = None
        self.notes: list[str] = []

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    # --- what the plugin may read ------------------------------------------------

    @property
    def profile_name(self) -> str:
        return active_home().profile or "default"

    @property
    def llm(self) -> Any:
        raise NotImplementedError("ctx.llm (the host's model for plugins) is not available on hermes-kernel")

    # --- tools -------------------------------------------------------------------

    @property
    def scope(self) -> ProviderScope:
        """The host modules Hermes Agent's plugins import (``hermes_constants``, ``agent.*``, ...),
        swapped in while ``register(ctx)`` and the plugin's tools run, as for memory providers."""
        if self._scope is None:
            self._scope = ProviderScope(active_home())
        return self._scope

    def register_tool(self, name: str, toolset: str, schema: dict[str, Any], handler: Callable[..., Any],
                      check_fn: Callable[[], Any] | None = None, requires_env: list[Any] | None = None,
                      is_async: bool = False, description: str = "", emoji: str = "", override: bool = False,
                      **_: Any) -> None:  # fmt: skip
        """A kernel tool in toolset ``hermes_agent``; a name that is taken is refused with one note."""
        owner = self._reserved.get(name)
        if owner is not None:
            self._note(f"tool {name!r} not registered: the name is taken by {owner} (rename the plugin's tool)")
            return
        envs = _env_names(requires_env)

        def check() -> bool:
            if any(not os.environ.get(env) for env in envs):
                return False
            return True if check_fn is None else bool(check_fn())

        def run(args: dict[str, Any], context: ToolContext) -> str:
            # Hermes Agent calls handler(args, **kwargs) and awaits an async one itself.
            with self.scope.active():
                result = handler(args, task_id=context.session_id or "")
                if inspect.iscoroutine(result):
                    result = asyncio.run(result)
            return _result_text(result)

        spec = schema.get("function", schema) if isinstance(schema, dict) else {}
        parameters = spec.get("parameters") or {"type": "object", "properties": {}}
        self.tools.append(Tool(name=name, description=str(spec.get("description") or description or name),
                               parameters=parameters, handler=run, toolset=toolset or self.manifest.key,
                               check=check))  # fmt: skip
        self._reserved[name] = f"plugin {self.manifest.key!r}"

    def dispatch_tool(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run one of this plugin's own tools (the kernel's registry belongs to the running agent)."""
        for tool in self.tools:
            if tool.name == tool_name:
                try:
                    return str(tool.handler(args, ToolContext(home=active_home())))
                except ToolError as exc:
                    return json.dumps({"error": str(exc)})
        return json.dumps({"error": f"Unknown tool: {tool_name}"})

    # --- hooks -------------------------------------------------------------------

    def register_hook(self, hook_name: str, callback: Callable[..., Any]) -> None:
        if hook_name not in HERMES_HOOKS:
            self._note(f"hook {hook_name!r} is not a Hermes Agent hook; skipped (see docs/hermes-agent.md for the names)")
            return
        if hook_name in UNSUPPORTED:
            self._note(f"hook {hook_name!r} has no kernel equivalent ({UNSUPPORTED[hook_name]}); skipped")
            return
        self.hooks.add(hook_name, callback)

    # --- commands ----------------------------------------------------------------

    def register_command(self, name: str, handler: Callable[..., Any], description: str = "", args_hint: str = "") -> None:
        """A slash command: ``/name args`` in ``hermes chat`` calls ``handler(raw_args)``."""
        clean = name.lower().strip().lstrip("/").replace(" ", "-")
        if clean:
            self.commands[clean] = {"handler": handler, "description": description or "plugin command",
                                    "args_hint": args_hint}  # fmt: skip

    def register_cli_command(self, name: str, help: str, setup_fn: Callable[..., Any],
                             handler_fn: Callable[..., Any] | None = None, description: str = "") -> None:  # fmt: skip
        """``hermes NAME ...``: an argparse parser built by ``setup_fn``, run by ``handler_fn``."""
        self.cli_commands[name] = {"help": help, "description": description, "setup_fn": setup_fn,
                                   "handler_fn": handler_fn}  # fmt: skip

    # --- skills, engines, memory ------------------------------------------------

    def register_skill(self, name: str, path: Path, description: str = "") -> None:
        if ":" in name or not name:
            raise ValueError(f"skill name {name!r} must be non-empty and must not contain ':'")
        if not Path(path).exists():
            raise FileNotFoundError(f"SKILL.md not found at {path}")
        self.skills[f"{self.manifest.name}:{name}"] = {"path": Path(path), "description": description}
        self._note(f"skill {name!r} kept but not offered: plugin skills need a skill folder "
                   f"(copy {Path(path).parent} into HERMES_HOME/skills/)")  # fmt: skip

    def register_context_engine(self, engine: Any) -> None:
        if self.context_engine is not None:
            self._note("a second context engine was refused: one per plugin")
            return
        self.context_engine = engine
        self._note("its context engine is not used (Hermes Agent's engine contract differs): choose one with context.engine")

    def register_memory_provider(self, provider: Any) -> None:
        self.memory_provider = provider
        self._note("memory providers load from their own folder: set memory.provider to the folder's name")

    # --- what the kernel has no slot for -----------------------------------------

    def register_platform(self, name: str, *args: Any, **kwargs: Any) -> None:
        self._note(f"platform {name!r} not registered: platform adapters need the gateway (not yet available)")

    def inject_message(self, content: str, role: str = "user") -> bool:
        return False  # Hermes Agent too returns False when no interactive CLI is attached

    def __getattr__(self, attr: str) -> Any:
        if attr not in _NO_SLOT:
            raise AttributeError(f"Hermes Agent's plugin context has no {attr!r}")

        def unsupported(*args: Any, **kwargs: Any) -> None:
            self._note(f"ctx.{attr} ignored: hermes-kernel has no {_NO_SLOT[attr]}")

        return unsupported
