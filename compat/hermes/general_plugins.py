"""Hermes Agent's general plugins, loaded as kernel hook listeners.

The plugin host lists each ``HERMES_HOME/plugins/<name>/`` folder with a
``plugin.yaml`` (not a memory provider) and each ``hermes_agent.plugins``
entry point as a ``hermes.plugins`` entry (kernel/folder_plugins.py). Loading
one imports its module (a folder as ``hermes_plugins.<name>``, as Hermes Agent
does), calls ``register(ctx)`` with a :class:`~.plugin_context.PluginContext`
and returns the listener: kernel hooks for its Hermes hooks, ``register_commands``
for its CLI commands. Its tools reach the model through the ``hermes_agent``
toolset (:func:`plugin_tools`); its slash commands through :func:`slash_commands`.
A plugin that cannot load raises :class:`PluginLoadError` with one line, which
the host records for ``hermes plugin list`` and ``hermes doctor``.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

from hermes.kernel import PluginLoadError, Tool, hookimpl

from .hook_map import listener_class
from .plugin_context import PluginContext, PluginManifest

__all__ = ["load_general_entry_point", "load_general_folder", "loaded_plugins", "plugin_tools", "slash_commands"]

GROUP = "hermes.plugins"
#: The kernel toolset the tools of every loaded Hermes plugin belong to (the ``hermes.tools`` entry point).
TOOLSET = "hermes_agent"
_NAMESPACE = "hermes_plugins"  # Hermes Agent imports folder plugins under this package

#: Contexts of the plugins loaded in this process, by where they come from (a folder's path, an
#: entry point's value), in load order: a second host in the process gets the same plugin back.
_LOADED: dict[str, PluginContext] = {}


def loaded_plugins() -> dict[str, PluginContext]:
    return dict(_LOADED)


def plugin_tools() -> list[Tool]:
    """The tools registered by every Hermes plugin loaded in this process (the ``hermes_agent`` toolset)."""
    return [tool for ctx in _LOADED.values() for tool in ctx.tools]


def slash_commands() -> dict[str, dict[str, Any]]:
    """``{name: {"handler", "description", "plugin"}}`` of every loaded plugin's slash commands."""
    found: dict[str, dict[str, Any]] = {}
    for ctx in _LOADED.values():
        for name, spec in ctx.commands.items():
            found.setdefault(name, {**spec, "plugin": ctx.manifest.key})
    return found


@functools.lru_cache(maxsize=1)
def _builtin_tool_names() -> frozenset[str]:
    """Names of the tools hermes-kernel ships, which no Hermes plugin may take."""
    import importlib.metadata as metadata

    from hermes.kernel import tools_from_plugin

    names: set[str] = {"memory"}  # the memory manager's toolset has no entry point
    for ep in metadata.entry_points(group="hermes.tools"):
        dist = getattr(ep, "dist", None)
        if dist is None or dist.metadata["Name"] != "hermes-kernel" or ep.name in ("mcp", TOOLSET):
            continue
        try:
            obj = ep.load()
            names.update(t.name for t in tools_from_plugin(obj() if callable(obj) else obj))
        except Exception:  # noqa: BLE001 - a broken built-in toolset is reported by the kernel itself
            continue
    return frozenset(names)


def _reserved() -> dict[str, str]:
    taken = {name: "a built-in tool of hermes-kernel" for name in _builtin_tool_names()}
    for ctx in _LOADED.values():
        taken.update({tool.name: f"plugin {ctx.manifest.key!r}" for tool in ctx.tools})
    return taken


def _manifest(folder: Path) -> dict[str, Any]:
    """``plugin.yaml`` strictly: a file that does not parse is one line naming it and the place."""
    import yaml

    path = folder / "plugin.yaml"
    if not path.is_file():
        path = folder / "plugin.yml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise PluginLoadError(GROUP, folder.name, f"{path} is not valid YAML{where}: fix or remove it") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PluginLoadError(GROUP, folder.name, f"cannot read {path}: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise PluginLoadError(GROUP, folder.name, f"{path} must be a mapping (name: ..., version: ...)")
    return data


