"""``hermes plugin install|list|remove|enable|disable``."""

from __future__ import annotations

import importlib.metadata as metadata
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from ..config import read_config_file, set_config_value
from ..errors import HermesError
from ..home import file_lock, lock_file_for
from ..folder_plugins import HERMES_AGENT_GROUPS
from ..host import FOLDER_GROUP, GROUPS, PluginHost, PluginInfo, normalize_dist_name
from ._state import JsonOption, print_json, print_table, report, state

__all__ = ["app"]

app = typer.Typer(help="Install, list, enable, disable and remove plugins.", no_args_is_help=True)

NameArg = Annotated[str, typer.Argument(help="Plugin (entry-point) name or distribution name.")]


def _pip(*args: str) -> subprocess.CompletedProcess[str]:
    """Run pip in this interpreter, so plugins land where hermes runs."""
    return subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
    )


def _pip_failed(action: str, result: subprocess.CompletedProcess[str]) -> None:
    tail = (result.stderr or result.stdout).strip().splitlines()[-15:]
    for line in tail:
        typer.echo(f"  {line}", err=True)
    raise HermesError(f"pip {action} failed with exit code {result.returncode}; see the pip output above")


def _contributions(dist_name: str) -> dict[str, list[str]]:
    """Entry-point names per hermes (or Hermes Agent, ``hermes_agent.*``) group that a distribution registers."""
    try:
        dist = metadata.distribution(dist_name)
    except metadata.PackageNotFoundError:
        return {}
    found: dict[str, list[str]] = {}
    for ep in dist.entry_points:
        if ep.group in GROUPS or ep.group.startswith("hermes_agent."):  # Hermes Agent's groups are read too
            found.setdefault(ep.group, []).append(ep.name)
    return {group: sorted(names) for group, names in sorted(found.items())}


def _commands(dist_name: str) -> list[str]:
    """The console scripts a distribution installed."""
    try:
        eps = metadata.distribution(dist_name).entry_points
    except metadata.PackageNotFoundError:
        return []
    return sorted(ep.name for ep in eps if ep.group == "console_scripts")


def _resolve(host: PluginHost, name: str) -> list[PluginInfo]:
    rows = host.installed(everything=True)
    wanted = normalize_dist_name(name)
    matches = [r for r in rows if r.name == name or normalize_dist_name(r.distribution) == wanted]
    if not matches:
        known = sorted({r.name for r in rows} | {r.distribution for r in rows if not r.builtin})
        raise HermesError(
            f"no installed plugin named {name!r}; known: {', '.join(known) or 'none'} "
            "(see `hermes plugin list --all`)"
        )
    return matches


