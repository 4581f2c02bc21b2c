"""``hermes mcp add|list|tools|test|remove|enable|disable``: MCP servers in ``mcp.servers``.

The commands edit ``config.yaml`` themselves; status, tools and probes come
from the ``mcp`` toolset, loaded through its ``hermes.tools`` entry point like
any tool source (the kernel never imports a plugin module).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Optional

import typer

from ..config import read_config_file
from ..errors import HermesError
from ..home import atomic_write, file_lock, lock_file_for
from ._state import AppState, fail, print_json, print_table, report, state

__all__ = ["app"]

app = typer.Typer(help="Add, list, test and remove MCP servers (tools from the Model Context Protocol).",
                  no_args_is_help=True)  # fmt: skip

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON.")]
NameArg = Annotated[str, typer.Argument(help="The server's name in mcp.servers.")]
_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,32}$")


def _admin(app_state: AppState) -> Any:
    """The mcp plugin's admin views, loaded through the hermes.tools entry point."""
    try:
        (plugin,) = app_state.host.extensions("hermes.tools", ["mcp"])
    except HermesError as exc:
        raise HermesError(f"the mcp toolset is not installed ({exc}); reinstall hermes-kernel") from None
    source = plugin.obj() if callable(plugin.obj) else plugin.obj
    return source.admin(app_state.config, app_state.home)


def _servers(data: dict[str, Any]) -> dict[str, Any]:
    section = data.setdefault("mcp", {})
    if not isinstance(section, dict):
        raise HermesError("mcp in config.yaml is not a mapping; fix it with `hermes config show`")
    servers = section.setdefault("servers", {})
    if not isinstance(servers, dict):
        raise HermesError("mcp.servers in config.yaml is not a mapping of NAME: settings")
    return servers