def _import_folder(folder: Path, slug: str) -> types.ModuleType:
    init = folder / "__init__.py"
    if not init.is_file():
        raise PluginLoadError(GROUP, folder.name, f"{folder} has a plugin.yaml but no __init__.py with register(ctx)")
    if _NAMESPACE not in sys.modules:
        package = types.ModuleType(_NAMESPACE)
        package.__path__ = []  # type: ignore[attr-defined]
        sys.modules[_NAMESPACE] = package
    name = f"{_NAMESPACE}.{slug}"
    spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(folder)])
    if spec is None or spec.loader is None:
        raise PluginLoadError(GROUP, folder.name, f"cannot import {init}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(name, None)
        if isinstance(exc, Exception):
            raise PluginLoadError(GROUP, folder.name, f"importing {init} failed: {_line(exc)}") from exc
        raise
    return module


def _line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _register(origin: str, register: Any, manifest: PluginManifest) -> Any:
    """Run ``register(ctx)``; the listener for what it registered."""
    ctx = PluginContext(manifest, _reserved())
    try:
        with ctx.scope.active():
            register(ctx)
    except Exception as exc:
        raise PluginLoadError(GROUP, manifest.key, f"register(ctx) raised {_line(exc)}") from exc
    _LOADED[origin] = ctx
    return _listener(ctx)


def _listener(ctx: PluginContext) -> Any:
    extra: dict[str, Any] = {
        "hermes_load_notes": list(ctx.notes),
        "hermes_plugin_context": ctx,
        # What the REPL reads for slash commands (kernel/cli/_repl.py): {name: (handler(text), summary)}.
        "slash_commands": {name: (c["handler"], c["description"]) for name, c in ctx.commands.items()},
    }
    if ctx.cli_commands:
        extra["register_commands"] = hookimpl(_register_cli_commands)
    listener = listener_class(ctx.hooks.kernel_hooks(), extra)()
    listener.table = ctx.hooks
    return listener


def load_general_folder(folder: Path) -> Any:
    """The listener of the general plugin in ``folder`` (its ``register(ctx)`` run once per process)."""
    data = _manifest(folder)
    key, origin = folder.name, str(folder.resolve())
    if origin in _LOADED:
        return _listener(_LOADED[origin])
    module = _import_folder(folder, key.replace("-", "_").replace(".", "_"))
    register = getattr(module, "register", None)
    if not callable(register):
        raise PluginLoadError(GROUP, key, f"{folder / '__init__.py'} has no register(ctx) function")
    return _register(origin, register, PluginManifest(key, data, source="folder", path=str(folder)))


def load_general_entry_point(record: Any) -> Any:
    """The listener of a ``hermes_agent.plugins`` entry point: a module with ``register``, or ``register`` itself."""
    key, origin = record.name, f"{record.distribution}:{record.value}"
    if origin in _LOADED:
        return _listener(_LOADED[origin])
    try:
        obj = record.load()
    except Exception as exc:
        raise PluginLoadError(GROUP, key, f"entry point {record.value!r} of {record.distribution or 'an unknown distribution'} "
                              f"cannot be imported: {_line(exc)}") from exc  # fmt: skip
    register = obj if isinstance(obj, types.FunctionType) else getattr(obj, "register", None)
    if not callable(register):
        raise PluginLoadError(GROUP, key, f"entry point {record.value!r} names no register(ctx) function")
    manifest = PluginManifest(key, {"version": record.version}, source="entry point", path=record.value)
    return _register(origin, register, manifest)


def _register_cli_commands(self: Any, app: Any) -> None:
    """``register_commands``: each ``ctx.register_cli_command`` as ``hermes NAME`` parsed by its own argparse."""
    from hermes.kernel.cli import BUILTIN_COMMANDS

    ctx: PluginContext = self.hermes_plugin_context
    for name, spec in ctx.cli_commands.items():
        if name in BUILTIN_COMMANDS:
            continue  # a built-in command keeps its name; the note was given at load
        app.command(name, help=spec["help"] or spec["description"], add_help_option=False,
                    context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(
            _cli_runner(name, spec))  # fmt: skip


def _cli_runner(name: str, spec: dict[str, Any]) -> Any:
    import typer

    def run(ctx: typer.Context) -> None:
        parser = argparse.ArgumentParser(prog=f"hermes {name}", description=spec["description"] or spec["help"])
        spec["setup_fn"](parser)
        args = parser.parse_args(ctx.args)
        handler = spec["handler_fn"] or getattr(args, "func", None)
        if handler is None:
            parser.print_help()
            return
        code = handler(args)
        if isinstance(code, int) and code:
            raise typer.Exit(code)

    run.__annotations__ = {"ctx": typer.Context, "return": None}  # real types: typer reads them at parse time
    return run
