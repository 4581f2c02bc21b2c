"""A typer group whose built-in commands import only when used.

``hermes --help`` lists every command from a static table instead of
importing and converting each command module; running a command imports
just that one. Plugin commands added through ``register_commands`` are
ordinary typer commands and work unchanged.
"""

from __future__ import annotations

import importlib
from typing import Any, NamedTuple

import typer
from typer.core import TyperGroup

__all__ = ["LazyCommand", "LazyGroup"]


class LazyCommand(NamedTuple):
    """Where a built-in command lives and the one-line help shown before it loads."""

    module: str
    attr: str
    help: str


class LazyGroup(TyperGroup):
    """The root group: eager commands first, then the lazy built-ins in table order."""

    lazy: dict[str, LazyCommand] = {}

    def list_commands(self, ctx: Any) -> list[str]:
        eager = super().list_commands(ctx)
        return [*(n for n in self.lazy if n not in eager), *eager]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in self.lazy:
            command = self._load(cmd_name)
            self.commands[cmd_name] = command
        return command

    def _load(self, name: str) -> Any:
        spec = self.lazy[name]
        target = getattr(importlib.import_module(spec.module, __package__), spec.attr)
        if not isinstance(target, typer.Typer):
            single = typer.Typer()
            single.command(name)(target)
            target = single
        command = typer.main.get_command(target)
        command.name = name
        return command

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            loaded = self.commands.get(name)
            if loaded is None and name in self.lazy:
                rows.append((name, self.lazy[name].help))
            elif loaded is not None and not loaded.hidden:
                rows.append((name, loaded.get_short_help_str(formatter.width - 6 - len(name))))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