@app.command("install")
def install(
    ctx: typer.Context,
    specs: Annotated[list[str], typer.Argument(help="PyPI name, local path or VCS URL (git+https://...).")],
    upgrade: Annotated[bool, typer.Option("--upgrade", "-U", help="Upgrade if already installed.")] = False,
    editable: Annotated[bool, typer.Option("--editable", "-e", help="Install a local path in editable mode.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Install plugin packages with pip, then show what each contributed.

    A Hermes memory-provider folder (an __init__.py defining a MemoryProvider,
    usually beside a plugin.yaml), given as a path or a git URL, is copied
    into HERMES_HOME/plugins/ instead.
    """
    from ._folders import install_folder, is_git_url, resolve_folder_spec

    app_state = state(ctx)
    packages: list[str] = []
    with tempfile.TemporaryDirectory() as work:
        # Every spec is resolved (and cloned) before anything is installed: a bad one changes nothing.
        folders = []
        for index, spec in enumerate(specs):
            folder = resolve_folder_spec(spec, Path(work) / str(index))
            if folder is None:
                packages.append(spec)
            else:
                folders.append((spec, folder))
        done: list[dict[str, Any]] = []
        for spec, folder in folders:
            url = spec if is_git_url(spec) else None
            name, target = install_folder(folder, app_state.home.ensure(), replace=upgrade, url=url)
            app_state.host.refresh()
            if as_json:
                done.append({"name": name, "kind": "folder", "path": str(target), "group": FOLDER_GROUP})
            else:
                _report_folder(app_state.host, name, target)
    if packages:
        done += _pip_install(ctx, packages, upgrade=upgrade, editable=editable, as_json=as_json)
    if as_json:
        print_json({"installed": done})


def _report_folder(host: PluginHost, name: str, target: Path) -> None:
    from ..folder_plugins import GENERAL_GROUP, is_general_plugin

    if is_general_plugin(target):  # a Hermes Agent general plugin: it loads at the next start
        rows = [r for r in host.installed(GENERAL_GROUP, everything=True) if r.name == name]
        version = rows[0].version if rows else ""
        typer.echo(f"installed Hermes Agent plugin {name} {version}".rstrip() + f" into {target}")
        typer.echo(f"  {GENERAL_GROUP}: {name} (see `hermes plugin list`)")
        return
    rows = [r for r in host.installed(FOLDER_GROUP, everything=True) if r.name == name]
    version = rows[0].version if rows else ""
    typer.echo(f"installed folder provider {name} {version}".rstrip() + f" into {target}")
    if rows and rows[0].kind != "folder":
        typer.echo(f"  warning: the installed package {rows[0].distribution} also provides {name!r} and wins; "
                   f"remove it with `hermes plugin remove {rows[0].distribution}`")  # fmt: skip
        return
    typer.echo(f"  {FOLDER_GROUP}: {name}")
    if not any(r.name == name for r in host.installed(FOLDER_GROUP)):
        typer.echo(f"  note: HERMES_LOAD_PLUGINS does not name {name}, so it will not load")
    typer.echo(f"  use it with `hermes config set memory.provider {name}` (settings: `hermes memory setup {name}`)")


def _pip_install(ctx: typer.Context, specs: list[str], *, upgrade: bool, editable: bool, as_json: bool) -> list[dict[str, Any]]:
    """pip-install ``specs``; say what each contributed, or return it as data with ``as_json``."""
    from ._pip_plan import PipFailed, install_plan, plan_install

    with tempfile.TemporaryDirectory() as tmp:
        try:
            plan = plan_install(specs, upgrade=upgrade, editable=editable, work=Path(tmp))
            installed = install_plan(plan, work=Path(tmp))
        except PipFailed as exc:
            for line in exc.output:
                typer.echo(f"  {line}", err=True)
            raise
    host = state(ctx).host
    host.refresh()
    # Step 3 installs files, so "requested" is what the plan resolved as asked for (or let go of hermes-agent).
    requested = {i["metadata"]["name"] for i in plan.items if i.get("requested")} | set(plan.without_hermes_agent)
    requested &= {i["metadata"]["name"] for i in installed}
    if as_json:
        return [
            {"name": i["metadata"]["name"], "version": i["metadata"]["version"], "requested": i["metadata"]["name"] in requested,
             "kind": "package", "entry_points": _contributions(i["metadata"]["name"])}
            for i in installed
        ]  # fmt: skip
    if not requested:
        typer.echo("nothing new was installed (already satisfied; use --upgrade to update)")
        return []
    for item in installed:
        name, version = item["metadata"]["name"], item["metadata"]["version"]
        groups = _contributions(name)
        if name not in requested and not groups:
            continue  # a plain dependency
        typer.echo(f"installed {name} {version}")
        if name in plan.without_hermes_agent:
            typer.echo(f"  note: {name} requires hermes-agent; installed without it, so `hermes` stays hermes-kernel's "
                       "command (hermes-kernel runs plugins written for Hermes Agent itself)")  # fmt: skip
        if not groups:
            commands = _commands(name)
            also = f"; it installed the command(s) {', '.join(commands)}" if commands else ""
            typer.echo(f"  warning: {name} registers no hermes entry points, so it adds nothing to hermes by itself{also}")
        for group, names in groups.items():
            typer.echo(f"  {group}: {', '.join(names)}")
        indexed = [g for g in groups if g in GROUPS or g in HERMES_AGENT_GROUPS]
        if indexed and not any(r.distribution == name for r in host.installed()):
            typer.echo(f"  note: HERMES_LOAD_PLUGINS does not name {name}, so it will not load")
    return []


@app.command("list")
def list_(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    show_all: Annotated[bool, typer.Option("--all", help="Include the built-in plugins of hermes-kernel.")] = False,
) -> None:
    """List installed plugins per entry-point group, with load errors."""
    host = state(ctx).host
    host.load_plugins()
    rows = host.installed(include_builtin=show_all, check=True)
    if as_json:
        print_json([r.as_dict() for r in rows])
        return
    if not rows:
        typer.echo("no plugins installed (built-ins: `hermes plugin list --all`)")
        return
    # source: `folder` / `entry point` for Hermes Agent-format plugins, `kernel` for built-ins.
    print_table(
        ["group", "name", "source", "distribution", "version", "enabled", "error"],
        [[r.group, r.name, "kernel" if r.kind == "builtin" else r.kind, r.distribution, r.version,
          "yes" if r.enabled else "no", r.error or ""] for r in rows],
    )  # fmt: skip


@app.command("remove")
def remove(
    ctx: typer.Context,
    name: NameArg,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Delete a plugin folder without asking.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Uninstall the distribution that provides plugin NAME, or delete its folder in HERMES_HOME/plugins."""
    matches = _resolve(state(ctx).host, name)
    if any(m.builtin for m in matches):
        raise HermesError(f"{name!r} is built into hermes-kernel; disable it with `hermes plugin disable {name}`")
    folders = sorted({m.value for m in matches if m.kind == "folder"})
    if folders and not yes:
        if not sys.stdin.isatty():
            raise HermesError(f"removing {name} deletes {', '.join(folders)}; confirm with `hermes plugin remove {name} --yes`")
        if not typer.confirm(f"delete {', '.join(folders)}?", default=False):
            raise HermesError("nothing removed")
    for folder in folders:
        from ._folders import remove_folder

        remove_folder(Path(folder), state(ctx).home)
        typer.echo(f"removed folder plugin {Path(folder).name} ({folder})")
    dists = sorted({m.distribution for m in matches if m.kind != "folder"})
    for dist in dists:
        result = _pip("uninstall", "--yes", dist)
        if result.returncode != 0:
            _pip_failed("uninstall", result)
        if not as_json:
            typer.echo(f"removed {dist}")
    if as_json:
        print_json({"removed": dists})


def _edit_disabled(ctx: typer.Context, name: str, disable: bool, as_json: bool = False) -> None:
    app_state = state(ctx)
    _resolve(app_state.host, name)
    path = app_state.home.ensure().config_path
    with file_lock(lock_file_for(path)):  # the list read is the list changed
        plugins = read_config_file(path).get("plugins") or {}
        disabled = (plugins.get("disabled") or []) if isinstance(plugins, dict) else None
        if not isinstance(disabled, list):
            raise HermesError(f"{path}: plugins.disabled must be a list")
        data = {"name": name, "enabled": not disable, "changed": disable != (name in disabled)}
        if data["changed"]:
            set_config_value(path, "plugins.disabled", [*disabled, name] if disable else [n for n in disabled if n != name])
    if not data["changed"]:
        report(as_json, f"{name} is already {'disabled' if disable else 'enabled'}", data)
        return
    report(as_json, f"{'disabled' if disable else 'enabled'} {name}; takes effect the next time hermes starts", data)


@app.command("enable")
def enable(ctx: typer.Context, name: NameArg, as_json: JsonOption = False) -> None:
    """Remove NAME from plugins.disabled."""
    _edit_disabled(ctx, name, disable=False, as_json=as_json)


@app.command("disable")
def disable(ctx: typer.Context, name: NameArg, as_json: JsonOption = False) -> None:
    """Add NAME to plugins.disabled, so it no longer loads."""
    _edit_disabled(ctx, name, disable=True, as_json=as_json)