def _edit(app_state: AppState, change: Any) -> None:
    """Apply ``change(servers)`` to config.yaml, written atomically (0600: it may hold headers)."""
    import yaml

    home = app_state.home.ensure()
    with file_lock(lock_file_for(home.config_path)):  # read, change, replace: no other writer between
        data = read_config_file(home.config_path)
        change(_servers(data))
        atomic_write(home.config_path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    app_state.reset_config()


def _pairs(values: list[str] | None, what: str) -> dict[str, str]:
    pairs = {}
    for value in values or []:
        key, sep, rest = value.partition("=")
        if not sep or not key.strip():
            fail(f"{what} {value!r} is not KEY=VALUE; write --{what} NAME=VALUE (or NAME=${{ENV_NAME}} for a secret)")
        pairs[key.strip()] = rest
    return pairs


@app.command("add")
def add(
    ctx: typer.Context,
    name: NameArg,
    command: Annotated[Optional[list[str]], typer.Argument(help="After --: the command and its arguments (stdio).")] = None,
    url: Annotated[Optional[str], typer.Option("--url", help="A remote server's URL (Streamable HTTP or SSE).")] = None,
    header: Annotated[Optional[list[str]], typer.Option("--header", help="K=V header for --url; V may be ${ENV_NAME}.")] = None,
    env: Annotated[Optional[list[str]], typer.Option("--env", help="K=V environment for a stdio server; V may be ${ENV_NAME}.")] = None,
    transport: Annotated[Optional[str], typer.Option("--transport", help="http (default for --url) or sse.")] = None,
    timeout: Annotated[Optional[float], typer.Option("--timeout", help="Seconds per call.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace a server of the same name.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Add a server: `hermes mcp add NAME -- COMMAND ARGS...` or `hermes mcp add NAME --url URL`."""
    app_state = state(ctx)
    if not _NAME_RE.match(name):
        fail(f"invalid server name {name!r}: use 1-32 letters, digits, '_' or '-'")
    if bool(command) == bool(url):
        fail("give either a command after -- (stdio) or --url URL (remote), e.g. `hermes mcp add fs -- npx server-fs .`")
    if transport not in (None, "http", "sse") or (transport and not url):
        fail("--transport is http or sse, and only with --url")
    if timeout is not None and timeout <= 0:
        fail("--timeout must be a number of seconds above 0")
    entry: dict[str, Any] = {}
    if command:
        entry.update(command=command[0], args=list(command[1:]))
        if header:
            fail("--header is for remote servers (--url); a stdio server takes --env")
    else:
        entry["url"] = url
        if transport:
            entry["transport"] = transport
        if env:
            fail("--env is for stdio servers; a remote server takes --header")
    if env:
        entry["env"] = _pairs(env, "env")
    if header:
        entry["headers"] = _pairs(header, "header")
    if timeout is not None:
        entry["timeout"] = timeout

    def change(servers: dict[str, Any]) -> None:
        if name in servers and not force:
            fail(f"an MCP server named {name!r} exists; remove it first (`hermes mcp remove {name}`) or pass --force")
        servers[name] = entry

    _edit(app_state, change)
    from ..redact import mask_secrets

    report(as_json, f"added MCP server {name!r}; check it with `hermes mcp test {name}`",
           {"added": name, "server": mask_secrets(entry, f"mcp.servers.{name}")})


def _require(admin: Any, name: str) -> Any:
    spec = admin.spec(name)
    if spec is None:
        names = ", ".join(s.name for s in admin.specs) or "none"
        fail(f"no MCP server named {name!r} (configured: {names}); add one with `hermes mcp add`")
    return spec


@app.command("list")
def list_servers(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """List the configured servers with status and tool count (starts each enabled server briefly)."""
    admin = _admin(state(ctx))
    for problem in admin.problems:
        typer.echo(f"warning: {problem}", err=True)
    rows = admin.status()
    if as_json:
        print_json([{**row, "config": admin.describe(admin.spec(row["name"]))} for row in rows])
        return
    if not rows:
        typer.echo("no MCP servers configured; add one with `hermes mcp add NAME -- COMMAND` or `--url URL`")
        return
    print_table(
        ["server", "transport", "status", "tools", "note"],
        [(r["name"], r["transport"], r["status"], "" if r["tools"] is None else r["tools"], r["error"]) for r in rows],
    )


@app.command("tools")
def tools(ctx: typer.Context, name: NameArg, as_json: JsonFlag = False) -> None:
    """List one server's tools under the names the model sees."""
    admin = _admin(state(ctx))
    _require(admin, name)
    server, listed = admin.tools(name)
    if server.status != "ready":
        fail(f"MCP server {name!r} did not start: {server.error}")
    if as_json:
        print_json(listed)
        return
    print_table(["tool", "description"], [(t["name"], t["description"]) for t in listed], title=f"MCP server {name}")


@app.command("test")
def test(ctx: typer.Context, name: NameArg, as_json: JsonFlag = False) -> None:
    """Connect to one server, list its tools and ping it, with timings."""
    app_state = state(ctx)
    admin = _admin(app_state)
    spec = _require(admin, name)
    report = admin.probe(name)
    if as_json:
        print_json({**report, "config": admin.describe(spec)})
    elif report["ok"]:
        typer.echo(f"{name}: connected in {report['connect_seconds']:.2f}s, {report['tools']} tools"
                   f"{', resources' if report.get('resources') else ''}"
                   f"{', ' + str(report['prompts']) + ' prompts' if report.get('prompts') else ''}, "
                   f"ping {report['ping_seconds'] * 1000:.1f} ms")  # fmt: skip
    if not report["ok"]:
        log = app_state.home.path / "logs" / f"mcp-{name}.log"
        hint = f" (server output: {log})" if spec.transport == "stdio" and log.exists() and log.stat().st_size else ""
        fail(f"MCP server {name!r} failed: {report.get('error') or report.get('status')}{hint}")


@app.command("remove")
def remove(ctx: typer.Context, name: NameArg, as_json: JsonFlag = False) -> None:
    """Remove a server from config.yaml."""

    def change(servers: dict[str, Any]) -> None:
        if name not in servers:
            fail(f"no MCP server named {name!r} (configured: {', '.join(servers) or 'none'})")
        del servers[name]

    _edit(state(ctx), change)
    report(as_json, f"removed MCP server {name!r}", {"removed": name})


def _set_enabled(ctx: typer.Context, name: str, enabled: bool, as_json: bool) -> None:
    def change(servers: dict[str, Any]) -> None:
        if not isinstance(servers.get(name), dict):
            fail(f"no MCP server named {name!r} (configured: {', '.join(servers) or 'none'})")
        servers[name]["enabled"] = enabled

    _edit(state(ctx), change)
    report(as_json, f"MCP server {name!r} {'enabled' if enabled else 'disabled'}", {"server": name, "enabled": enabled})


@app.command("enable")
def enable(ctx: typer.Context, name: NameArg, as_json: JsonFlag = False) -> None:
    """Use a disabled server again."""
    _set_enabled(ctx, name, True, as_json)


@app.command("disable")
def disable(ctx: typer.Context, name: NameArg, as_json: JsonFlag = False) -> None:
    """Keep a server configured but do not start it."""
    _set_enabled(ctx, name, False, as_json)
