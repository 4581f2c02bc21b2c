"""``hermes config get|set|show|path``."""

from __future__ import annotations

import json
import os
from typing import Annotated, Any

import typer

from ..config import is_env_key, parse_value, read_dotenv, set_config_value, set_dotenv_value
from ..redact import is_secret_key, mask_secret, mask_secrets, redact_text
from ._state import print_json, state

__all__ = ["app"]

app = typer.Typer(help="Read and change configuration (config.yaml and .env).", no_args_is_help=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _render(value: Any, as_json: bool) -> str:
    if as_json:
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (dict, list)):
        import yaml

        return yaml.safe_dump(value, sort_keys=False, allow_unicode=True).rstrip()
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@app.command("get")
def get(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="Dotted key (model.provider) or environment name.")],
    as_json: JsonFlag = False,
) -> None:
    """Print the effective value of KEY."""
    app_state = state(ctx)
    if is_env_key(key):
        value = os.environ.get(key, read_dotenv(app_state.home.env_path).get(key))
        if value is None:
            raise typer.BadParameter(f"{key} is not set; set it with `hermes config set {key} VALUE`")
        typer.echo(_render(mask_secret(value) if is_secret_key(key) else redact_text(value), as_json))
        return
    value = app_state.config.get(key)
    typer.echo(_render(mask_secrets(value, key), as_json))


@app.command("set")
def set_(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="Dotted key (agent.max_iterations) or environment name (OPENAI_API_KEY).")],
    value: Annotated[str, typer.Argument(help="YAML-typed value: 40, true, [a, b], text.")],
) -> None:
    """Set KEY to VALUE: dotted keys go to config.yaml, environment names to .env (0600)."""
    app_state = state(ctx)
    home = app_state.home.ensure()
    if is_env_key(key):
        set_dotenv_value(home.env_path, key, value)
        shown = mask_secret(value) if is_secret_key(key) else redact_text(value)
        typer.echo(f"{key}={shown} saved in {home.env_path}")
        return
    parsed = parse_value(value)
    set_config_value(home.config_path, key, parsed)
    app_state.reset_config()
    app_state.config  # re-validate what was written
    typer.echo(f"{key} = {_render(mask_secrets(parsed, key), True)} saved in {home.config_path}")


@app.command("show")
def show(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Print the merged configuration (defaults, file, environment), secrets masked."""
    data = mask_secrets(state(ctx).config.as_dict())
    if as_json:
        print_json(data)
    else:
        typer.echo(_render(data, False))


@app.command("path")
def path(ctx: typer.Context) -> None:
    """Print the path of the active profile's config.yaml."""
    typer.echo(str(state(ctx).home.config_path))
