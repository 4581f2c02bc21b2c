"""``hermes auth add|list|remove|reset``: the keys of the credential pool."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from ..errors import HermesError, PluginNotFoundError
from ..home import file_lock
from ..redact import mask_secret
from ._state import AppState, JsonOption, print_json, print_table, report, state

if TYPE_CHECKING:
    from ..credentials import CredentialPool

__all__ = ["app"]

app = typer.Typer(help="Manage API keys of the credential pool (HERMES_HOME/auth.json).\n\n"
                       "On a Hermes Agent home its keys are read too (never written unless asked) and "
                       "hermes-kernel keeps its own records in hermes-kernel/auth.json.", no_args_is_help=True)

GROUP = "hermes.model_providers"
ProviderArg = Annotated[str, typer.Argument(help="Model provider name (openai, anthropic, ...).")]


def _providers(app_state: AppState, provider: str | None = None) -> list[str]:
    available = app_state.host.available(GROUP)
    if provider is None:
        return available
    if provider not in available:
        raise PluginNotFoundError(GROUP, provider, available)
    return [provider]


def env_name_for(app_state: AppState, provider: str) -> str:
    """The variable holding ``provider``'s key: its driver's own ``env_key`` (a plugin may name
    any), else ``<PROVIDER>_API_KEY``; a driver that fails to load falls back to the latter."""
    from ..credentials import env_key_for  # not on the `hermes --help` path

    try:
        provider_class = app_state.host.driver(GROUP, provider)
    except HermesError:
        provider_class = None
    return env_key_for(provider, provider_class)


def _pool(app_state: AppState, provider: str) -> CredentialPool:
    from ..credentials import CredentialPool  # not on the `hermes --help` path

    config = app_state.config
    return CredentialPool(
        provider,
        home=app_state.home,
        config_keys=(config.get("credentials", {}) or {}).get(provider),
        env_name=env_name_for(app_state, provider),
    )


def _read_key(key: str | None) -> str:
    if key is None:
        if sys.stdin.isatty():
            key = typer.prompt("API key", hide_input=True)
        else:
            key = sys.stdin.read()
    key = key.strip()
    if not key:
        raise HermesError("no key given; pass --key KEY or pipe it on stdin")
    if any(ch.isspace() for ch in key):
        raise HermesError("a key cannot contain spaces or line breaks")
    return key


@app.command("add")
def add(
    ctx: typer.Context,
    provider: ProviderArg,
    key: Annotated[Optional[str], typer.Option("--key", help="The key (default: read from stdin).")] = None,
    label: Annotated[Optional[str], typer.Option("--label", help="A name for the key (default key-N).")] = None,
    as_json: JsonOption = False,
) -> None:
    """Store a key for PROVIDER in auth.json (mode 0600)."""
    app_state = state(ctx)
    _providers(app_state, provider)
    secret = _read_key(key)
    pool = _pool(app_state, provider)
    twin = next((c for c in pool.hermes_credentials(hidden=True) if c.key == secret), None)
    if twin is not None:  # the key is in Hermes Agent's file: show it again rather than store a copy
        if not pool.store.unhide(provider, twin.id):
            raise HermesError(f"that key is already in Hermes Agent's {pool.hermes.path} as {twin.label!r} "
                              "(see `hermes auth list`)")
        report(as_json, f"restored Hermes Agent's {provider} key {twin.label!r} ({twin.masked}) to hermes-kernel's "
                        f"view (recorded in {pool.store.path}; {pool.hermes.path} is unchanged)",
               {"provider": provider, "label": twin.label, "key": twin.masked, "file": str(pool.store.path),
                "restored": True})
        return
    with file_lock(pool.store.lock_path):  # the count that names the key is the one it joins
        name = label or f"key-{len(pool.store.keys(provider)) + 1}"
        pool.store.add(provider, secret, name, time.time())
    note = f" (hermes-kernel's own file; Hermes Agent's {pool.hermes.path} is unchanged)" if pool.hermes else ""
    report(as_json, f"added {provider} key {name!r} ({mask_secret(secret)}) to {pool.store.path}{note}",
           {"provider": provider, "label": name, "key": mask_secret(secret), "file": str(pool.store.path)})


def _status(state_: dict[str, Any]) -> str:
    if not state_:
        return "ok"
    from datetime import datetime, timezone

    until = datetime.fromtimestamp(float(state_["exhausted_until"]), tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"cooling down ({state_.get('reason', 'unknown')}) until {until}"


@app.command("list")
def list_(
    ctx: typer.Context,
    provider: Annotated[Optional[str], typer.Argument(help="Only this provider.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the keys of every provider (masked), where each comes from, and its state."""
    from ..config import read_dotenv

    app_state = state(ctx)
    dotenv = read_dotenv(app_state.home.env_path)  # applied to the environment, named apart here
    rows = []
    files: dict[str, str] = {}
    for name in _providers(app_state, provider):
        pool = _pool(app_state, name)
        shared = pool.store.view()["usage"]
        if pool.hermes is not None:
            files = {"hermes-agent": str(pool.hermes.path), "kernel": str(pool.store.path)}
        for cred, cooldown in pool.statuses():
            source = cred.source
            if source == "env" and dotenv.get(cred.label, "").strip() == cred.key:
                source = ".env"
            rows.append({
                "provider": name,
                "label": cred.label,
                "key": cred.masked,
                "source": source,
                "requests": int(shared.get(cred.id, {}).get("requests", 0)),
                "status": "cooling_down" if cooldown else "ok",
                "reason": cooldown.get("reason"),
                "exhausted_until": cooldown.get("exhausted_until"),
                "detail": _status(cooldown),
                **({"file": files["hermes-agent"], "hermes_id": cred.origin} if source == "hermes-agent" else {}),
            })
    if as_json:
        print_json(rows)
    elif not rows:
        typer.echo("no keys; add one with `hermes auth add PROVIDER`")
    else:
        print_table(["provider", "label", "key", "source", "requests", "status"],
                    [[r["provider"], r["label"], r["key"], _SOURCES.get(r["source"], r["source"]), str(r["requests"]),
                      r["detail"]] for r in rows])
    if files and not as_json:
        typer.echo(f"Hermes Agent's keys are read from {files['hermes-agent']} (never written unless you pass "
                   f"--hermes-agent to `hermes auth remove`); hermes-kernel's own records: {files['kernel']}")


