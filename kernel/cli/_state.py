"""Per-invocation state shared by the CLI commands: profile, home, config, host."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from ..config import Config, apply_dotenv, load_config
from ..errors import ConfigError, HermesError
from ..home import DEFAULT_PROFILE, HermesHome, resolve_home, set_active_home
from ..host import PluginHost

__all__ = ["AppState", "JsonOption", "fail", "print_json", "print_table", "report", "state", "warn_unknown_keys"]


class AppState:
    """Lazily resolved home and config, so ``hermes --help`` reads as little as possible.

    A broken ``config.yaml`` does not stop the CLI from starting: the error is
    kept and raised by the first command that needs the config, while
    ``hermes doctor`` can still report it.
    """

    def __init__(self, profile: str | None = None) -> None:
        self.profile = profile
        self._home: HermesHome | None = None
        self._config: Config | None = None
        self._config_error: ConfigError | None = None
        self._host: PluginHost | None = None

    @property
    def home(self) -> HermesHome:
        if self._home is None:
            self._home = resolve_home(self.profile)
            set_active_home(self._home)  # plugin code may ask for it, even while being constructed
        return self._home

    def plugin_dirs(self) -> list[Path]:
        """Folders holding folder plugins: the profile's own ``plugins/`` first, then the root home's."""
        try:
            home = self.home
        except HermesError:
            return []  # a missing profile is reported by the command that needs it
        dirs = [home.plugins_dir, HermesHome(root=home.root, profile=DEFAULT_PROFILE).plugins_dir]
        return list(dict.fromkeys(dirs))

    @property
    def config(self) -> Config:
        if self._config is None and self._config_error is None:
            try:
                apply_dotenv(self.home.env_path)
                self._config = load_config(self.home)
                self._config.disabled_plugins  # validated here, used by the host
            except ConfigError as exc:
                self._config_error = exc
        if self._config_error is not None:
            raise self._config_error
        assert self._config is not None
        return self._config

    @property
    def config_error(self) -> ConfigError | None:
        try:
            self.config
        except ConfigError as exc:
            return exc
        return None

    def reset_config(self) -> None:
        """Forget the loaded config after a command changed it."""
        self._config = None
        self._config_error = None

    @property
    def host(self) -> PluginHost:
        if self._host is None:
            try:
                disabled: Sequence[str] = self.config.disabled_plugins
            except HermesError:
                disabled = ()  # reported by the command that needs the config
            self._host = PluginHost(disabled=disabled, plugin_dirs=self.plugin_dirs)
        return self._host


def warn_unknown_keys(app: AppState, limit: int = 3) -> None:
    """One stderr line per key of ``config.yaml`` that nothing reads (a typo is otherwise silent).

    The kernel's own schema is asked first; the plugins' keys are gathered only
    when something looks unknown, so a clean config costs nothing.
    """
    import sys

    from ..config_schema import ConfigSchema

    config = app.config
    try:
        from ..config import read_config_file

        # A config shared with Hermes Agent: what is left once its keys are translated.
        shared = getattr(config, "hermes", None)
        data = shared.data if shared is not None else read_config_file(app.home.config_path)
        if not ConfigSchema.build().unknown(data):
            return
        schema = ConfigSchema.from_host(app.host)
        unknown = schema.unknown(data)
    except Exception:  # noqa: BLE001 - a warning must never stop the command
        return
    for key in unknown[:limit]:
        print(f"  · warning: config.yaml: unknown key {key!r}{schema.suggest(key)}; it is ignored "
              f"(fix its name, or remove it from {app.home.config_path})", file=sys.stderr)  # fmt: skip
    if len(unknown) > limit:
        print(f"  · warning: {len(unknown) - limit} more unknown key(s) in config.yaml; see `hermes doctor`", file=sys.stderr)


def state(ctx: typer.Context) -> AppState:
    """The AppState of this invocation (created on demand for CliRunner tests)."""
    root = ctx.find_root()
    if not isinstance(root.obj, AppState):
        root.obj = AppState()
    return root.obj


def print_json(data: Any) -> None:
    import json  # not on the `hermes --help` path

    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def report(as_json: bool, text: str, data: dict[str, Any]) -> None:
    """What a command changed: ``data`` as JSON with ``--json``, else the line ``text``."""
    if as_json:
        print_json(data)
    else:
        typer.echo(text)


def print_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], *, title: str | None = None) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(*columns, title=title, show_lines=False)
    for row in rows:
        table.add_row(*("" if cell is None else str(cell) for cell in row))
    Console(soft_wrap=True).print(table)


def fail(message: str, code: int = 1) -> None:
    """Print one ``error:`` line to stderr and exit with ``code``."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)
