"""``hermes config get|set|show|path|schema|migrate``."""

from __future__ import annotations

import json
import os
from typing import Annotated, Any

import typer

from ..config import is_env_key, parse_value, read_config_file, read_dotenv, set_config_value, set_dotenv_value
from ..config_schema import ConfigKey, ConfigSchema, plugin_problem
from ..errors import ConfigError
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
    try:
        value = app_state.config.get(key)
    except ConfigError as exc:
        if "no config key" not in str(exc):
            raise
        target = _hermes_target(key)
        if target is None:
            raise ConfigError(f"no config key {key!r}{ConfigSchema.build().suggest(key)}; see `hermes config schema`") from None
        key, value = target, app_state.config.get(target)  # a mapped Hermes Agent key: the value it feeds
    typer.echo(_render(mask_secrets(value, key), as_json))


def _schema(ctx: typer.Context) -> ConfigSchema:
    host = state(ctx).host
    host.load_plugins()
    return ConfigSchema.from_host(host)


def _installed(ctx: typer.Context, group: str) -> list[str]:
    names = state(ctx).host.available(group)
    # The memory toolset comes from the memory manager, not an entry point.
    return [*names, "memory"] if group == "hermes.tools" else names


def _checked(ctx: typer.Context, schema: ConfigSchema, key: str, spec: ConfigKey, raw: str) -> Any:
    parsed = parse_value(raw)
    if spec.type == "str" and (isinstance(parsed, bool) or not isinstance(parsed, (str, int, float))) and not (
        parsed is None and spec.nullable
    ):
        parsed = raw  # `yes`, `on` or `[x]` given for a text key mean that text
    value = spec.check(parsed, key=key)
    if spec.plugin_group:
        problem = plugin_problem(spec, key, value, _installed(ctx, spec.plugin_group))
        if problem:
            raise ConfigError(problem)
    return value