# How `hermes auth list` names a source in its table (--json keeps the short name).
_SOURCES = {"hermes-agent": "Hermes Agent"}


@app.command("remove")
def remove(
    ctx: typer.Context,
    provider: ProviderArg,
    which: Annotated[str, typer.Argument(
        help="Label of the stored key, or its number (1 = first stored); for a Hermes Agent key its label or id.")],
    hermes_agent: Annotated[bool, typer.Option(
        "--hermes-agent", help="Also delete a Hermes Agent key from Hermes Agent's auth.json.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Remove a key stored in auth.json (keys from config or the environment stay where they are).

    A key from Hermes Agent's auth.json is hidden from hermes-kernel only (recorded in
    hermes-kernel/auth.json); with --hermes-agent it is deleted from Hermes Agent's file too.
    """
    app_state = state(ctx)
    _providers(app_state, provider)
    pool = _pool(app_state, provider)
    gone = pool.store.remove(provider, lambda pos, entry: entry.get("label") == which or str(pos) == which)
    if not gone and pool.hermes is not None:
        _remove_hermes_key(pool, provider, which, hermes_agent, as_json)
        return
    if not gone:
        labels = [str(e.get("label")) for e in pool.store.keys(provider)]
        raise HermesError(f"no stored {provider} key {which!r}; stored: {', '.join(labels) or 'none'} "
                          "(see `hermes auth list`)")
    if as_json:
        print_json({"provider": provider, "removed": [{"label": e.get("label"), "key": mask_secret(e["key"])} for e in gone],
                    "file": str(pool.store.path)})
        return
    where = f" from {pool.store.path}" if pool.hermes is not None else ""
    for entry in gone:
        typer.echo(f"removed {provider} key {entry.get('label')!r} ({mask_secret(entry['key'])}){where}")


def _remove_hermes_key(pool: CredentialPool, provider: str, which: str, delete: bool, as_json: bool) -> None:
    """Hide a Hermes Agent key from the kernel, or (``delete``) take it out of Hermes Agent's file."""
    from hermes.compat.hermes.auth_store import remove_hermes_keys  # a Hermes Agent home: pool.hermes is set

    assert pool.hermes is not None
    matches = [c for c in pool.hermes_credentials(hidden=delete) if which in (c.label, c.origin.split(":", 1)[1])]
    if not matches:
        names = [c.label for c in pool.credentials() if c.source in (pool.stored_source, "hermes-agent")]
        raise HermesError(f"no {provider} key {which!r} in {pool.store.path} or Hermes Agent's {pool.hermes.path}; "
                          f"known: {', '.join(names) or 'none'} (see `hermes auth list`)")
    if delete:
        by_pool: dict[str, list[str]] = {}
        for cred in matches:
            name, entry_id = cred.origin.split(":", 1)
            by_pool.setdefault(name, []).append(entry_id)
        for name, ids in by_pool.items():
            remove_hermes_keys(pool.hermes.path, name, ids)
        pool.store.hide(provider, [c.id for c in matches], forget=True)
        changed, text = pool.hermes.path, f"deleted from Hermes Agent's {pool.hermes.path}"
    else:
        pool.store.hide(provider, [c.id for c in matches])
        changed = pool.store.path
        text = (f"hidden from hermes-kernel (recorded in {pool.store.path}); Hermes Agent's {pool.hermes.path} "
                "is unchanged (pass --hermes-agent to delete it there)")
    if as_json:
        print_json({"provider": provider, "removed": [{"label": c.label, "key": c.masked, "source": "hermes-agent"}
                                                      for c in matches],
                    "file": str(changed), "hermes_agent_file_changed": delete})
        return
    for cred in matches:
        typer.echo(f"removed Hermes Agent's {provider} key {cred.label!r} ({cred.masked}): {text}")


@app.command("reset")
def reset(
    ctx: typer.Context,
    provider: Annotated[Optional[str], typer.Argument(help="Only this provider (default: all).")] = None,
    as_json: JsonOption = False,
) -> None:
    """Clear cooldowns of every key (config, environment, .env, auth.json), so they are tried again."""
    app_state = state(ctx)
    pools = [_pool(app_state, name) for name in _providers(app_state, provider)]
    total = sum(pool.reset() for pool in pools)
    # On a Hermes Agent home the cooldowns (of its keys too) live in hermes-kernel's own file: say so.
    where = next((f" in {p.store.path} (Hermes Agent's {p.hermes.path} is unchanged)" for p in pools if p.hermes), "")
    report(as_json, f"cleared {total} cooldown{'s' if total != 1 else ''}{where}",
           {"cleared": total, **({"file": str(pools[0].store.path)} if where else {})})
