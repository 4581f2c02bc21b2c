"""A typer group whose commands import only when used.

``hermes --help`` lists the built-in commands from a static table instead of
importing and converting each command module; running a command imports
just that one. Front-ends come from the ``hermes.commands`` entry-point group
(built-in ones too): ``--help`` imports each entry point's module for its help
line, so that module imports only typer and keeps heavy imports inside its
commands. Plugin commands added through ``register_commands`` are ordinary
typer commands and work unchanged.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any, NamedTuple

import typer
from typer.core import TyperGroup

from ..errors import PluginLoadError
from ..host import COMMANDS_GROUP, PluginHost
from ..lazy_log import LazyLogger

__all__ = ["LazyCommand", "LazyGroup"]

log = LazyLogger(__name__)


class LazyCommand(NamedTuple):
    """Where a built-in command lives and the one-line help shown before it loads."""

    module: str
    attr: str
    help: str


def _as_command(name: str, target: Any) -> Any:
    """The click command for a typer app or a plain function."""
    if not isinstance(target, typer.Typer):
        if not callable(target):
            raise TypeError(f"its object is of type {type(target).__name__}, not a typer.Typer or a function")
        single = typer.Typer()
        single.command(name)(target)
        target = single
    command = typer.main.get_command(target)
    command.name = name
    return command


class LazyGroup(TyperGroup):
    """The root group: built-ins in table order, then front-ends, then eager commands."""

    lazy: dict[str, LazyCommand] = {}
    #: The host whose ``hermes.commands`` entry points become commands (None: built-ins only).
    host: PluginHost | None = None

    @functools.cached_property
    def entry_point_names(self) -> list[str]:
        """Allowed ``hermes.commands`` names (``plugins.disabled`` hides one); a built-in name wins."""
        if self.host is None:
            return []
        names = self.host.available(COMMANDS_GROUP)
        for name in names:
            if name in self.lazy:
                log.warning("%s plugin %r is ignored: a built-in command has that name", COMMANDS_GROUP, name)
        return [n for n in names if n not in self.lazy]

    def list_commands(self, ctx: Any) -> list[str]:
        eager = super().list_commands(ctx)
        table = [*self.lazy, *self.entry_point_names]
        return [*(n for n in table if n not in eager), *eager]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The command ``cmd_name``; a front-end that fails to load raises PluginLoadError (one line)."""
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in self.lazy:
            spec = self.lazy[cmd_name]
            command = _as_command(cmd_name, getattr(importlib.import_module(spec.module, __package__), spec.attr))
            self.commands[cmd_name] = command
        elif command is None and cmd_name in self.entry_point_names:
            command = self._load_entry_point(cmd_name)
            self.commands[cmd_name] = command
        return command

    def _load_entry_point(self, name: str) -> Any:
        assert self.host is not None  # entry_point_names is empty without a host
        target = self.host.load(COMMANDS_GROUP, name)
        try:
            return _as_command(name, target)
        except Exception as exc:  # noqa: BLE001 - the plugin's object, not ours: one line naming it
            self.host.load_failures[(COMMANDS_GROUP, name)] = str(exc)
            dists = [r.distribution for r in self.host.installed(COMMANDS_GROUP) if r.name == name]
            raise PluginLoadError(COMMANDS_GROUP, name, f"{exc} (from {', '.join(dists)})") from None

    def _help_line(self, name: str) -> str | None:
        """A front-end's help line from its typer app's ``help``, without converting the app (and every
        command under it) to click just to print ``--help``; None when it has none to read."""
        if self.host is None or name not in self.entry_point_names:
            return None
        target = self.host.load(COMMANDS_GROUP, name)
        text = getattr(getattr(target, "info", None), "help", None) if isinstance(target, typer.Typer) else None
        if not isinstance(text, str) or not text.strip():
            return None
        return " ".join(text.strip().split("\n\n", 1)[0].split())

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            loaded = self.commands.get(name)
            if loaded is None and name in self.lazy:
                rows.append((name, self.lazy[name].help))
                continue
            if loaded is None:
                try:
                    line = self._help_line(name)
                    if line is not None:
                        rows.append((name, line))
                        continue
                    loaded = self.get_command(ctx, name)
                except PluginLoadError as exc:  # the other commands and --help still work
                    log.warning("%s", exc)
                    continue
            if loaded is not None and not loaded.hidden:
                rows.append((name, loaded.get_short_help_str(limit=1000)))  # wrapped like the static rows
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
