"""``hermes profile list|create|use|delete``."""

from __future__ import annotations

import shutil
from typing import Annotated

import typer

from ..errors import HermesError
from ..home import (
    DEFAULT_PROFILE,
    HermesHome,
    hermes_root,
    read_active_profile,
    validate_profile_name,
    write_active_profile,
)
from ._state import JsonOption, print_json, print_table, report, state

__all__ = ["app"]

app = typer.Typer(help="Manage profiles: separate homes with their own config, keys and sessions.", no_args_is_help=True)

NameArg = Annotated[str, typer.Argument(help="Profile name.")]


def _profiles() -> list[str]:
    folder = hermes_root() / "profiles"
    names = sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
    return [DEFAULT_PROFILE, *names]


def _existing(name: str) -> HermesHome:
    home = HermesHome(hermes_root(), validate_profile_name(name))
    if name != DEFAULT_PROFILE and not home.exists():
        raise HermesError(f"profile {name!r} does not exist; see `hermes profile list`")
    return home


@app.command("list")
def list_(ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """List profiles; the active one is marked."""
    active = state(ctx).home.profile
    rows = [
        {"name": name, "active": name == active, "path": str(HermesHome(hermes_root(), name).path)}
        for name in _profiles()
    ]
    if as_json:
        print_json(rows)
    else:
        print_table(["", "profile", "path"], [["*" if r["active"] else "", r["name"], r["path"]] for r in rows])


@app.command("create")
def create(
    ctx: typer.Context,
    name: NameArg,
    clone: Annotated[bool, typer.Option("--clone", help="Copy config.yaml and .env from the active profile.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Create profile NAME."""
    home = HermesHome(hermes_root(), validate_profile_name(name))
    if name == DEFAULT_PROFILE or home.exists():
        raise HermesError(f"profile {name!r} already exists")
    home.ensure()
    if clone:
        source = state(ctx).home
        for src, dst in ((source.config_path, home.config_path), (source.env_path, home.env_path)):
            if src.exists():
                shutil.copy2(src, dst)
                dst.chmod(0o600)
    report(as_json, f"created profile {name} at {home.path}; use it with `hermes profile use {name}` or `-p {name}`",
           {"created": name, "path": str(home.path), "cloned": clone})


@app.command("use")
def use(name: NameArg, as_json: JsonOption = False) -> None:
    """Make NAME the profile used when no -p is given."""
    _existing(name)
    write_active_profile(hermes_root(), name)
    report(as_json, f"active profile: {name}", {"active_profile": name})


@app.command("delete")
def delete(
    name: NameArg,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Delete profile NAME and everything in it (sessions, keys, memories)."""
    if name == DEFAULT_PROFILE:
        raise HermesError("the default profile cannot be deleted")
    home = _existing(name)
    if not yes and not typer.confirm(f"Delete profile {name} and all its data at {home.path}?"):
        raise typer.Exit(1)
    shutil.rmtree(home.path)
    root = hermes_root()
    if read_active_profile(root) == name:
        write_active_profile(root, DEFAULT_PROFILE)
    report(as_json, f"deleted profile {name}", {"deleted": name})
