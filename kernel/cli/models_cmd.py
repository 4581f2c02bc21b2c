"""``hermes models list|show``: what is known of each model's window and output limit, and from where."""

from __future__ import annotations

import os
from typing import Annotated, Any, Optional

import typer

from ._state import AppState, print_json, print_table, state

__all__ = ["app"]

app = typer.Typer(help="Show model context windows and output limits, and where each figure came from.",
                  no_args_is_help=True)


def _endpoint(app_state: AppState) -> str | None:
    """The configured provider's custom base URL (config, then the SDK's environment variable)."""
    config = app_state.config
    base_url = config.get("model.base_url", None)
    if base_url:
        return str(base_url)
    name = str(config.get("model.provider") or "")
    env = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}.get(name)
    return os.environ.get(env) if env else None


def _resolve(app_state: AppState, name: str) -> Any:
    from ..context_windows import resolve_model

    config = app_state.config
    is_configured = name == str(config.get("model.name") or "")
    return resolve_model(
        name,
        configured=config.get("model.context_length", None) if is_configured else None,
        configured_output=config.get("model.max_output", None) if is_configured else None,
        base_url=_endpoint(app_state),
        home=app_state.home,
    )


def _row(info: Any) -> list[str]:
    output = f"{info.max_output:,}" if info.max_output else "?"
    return [info.model, f"{info.context_length:,}", output, info.source]


@app.command("list")
def list_(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    catalog: Annotated[bool, typer.Option("--catalog", help="Also list every entry of the bundled catalog.")] = False,
) -> None:
    """The configured model, the endpoint's models, and (with --catalog) the bundled catalog."""
    from ..context_windows import endpoint_models, resolve_model
    from ..model_catalog import CATALOG, CATALOG_DATE

    app_state = state(ctx)
    rows: list[Any] = []
    configured = str(app_state.config.get("model.name") or "")
    if configured:
        rows.append(_resolve(app_state, configured))
    base_url = _endpoint(app_state)
    if base_url:
        for name in sorted(endpoint_models(base_url)):
            if name != configured:
                rows.append(resolve_model(name, base_url=base_url, home=app_state.home))
    if catalog:
        rows += [resolve_model(prefix) for prefix in sorted(CATALOG)]
    if as_json:
        print_json({"catalog_date": CATALOG_DATE, "models": [r.as_dict() for r in rows]})
        return
    if not rows:
        typer.echo("no model configured; set one with `hermes config set model.name NAME`, "
                   "or see the bundled catalog with `hermes models list --catalog`")
        return
    print_table(["model", "context", "max output", "source"], [_row(r) for r in rows],
                title=f"catalog of {CATALOG_DATE}")


@app.command("show")
def show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Model name (vendor/ prefixes are ignored for the catalog).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Window, output limit, pricing when the endpoint reports it, and where each came from."""
    info = _resolve(state(ctx), name)
    if as_json:
        print_json(info.as_dict())
        return
    typer.echo(f"{info.model}\n  context window: {info.context_length:,} tokens\n"
               f"  max output:     {f'{info.max_output:,} tokens' if info.max_output else 'unknown'}\n"
               f"  source:         {info.source} ({info.detail})")
    if info.pricing:
        typer.echo(f"  pricing:        {info.pricing}")
