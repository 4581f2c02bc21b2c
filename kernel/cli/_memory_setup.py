"""``hermes memory setup NAME``: walk a provider's config schema, then save what was gathered.

A provider with a setup wizard of its own (``own_setup``: a Hermes Agent
provider's ``post_setup``) runs that instead, unless ``--set`` gives the
values. A field with ``when: {key: value}`` is asked only when the answers so
far match.

Every answer is gathered and checked first; only then is anything written:
secrets to ``.env`` (0600), the other values through the provider's
``save_config``, then its ``post_setup`` (if it has one), then
``memory.provider``. A bad value is refused before any file changes.
"""

from __future__ import annotations

import re
from typing import Any

import typer

from ..config import read_dotenv, set_config_value, set_dotenv_value
from ..errors import HermesError
from ..home import HermesHome
from ..host import PluginHost
from ..memory import MEMORY_GROUP

__all__ = ["run_setup"]

_ATTEMPTS = 3
_TRUE = ("1", "true", "yes", "on", "y")
_FALSE = ("0", "false", "no", "off", "n")


def _env_var(provider: str, field: dict[str, Any]) -> str:
    explicit = str(field.get("env_var") or "")
    return explicit or re.sub(r"[^A-Z0-9_]", "_", f"{provider}_{field['key']}".upper())


def _convert(field: dict[str, Any], raw: str) -> Any:
    """``raw`` as the field's type; raises ValueError with what is allowed."""
    choices = [str(c) for c in field.get("choices") or []]
    if choices and raw not in choices:
        raise ValueError(f"choose one of {', '.join(choices)}")
    kind = str(field.get("type") or "text")
    if kind == "integer":
        try:
            value: Any = int(raw)
        except ValueError:
            raise ValueError("expected a whole number") from None
    elif kind == "number":
        try:
            value = float(raw)
        except ValueError:
            raise ValueError("expected a number") from None
    elif kind == "boolean":
        if raw.lower() not in _TRUE + _FALSE:
            raise ValueError("expected true or false")
        return raw.lower() in _TRUE
    else:
        return raw
    for bound, ok in (("minimum", lambda b: value >= b), ("maximum", lambda b: value <= b)):
        if field.get(bound) is not None and not ok(field[bound]):
            raise ValueError(f"the {bound} is {field[bound]}")
    return value


def _ask(field: dict[str, Any], current: str | None) -> str:
    label = str(field.get("description") or field["key"])
    if field.get("choices"):
        label += f" [{'/'.join(str(c) for c in field['choices'])}]"
    if field.get("url"):
        typer.echo(f"  ({field['key']}: get it at {field['url']})")
    default = current if current is not None else field.get("default")
    if field.get("secret"):
        hint = "; Enter keeps the current value" if current else ""
        answer = typer.prompt(f"{label} ({field['key']}, hidden{hint})", default="", hide_input=True, show_default=False)
        return answer or current or ""
    return str(typer.prompt(f"{label} ({field['key']})", default="" if default is None else str(default)))


def _gather(provider_name: str, schema: list[dict[str, Any]], given: dict[str, str], env: dict[str, str]) -> tuple[dict[str, str], dict[str, Any]]:
    """Secrets (env name -> value) and settings (key -> value) for every field of ``schema``."""
    secrets: dict[str, str] = {}
    settings: dict[str, Any] = {}
    for field in schema:
        if not _applies(field, settings):
            continue
        key = field["key"]
        env_name = _env_var(provider_name, field) if field.get("secret") else ""
        current = env.get(env_name) if field.get("secret") else None
        for attempt in range(_ATTEMPTS):
            raw = given[key] if key in given else _ask(field, current)
            if raw == "" and field.get("required"):
                problem = "it is required"
            else:
                try:
                    value = _convert(field, raw) if raw != "" else None
                    break
                except ValueError as exc:
                    problem = str(exc)
            if key in given or attempt == _ATTEMPTS - 1:
                raise HermesError(f"setting {key!r} of memory provider {provider_name!r}: {raw!r} refused, {problem}; nothing was saved")
            typer.echo(f"  {key}: {problem}", err=True)
        if value is None:
            continue
        if field.get("secret"):
            secrets[env_name] = str(value)
        else:
            settings[key] = value
    return secrets, settings


