"""``hermes memory status|show|setup|off|on``."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from ..config import set_config_value
from ..memory import BUILTIN, MEMORY_GROUP, MemoryManager
from ._state import fail, print_json, print_table, report, state

__all__ = ["app"]

app = typer.Typer(help="Show memory providers and saved entries; set one up; turn memory off or on.", no_args_is_help=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON.")]
_TITLES = {"memory": "MEMORY.md (agent notes)", "user": "USER.md (user profile)"}


def _usage(row: dict[str, Any]) -> str:
    files = row.get("files")
    if isinstance(files, dict):
        return ", ".join(
            f"{target}: {f['chars']:,}/{f['limit']:,} chars, {len(f['entries'])} entries" for target, f in files.items()
        )
    return str(row.get("summary") or row.get("error") or "")


@app.command("status")
def status(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """List the memory providers, whether each is available, and how full each file is."""
    app_state = state(ctx)
    config, home = app_state.config, app_state.home
    manager = MemoryManager.from_config(app_state.host, config, home)
    rows = manager.status()
    selected = str(config.get("memory.provider", "") or "")
    if as_json:
        print_json({"enabled": manager.enabled, "provider": selected, "providers": rows})
        return
    if not manager.enabled:
        typer.echo("memory: off (memory.enabled is false); turn it on with `hermes memory on`")
        return
    typer.echo(f"memory: on; external provider: {selected or 'none (builtin only)'}")
    print_table(
        ["provider", "kind", "available", "usage"],
        [(r["name"], r["kind"], "yes" if r["available"] else "no", _usage(r)) for r in rows],
    )


@app.command("show")
def show(
    ctx: typer.Context,
    target: Annotated[Optional[str], typer.Argument(help="memory or user (default: both).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Print the entries saved in MEMORY.md and USER.md."""
    app_state = state(ctx)
    if target not in (None, "memory", "user"):
        fail(f"unknown target {target!r}; use memory or user")
    provider = app_state.host.driver(MEMORY_GROUP, BUILTIN)()
    files = provider.describe(hermes_home=app_state.home, config=app_state.config)["files"]
    chosen = {t: f for t, f in files.items() if target in (None, t)}
    if as_json:
        print_json(chosen)
        return
    for name, info in chosen.items():
        typer.echo(f"== {_TITLES[name]}: {info['chars']:,}/{info['limit']:,} chars  {info['path']}")
        typer.echo("\n§\n".join(info["entries"]) if info["entries"] else "(empty)")
        typer.echo("")


def _set_enabled(ctx: typer.Context, enabled: bool) -> None:
    app_state = state(ctx)
    home = app_state.home.ensure()
    set_config_value(home.config_path, "memory.enabled", enabled)
    app_state.reset_config()


@app.command("off")
def off(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Turn memory off: no memory in the prompt, no memory tool, no provider (files are kept)."""
    _set_enabled(ctx, False)
    report(as_json, "memory is off; saved entries are kept. Turn it back on with `hermes memory on`.", {"enabled": False})


@app.command("on")
def on(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Turn memory back on."""
    _set_enabled(ctx, True)
    report(as_json, "memory is on.", {"enabled": True})


@app.command("setup")
def setup(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The memory provider to set up (entry-point or folder provider).")],
    values: Annotated[
        Optional[list[str]], typer.Option("--set", help="KEY=VALUE for a setting, instead of being asked (repeatable).")
    ] = None,
    activate: Annotated[bool, typer.Option("--activate/--no-activate", help="Also make it memory.provider.")] = True,
    as_json: JsonFlag = False,
) -> None:
    """Ask for a provider's settings: secrets go to .env, the rest to the provider's save_config, then post_setup."""
    from ._memory_setup import run_setup

    app_state = state(ctx)
    app_state.config  # a broken config.yaml is reported before any question
    run_setup(app_state.host, app_state.home.ensure(), name, given=values or [], activate=activate, as_json=as_json)
    app_state.reset_config()
