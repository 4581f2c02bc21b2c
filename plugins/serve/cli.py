"""``hermes serve``: the OpenAI-compatible API and the dashboard; ``hermes serve key`` manages its keys.

The ``hermes.commands`` entry point names :data:`app`; ``hermes --help`` imports
this module for its help line, so it imports only typer and the kernel's CLI at
the top, and everything else inside the commands.
"""

from __future__ import annotations

import time
from typing import Annotated, Optional

import typer

from hermes.kernel.cli import fail, print_json, print_table, state, warn_unknown_keys

__all__ = ["app"]

app = typer.Typer(
    help="Serve the agent over an OpenAI-compatible API with a dashboard (needs the serve extra).",
    invoke_without_command=True,
    no_args_is_help=False,
)
keys_app = typer.Typer(help="Create, list and revoke the API keys of hermes serve (stored hashed).", no_args_is_help=True)
app.add_typer(keys_app, name="key")


@app.callback()
def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option("--host", help="Address to listen on (non-loopback needs API keys).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on (0: any free port).", min=0, max=65535)] = 8642,
    log_level: Annotated[str, typer.Option("--log-level", help="uvicorn's log level.")] = "warning",
) -> None:
    """Serve the agent over an OpenAI-compatible API with a dashboard (needs the serve extra)."""
    if ctx.invoked_subcommand is not None:
        return
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        fail("hermes serve needs the serve extra: pip install 'hermes-kernel[serve]'")
    from .server import run_server

    app_state = state(ctx)
    app_state.config  # a broken config.yaml fails here with its one line
    warn_unknown_keys(app_state)
    run_server(app_state.home, host, port, log_level=log_level, notes=[_toolsets_line(app_state.config)])


def _toolsets_line(config: object) -> str:
    """The line said once the server listens: the toolsets its agents get (terminal only when serve.toolsets names it)."""
    from hermes.kernel import PluginHost
    from .profiles import OFF_ON_A_SERVER, server_toolsets

    on = server_toolsets(config, PluginHost(disabled=tuple(config.disabled_plugins)))  # type: ignore[attr-defined]
    off = [name for name in OFF_ON_A_SERVER if name not in on]
    note = f"; {', '.join(off)} off (enable with serve.toolsets)" if off else ""
    from .keys import load_keys

    try:
        tenants = {k.tenant_name for k in load_keys(config.get("serve.api_keys", [])) if not k.admin}  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - a bad key list is reported by the server itself
        tenants = set()
    if len(tenants) > 1 and "terminal" in on:
        note += f"; warning: {len(tenants)} tenants share the terminal's shell, which does not keep their files apart"
    return f"toolsets on: {', '.join(on) or 'none'}{note}"


@keys_app.command("add")
def key_add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="A name for the key (who or what uses it).")],
    rpm: Annotated[Optional[int], typer.Option("--rpm", help="Requests per minute (0: unlimited).")] = None,
    cost_per_day: Annotated[Optional[float], typer.Option("--cost-per-day", help="US dollars a day (0: unlimited).")] = None,
    tenant: Annotated[Optional[str], typer.Option("--tenant", help="The tenant the key belongs to (default: its own, named after the key).")] = None,
    admin: Annotated[bool, typer.Option("--admin", help="The key sees every tenant's sessions (the dashboard and API ids).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Create a key; it is printed once and stored only as a hash."""
    from .keys import add_key

    app_state = state(ctx)
    app_state.config
    app_state.home.ensure()
    plain = add_key(app_state.home.config_path, name, requests_per_minute=rpm, cost_per_day=cost_per_day,
                    tenant=tenant, admin=admin)  # fmt: skip
    if as_json:
        print_json({"name": name, "key": plain, "requests_per_minute": rpm, "cost_per_day": cost_per_day,
                    "tenant": tenant or name, "admin": admin})  # fmt: skip
        return
    typer.echo(plain)
    scope = f"tenant {tenant or name!r}" + (", admin: sees every tenant" if admin else "")
    typer.echo(f"key {name!r} created ({scope}); it is shown only now. Clients send it as 'Authorization: Bearer <key>'.", err=True)


@keys_app.command("list")
def key_list(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List keys: name, first characters, creation time and limits (never the key or its hash)."""
    from .keys import load_keys

    keys = load_keys(state(ctx).config.get("serve.api_keys", []))
    if as_json:
        print_json([k.describe() for k in keys])
        return
    if not keys:
        typer.echo("no keys; hermes serve then listens on loopback only. Add one with `hermes serve key add NAME`.")
        return
    rows = [(k.name, k.prefix + "…", time.strftime("%Y-%m-%d %H:%M", time.localtime(k.created_at)),
             "default" if k.requests_per_minute is None else k.requests_per_minute or "unlimited",
             "default" if k.cost_per_day is None else (f"${k.cost_per_day:g}" if k.cost_per_day else "unlimited"),
             k.tenant_name + (" (admin)" if k.admin else ""))
            for k in keys]  # fmt: skip
    print_table(("name", "key", "created", "requests/min", "cost/day", "tenant"), rows)


def _remove(ctx: typer.Context, name: str, as_json: bool) -> None:
    from .cookies import SESSIONS_FILE, SessionBook
    from .keys import revoke_key

    app_state = state(ctx)
    app_state.config
    revoke_key(app_state.home.config_path, name)
    # Running servers already refuse the key and its cookies (the cookie MAC covers the key's hash);
    # deleting the session records makes that hold for a key re-created under the same name too.
    ended = 0
    if (app_state.home.path / SESSIONS_FILE).exists():  # no record: nobody signed in, and no secret to create
        ended = SessionBook(app_state.home.path).end_key(name)
    if as_json:
        print_json({"revoked": name, "sessions_ended": ended})
        return
    typer.echo(f"key {name!r} revoked; {ended} dashboard session(s) ended")


@keys_app.command("revoke")
def key_revoke(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The key's name (see `hermes serve key list`).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Revoke a key: running servers refuse it and end its dashboard sessions from the next request."""
    _remove(ctx, name, as_json)


@keys_app.command("remove")
def key_remove(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The key's name (see `hermes serve key list`).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Remove a key (the same as revoke): it and its dashboard sessions stop working at once."""
    _remove(ctx, name, as_json)