def _parse_given(pairs: list[str], schema: list[dict[str, Any]], provider_name: str) -> dict[str, str]:
    keys = [f["key"] for f in schema]
    given: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in keys:
            raise HermesError(
                f"--set {pair!r}: expected KEY=VALUE with KEY one of {', '.join(keys) or '(none)'} "
                f"(the settings of {provider_name})"
            )
        field = next(f for f in schema if f["key"] == key)
        try:
            if value != "":
                _convert(field, value)
        except ValueError as exc:  # refused before any question is asked
            raise HermesError(f"--set {key}={value!r}: {exc}; nothing was saved") from None
        given[key] = value
    return given


def _provider_step(name: str, step: str, call: Any, state: str) -> None:
    try:
        call()
    except Exception as exc:  # the provider's code: one line, never a traceback
        text = " ".join(str(exc).split())[:300]
        raise HermesError(f"memory provider {name!r}: {step} failed: {type(exc).__name__}: {text}; {state}") from None


def _own_setup(name: str, own_setup: Any, home: HermesHome) -> bool:
    """Run a provider's own wizard; False when it has none. Cancelled or failed: one line, nothing saved."""
    try:
        return bool(own_setup(home))
    except KeyboardInterrupt:
        raise HermesError(f"setup of memory provider {name!r} was cancelled; nothing was saved") from None
    except HermesError:
        raise
    except Exception as exc:  # the provider's code: one line, never a traceback
        text = " ".join(str(exc).split())[:300]
        raise HermesError(
            f"memory provider {name!r}: its setup failed: {type(exc).__name__}: {text}; nothing was saved"
        ) from None


def _applies(field: dict[str, Any], settings: dict[str, Any]) -> bool:
    """A field whose ``when`` (``{key: value, ...}``) does not match the answers so far is not asked."""
    when = field.get("when")
    if not isinstance(when, dict):
        return True
    return all(str(settings.get(k)) == str(v) for k, v in when.items())


def run_setup(host: PluginHost, home: HermesHome, name: str, *, given: list[str], activate: bool, as_json: bool = False) -> None:
    """Set up memory provider ``name`` (see the module docstring)."""
    obj = host.driver(MEMORY_GROUP, name)  # unknown names fail here, naming what exists
    provider = obj() if isinstance(obj, type) else obj
    if not getattr(provider, "name", ""):
        provider.name = name
    own_setup = getattr(provider, "own_setup", None)
    if callable(own_setup) and not given and not as_json and _own_setup(name, own_setup, home):
        return  # the provider's own wizard asked and saved everything, instead of the schema's questions
    schema = [f for f in provider.get_config_schema() or [] if isinstance(f, dict) and f.get("key")]
    values = _parse_given(given, schema, name)
    secrets, settings = _gather(name, schema, values, read_dotenv(home.env_path))
    # The provider's own step first: if it fails, nothing at all has been written.
    _provider_step(name, "save_config", lambda: provider.save_config(settings) if settings else None, "nothing was saved")
    for env_name, secret in secrets.items():
        set_dotenv_value(home.env_path, env_name, secret)
    post_setup = getattr(provider, "post_setup", None)
    if callable(post_setup):
        done = "its settings and secrets were saved; run the setup again once the problem is fixed"
        _provider_step(name, "post_setup", lambda: post_setup(home, settings), done)
    if activate:
        set_config_value(home.config_path, "memory.provider", name)
    saved = [f"{len(secrets)} secret(s) in {home.env_path}" if secrets else "", f"{len(settings)} setting(s)" if settings else ""]
    summary = " and ".join(s for s in saved if s) or "no settings needed"
    if as_json:
        from ._state import print_json

        print_json({"provider": name, "secrets": sorted(secrets), "settings": sorted(settings), "activated": activate})
        return
    typer.echo(f"memory provider {name} is set up: {summary}.")
    if activate:
        typer.echo(f"memory.provider is now {name}; `hermes memory status` shows it.")
