"""``hermes doctor``: home, profile, config and every plugin's status."""

from __future__ import annotations

import os
import platform
from typing import Annotated, Any

import typer

from .._version import __version__
from ._state import print_json, print_table, state

__all__ = ["doctor"]


def doctor(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Check the installation: home, profile, config file, plugins and their load errors."""
    app_state = state(ctx)
    home = app_state.home
    config_error = app_state.config_error
    host = app_state.host
    host.load_plugins()
    plugins = host.installed(check=True)
    load_plugins = os.environ.get("HERMES_LOAD_PLUGINS")
    problems = [f"config: {config_error}"] if config_error else []
    problems += [f"plugin {p.group}:{p.name}: {p.error}" for p in plugins if p.error]
    store = [] if config_error else _store_checks(app_state)
    problems += [f"store {c['name']}: {c['detail']}" for c in store if not c["ok"]]
    report: dict[str, Any] = {
        "version": __version__,
        "python": platform.python_version(),
        "home": str(home.path),
        "profile": home.profile,
        "config_file": str(home.config_path),
        "config_exists": home.config_path.exists(),
        "config_error": str(config_error) if config_error else None,
        "load_plugins": load_plugins,
        "plugins": [p.as_dict() for p in plugins],
        "hook_failures": [f.as_dict() for f in host.hook_failures],
        "store": store,
        "problems": problems,
        "ok": not problems,
    }
    if as_json:
        print_json(report)
    else:
        _print_report(report)
    if problems:
        raise typer.Exit(1)


def _store_checks(app_state: Any) -> list[dict[str, Any]]:
    """The session store's own checks: where it is, connectivity, migrations, extensions."""
    from ..errors import HermesError
    from ..store import open_store, store_settings

    try:
        settings = store_settings(app_state.config)
        if settings.backend == "sqlite" and not settings.url and not app_state.home.state_db.exists():
            return [{"name": "store", "ok": True, "detail": f"sqlite {app_state.home.state_db} (not created yet)"}]
        store = open_store(app_state.config, app_state.home, app_state.host)
    except HermesError as exc:
        return [{"name": "store", "ok": False, "detail": str(exc)}]
    with store:
        return [check.as_dict() for check in store.health()]


def _print_report(report: dict[str, Any]) -> None:
    echo = typer.echo
    echo(f"hermes-kernel {report['version']} on Python {report['python']}")
    echo(f"home:    {report['home']} (profile {report['profile']})")
    if report["config_error"]:
        echo(f"config:  error: {report['config_error']}")
    elif report["config_exists"]:
        echo(f"config:  {report['config_file']} (ok)")
    else:
        echo(f"config:  {report['config_file']} (not created yet: using defaults)")
    load = report["load_plugins"]
    echo(
        "plugins: "
        + ("all installed plugins load" if load is None else f"HERMES_LOAD_PLUGINS={load!r} (built-ins always load)")
    )
    rows = report["plugins"]
    if rows:
        print_table(
            ["group", "name", "distribution", "version", "status"],
            [
                [
                    r["group"],
                    r["name"],
                    r["distribution"],
                    r["version"],
                    f"error: {r['error']}" if r["error"] else ("ok" if r["enabled"] else "disabled"),
                ]
                for r in rows
            ],
        )
    for check in report["store"]:
        echo(f"store:   {check['name']}: {check['detail']}" + ("" if check["ok"] else " (problem)"))
    for failure in report["hook_failures"]:
        echo(f"hook failure: {failure['hook']} in {failure['plugin']}: {failure['error']}")
    for problem in report["problems"]:
        echo(f"problem: {problem}")
    echo("everything looks fine" if report["ok"] else f"{len(report['problems'])} problem(s) found")