@app.command("set")
def set_(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="Dotted key (agent.max_iterations) or environment name (OPENAI_API_KEY).")],
    value: Annotated[str, typer.Argument(help="YAML-typed value: 40, true, a,b or [a, b], text.")],
    force: Annotated[bool, typer.Option("--force", help="Let a value replace a whole section.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Set KEY to VALUE: dotted keys go to config.yaml, environment names to .env (0600).

    The value is checked against the schema (`hermes config schema`) first;
    nothing is written when it is not allowed.
    """
    app_state = state(ctx)
    home = app_state.home
    if is_env_key(key):
        home.ensure()
        set_dotenv_value(home.env_path, key, value)
        shown = mask_secret(value) if is_secret_key(key) else redact_text(value)
        if as_json:
            print_json({"key": key, "value": shown, "file": str(home.env_path)})
            return
        typer.echo(f"{key}={shown} saved in {home.env_path}")
        return
    if not key or any(not part for part in key.split(".")):
        raise ConfigError(f"invalid config key {key!r}: use dotted names like model.provider")
    schema = _schema(ctx)
    try:
        spec = schema.lookup(key)
    except ConfigError:
        spec = _hermes_spec(schema, key)  # a Hermes Agent key is set as it is, checked as its kernel key
    if spec is not None:
        parsed = _checked(ctx, schema, key, spec, value)
    else:
        parsed = parse_value(value)
        if schema.is_section(key):
            if isinstance(parsed, dict):
                nested: dict[str, Any] = parsed
                for part in reversed(key.split(".")):
                    nested = {part: nested}
                schema.validate(nested)
            elif not force:
                first = schema.children(key)[0]
                raise ConfigError(
                    f"{key} is a section, not a value; set one of its keys "
                    f"(`hermes config set {first} VALUE`, see `hermes config schema`) or pass --force to replace it"
                )
    home.ensure()
    set_config_value(home.config_path, key, parsed)
    app_state.reset_config()
    app_state.config  # re-validate what was written
    if as_json:
        print_json({"key": key, "value": mask_secrets(parsed, key), "file": str(home.config_path)})
        return
    typer.echo(f"{key} = {_render(mask_secrets(parsed, key), True)} saved in {home.config_path}")


def _hermes_target(key: str) -> str | None:
    """The kernel key a mapped Hermes Agent key feeds, or None (imports the mapping only for unknown keys)."""
    from hermes.compat.hermes.config_map import kernel_key_for

    return kernel_key_for(key)


def _hermes_spec(schema: ConfigSchema, key: str) -> ConfigKey | None:
    """The kernel entry that checks Hermes Agent key ``key`` (None: any value); unknown keys raise as before."""
    from hermes.compat.hermes.config_map import is_hermes_key, kernel_key_for  # deferred: unknown keys only

    if not is_hermes_key(key):
        schema.lookup(key)  # raises the unknown-key error with its suggestion
    target = kernel_key_for(key)
    return schema.find(target) if target else None


@app.command("show")
def show(
    ctx: typer.Context,
    as_json: JsonFlag = False,
    origin: Annotated[bool, typer.Option("--origin", help="Say where each value came from.")] = False,
) -> None:
    """Print the merged configuration (defaults, file, environment), secrets masked.

    With --origin each key is one line: its value and where it came from
    (default, config.yaml, config.yaml via the Hermes Agent key X, .env,
    environment, CLI flag).
    """
    config = state(ctx).config
    data = mask_secrets(config.as_dict())
    if not origin:
        print_json(data) if as_json else typer.echo(_render(data, False))
        return
    from ..config import leaves

    rows = []
    for key in leaves(data):
        where = config.origin(key)
        if key in config.deferred:
            where += "; not usable yet, see `hermes doctor`"
        rows.append({"key": key, "value": _at(data, key), "origin": where})
    if as_json:
        print_json(rows)
        return
    for row in rows:
        typer.echo(f"{row['key']} = {_render(row['value'], True)}  [{row['origin']}]")


def _at(data: Any, key: str) -> Any:
    for part in key.split("."):
        data = data[part]
    return data


@app.command("path")
def path(ctx: typer.Context) -> None:
    """Print the path of the active profile's config.yaml."""
    typer.echo(str(state(ctx).home.config_path))


@app.command("schema")
def schema(
    ctx: typer.Context,
    as_json: JsonFlag = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the docs/config.md table.")] = False,
) -> None:
    """Print every config key with its type, default, allowed values and description."""
    from ..config_schema import render_markdown

    current = _schema(ctx)
    if markdown:
        typer.echo(render_markdown(current), nl=False)
        return
    rows = [
        {"key": s.key, "type": s.type, "default": s.default, "allowed": s.allowed(), "description": s.description,
         "min": s.min, "max": s.max, "choices": list(s.choices) if s.choices else None,
         "nullable": s.nullable, "plugin_group": s.plugin_group}
        for s in current.keys.values()
    ]  # fmt: skip
    if as_json:
        print_json(rows)
        return
    for row in rows:
        typer.echo(f"{row['key']}  ({row['type']}, default {_render(row['default'], True)}): {row['description']}")
        typer.echo(f"    allowed: {row['allowed']}")


@app.command("migrate")
def migrate(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Upgrade config.yaml to the current layout version; the original is kept as a dated .bak."""
    from ..config_migrations import migrate_data, migrate_file, migrated_in_this_process
    from ..config_schema import CONFIG_VERSION

    path = state(ctx).home.config_path
    data = read_config_file(path)
    _, start = migrate_data(data, path)
    if state(ctx).config.hermes is not None:
        # Hermes Agent reads this file too: it is upgraded in memory on every load, never rewritten.
        if as_json:
            print_json({"path": str(path), "from_version": start, "version": CONFIG_VERSION, "backup": None})
        else:
            typer.echo(f"{path} is shared with Hermes Agent: it is read as it is and never rewritten")
        return
    backup = None
    if path.exists() and start < CONFIG_VERSION:
        _, backup = migrate_file(path, data)
        if backup is None:
            raise ConfigError(f"cannot write {path}; check that HERMES_HOME is writable")
    elif migrated_in_this_process(path):  # loading the config upgraded it a moment ago
        start, backup = migrated_in_this_process(path)  # type: ignore[misc]
    report = {"path": str(path), "from_version": start, "version": CONFIG_VERSION,
              "backup": str(backup) if backup else None}  # fmt: skip
    if as_json:
        print_json(report)
    elif backup:
        typer.echo(f"upgraded {path} from version {start} to {CONFIG_VERSION}; the original is {backup}")
    else:
        typer.echo(f"{path} is at version {CONFIG_VERSION} already")
