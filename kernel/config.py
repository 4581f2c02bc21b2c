"""Layered configuration: defaults < config.yaml < .env / environment < CLI flags.

All defaults live in :data:`DEFAULTS`. Keys are dotted paths (``model.provider``).
An environment variable ``HERMES_<SECTION>__<KEY>`` (double underscore between
levels, for example ``HERMES_AGENT__MAX_ITERATIONS=40``) overrides a key whose
top-level section exists in the defaults; values are YAML-typed. Upper-case
names without dots (``OPENAI_API_KEY``) are environment settings and live in
``.env``, which never overrides the real environment.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config_schema import CONFIG_VERSION, SCHEMA, ConfigSchema, defaults_from
from .errors import ConfigError
from .home import HermesHome, atomic_write, file_lock, lock_file_for
from .lazy_log import LazyLogger

if TYPE_CHECKING:
    from hermes.compat.hermes.config_map import Translation

log = LazyLogger(__name__)

__all__ = [
    "DEFAULTS",
    "Config",
    "is_env_key",
    "load_config",
    "parse_value",
    "read_config_file",
    "read_dotenv",
    "apply_dotenv",
    "set_config_value",
    "set_dotenv_value",
    "decode_error",
    "hermes_translation",
    "is_foreign",
    "leaves",
]

# Every key, its type, range and description live in config_schema.SCHEMA.
DEFAULTS: dict[str, Any] = defaults_from(SCHEMA)

# Variables that steer hermes itself rather than a config key.
_RESERVED_ENV = {"HERMES_HOME", "HERMES_PROFILE", "HERMES_LOAD_PLUGINS"}
_ENV_KEY_RE = re.compile(r"^[A-Z_][A-Z0-9_]*$")
_MISSING = object()


def is_env_key(key: str) -> bool:
    """True for environment-style keys (``OPENAI_API_KEY``) that belong in ``.env``."""
    return bool(_ENV_KEY_RE.match(key))


def parse_value(text: str) -> Any:
    """YAML-typed value of a command-line or environment string (``40`` -> 40)."""
    import yaml

    try:
        return yaml.safe_load(text) if text.strip() else text
    except yaml.YAMLError:
        return text


def _split_key(key: str) -> list[str]:
    parts = key.split(".")
    if not key or any(not p for p in parts):
        raise ConfigError(f"invalid config key {key!r}: use dotted names like model.provider")
    return parts


def _deep_merge(base: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _deep_merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
    return base


def _set_dotted(data: dict[str, Any], key: str, value: Any) -> None:
    parts = _split_key(key)
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[parts[-1]] = value


class Config:
    """The merged configuration of one profile, read with dotted keys.

    ``origins`` maps each leaf key to where its value came from (``default``,
    ``config.yaml``, ``config.yaml via the Hermes Agent key X``, ``.env``,
    ``environment``, ``CLI flag``). ``hermes`` is the Hermes Agent translation
    of the file (None for a pure kernel config). ``deferred`` holds keys whose
    value cannot be used (``model.provider: auto`` with no key found): reading
    one without a default raises its one-line error.
    """

    def __init__(
        self,
        data: dict[str, Any],
        path: Path | None = None,
        *,
        origins: dict[str, str] | None = None,
        hermes: Translation | None = None,
    ) -> None:
        self._data = data
        self.path = path
        self.origins: dict[str, str] = origins or {}
        self.hermes = hermes
        # A value set again by .env, the environment or a flag is usable whatever the file said.
        deferred = hermes.deferred if hermes is not None else {}
        self.deferred = {k: v for k, v in deferred.items() if self.origin(k).startswith("config.yaml")}

    def origin(self, key: str) -> str:
        """Where the value of leaf ``key`` came from; ``default`` when nothing set it."""
        return self.origins.get(key, "default")

    def get(self, key: str, default: Any = _MISSING) -> Any:
        """Value at dotted ``key``; ``default`` if given, else ConfigError when absent."""
        if key in self.deferred:
            # Optional readers (doctor's key check) get their default; the model client gets the reason.
            if default is not _MISSING:
                return default
            raise ConfigError(self.deferred[key])
        node: Any = self._data
        for part in _split_key(key):
            if not isinstance(node, Mapping) or part not in node:
                if default is not _MISSING:
                    return default
                raise ConfigError(f"no config key {key!r}; see `hermes config show`")
            node = node[part]
        return node

    def as_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self._data)

    @property
    def disabled_plugins(self) -> list[str]:
        value = self.get("plugins.disabled", [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError("plugins.disabled must be a list of plugin names")
        return value


def read_config_file(path: Path) -> dict[str, Any]:
    """The mapping in a ``config.yaml``; {} when the file is missing.

    A malformed file raises ConfigError naming the file and the line.
    """
    text = _read_text(path)
    if text is None:
        return {}
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"{path}{where}: {problem}; fix or remove that line") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path} line 1: the top level must be a mapping of keys to values")
    return data


def decode_error(path: Path, exc: UnicodeDecodeError) -> ConfigError:
    """One line naming the file and the byte offset where it stops being UTF-8."""
    return ConfigError(
        f"{path} is not UTF-8 text (byte {exc.start}: {exc.object[exc.start:exc.start + 1]!r}); "
        "re-save it as UTF-8 or remove it"
    )


def _read_text(path: Path) -> str | None:
    """The file's text; None when it is missing; ConfigError when unreadable or not UTF-8."""
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except UnicodeDecodeError as exc:
        raise decode_error(path, exc) from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}; check its permissions") from None


_DOTENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


def read_dotenv(path: Path) -> dict[str, str]:
    """``KEY=VALUE`` pairs of a ``.env`` file; quotes stripped, ``#`` comments ignored."""
    text = _read_text(path)
    if text is None:
        return {}
    lines = text.splitlines()
    values: dict[str, str] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _DOTENV_LINE.match(line)
        if not match:
            raise ConfigError(f"{path} line {number}: expected KEY=VALUE")
        key, raw = match.groups()
        if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
            raw = raw[1:-1]
        elif " #" in raw:
            raw = raw.split(" #", 1)[0].rstrip()
        values[key] = raw
    return values


def apply_dotenv(path: Path, environ: os._Environ[str] | dict[str, str] | None = None) -> None:
    """Export ``.env`` values that the real environment does not already set."""
    env = os.environ if environ is None else environ
    for key, value in read_dotenv(path).items():
        env.setdefault(key, value)


def _env_overrides(
    environ: Mapping[str, str], schema: ConfigSchema, origins: dict[str, str] | None = None,
    env_origin: Callable[[str], str] = lambda name: "environment",
) -> dict[str, Any]:
    overrides: dict[str, Any] = {}
    for name, raw in sorted(environ.items()):
        if not name.startswith("HERMES_") or name in _RESERVED_ENV:
            continue
        parts = name[len("HERMES_") :].lower().split("__")
        if parts[0] not in DEFAULTS or any(not p for p in parts):
            continue
        single: dict[str, Any] = {}
        _set_dotted(single, ".".join(parts), parse_value(raw))
        checked = schema.validate(single, where=f"environment {name}: ", hint=False)
        _deep_merge(overrides, checked)
        if origins is not None:
            for leaf in leaves(checked):
                origins[leaf] = f"{env_origin(name)} ({name})"
    return overrides


def leaves(data: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Dotted keys of the values in ``data`` (a mapping with entries is walked, anything else is a leaf)."""
    found: list[str] = []
    for name, value in data.items():
        key = f"{prefix}{name}"
        found += leaves(value, key + ".") if isinstance(value, Mapping) and value else [key]
    return found


def is_foreign(raw: Mapping[str, Any], schema: ConfigSchema) -> bool:
    """True when a config.yaml mapping holds something the kernel's schema alone cannot read.

    Keys outside the schema, values it refuses (Hermes Agent's ``plugins.enabled``
    list), a bare ``model: NAME`` or ``model.provider: auto``. Only then is the
    Hermes Agent translation imported, so a pure kernel config never loads it.
    """
    model = raw.get("model")
    if "model" in raw and (not isinstance(model, Mapping) or model.get("provider") == "auto"):
        return True
    if schema.unknown(raw):
        return True
    try:
        schema.validate(raw)
    except ConfigError:
        return True
    return False


_warned: set[str] = set()


def hermes_translation(
    raw: Mapping[str, Any],
    schema: ConfigSchema,
    *,
    environ: Mapping[str, str] | None = None,
    env_origin: Callable[[str], str] | None = None,
    where: str = "config.yaml",
) -> Translation | None:
    """The Hermes Agent translation of ``raw`` (see compat/hermes/config_map.py), None for a pure kernel file."""
    if not is_foreign(raw, schema):
        return None
    from hermes.compat.hermes.config_map import translate  # deferred: only files with foreign keys need it

    return translate(raw, schema, environ=environ, env_origin=env_origin, where=where)


def load_config(
    home: HermesHome,
    *,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    schema: ConfigSchema | None = None,
) -> Config:
    """Merge defaults, ``config.yaml``, ``.env`` + environment and CLI ``overrides``.

    ``overrides`` maps dotted keys to values (None values are skipped, so
    unset flags do not mask lower layers). The file (upgraded to the current
    layout version first) and the environment are checked against the schema;
    a bad value is one ConfigError naming where it came from and the key.
    """
    dotenv = read_dotenv(home.env_path)
    real = os.environ if environ is None else environ
    env: dict[str, str] = {**dotenv, **real}

    def env_origin(name: str) -> str:
        # .env is exported into the process before the config loads, so the same value means .env.
        return ".env" if name in dotenv and real.get(name, dotenv[name]) == dotenv[name] else "environment"

    schema = schema or ConfigSchema.build()
    data = copy.deepcopy(DEFAULTS)
    from .config_migrations import migrate_file

    path = home.config_path
    exists = path.exists()
    raw = read_config_file(path) if exists else {}
    translation = hermes_translation(raw, schema, environ=env, env_origin=env_origin, where=str(path)) if raw else None
    if exists:
        # A file Hermes Agent shares is upgraded in memory only: reading never rewrites it.
        raw = migrate_file(path, translation.data if translation else raw, write=translation is None)[0]
    origins: dict[str, str] = {}
    checked = schema.validate(raw, where=f"{path}: ")
    _deep_merge(data, checked)
    for leaf in leaves(checked):
        if leaf == "config_version" and translation is not None and leaf not in translation.data:
            continue  # stamped by the in-memory upgrade, not written in the file
        via = _hermes_origin(translation, leaf)
        origins[leaf] = f"config.yaml via the Hermes Agent key {via}" if via else "config.yaml"
    for line in translation.problems if translation else ():
        if line not in _warned:  # once per process, not once per profile load
            _warned.add(line)
            log.warning("%s", line)
    _deep_merge(data, _env_overrides(env, schema, origins, env_origin))
    for key, value in (overrides or {}).items():
        if value is not None:
            _set_dotted(data, key, value)
            for leaf in leaves({key: value}) if not isinstance(value, Mapping) else leaves(value, key + "."):
                origins[leaf] = "CLI flag"
    return Config(data, home.config_path, origins=origins, hermes=translation)


def _hermes_origin(translation: Translation | None, leaf: str) -> str | None:
    """The Hermes Agent key (and note) that set ``leaf``, if one did."""
    if translation is None:
        return None
    parts = leaf.split(".")
    for cut in range(len(parts), 0, -1):
        via = translation.origins.get(".".join(parts[:cut]))
        if via:
            return via
    return None


def set_config_value(path: Path, key: str, value: Any) -> None:
    """Set dotted ``key`` in the ``config.yaml`` at ``path``: read, changed and replaced
    atomically under the file's lock (:func:`.home.file_lock`), so concurrent writers all land.

    A file shared with Hermes Agent (keys outside the kernel's schema) is
    edited in place: only that key's line changes, every other byte, comment
    and Hermes Agent key stays, and no config_version is stamped.
    """
    import yaml

    from .config_migrations import migrate_file

    with file_lock(lock_file_for(path)):  # read, change, replace: another writer waits its turn
        data = read_config_file(path)
        if data and is_foreign(data, ConfigSchema.build()):
            import stat

            from hermes.compat.hermes.config_edit import set_in_text  # deferred: only shared files need it

            text = _read_text(path) or ""
            atomic_write(path, set_in_text(text, key, value), mode=stat.S_IMODE(path.stat().st_mode))
            return
        data = migrate_file(path, data)[0] if path.exists() else {"config_version": CONFIG_VERSION}
        _set_dotted(data, key, value)
        atomic_write(path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def set_dotenv_value(path: Path, key: str, value: str) -> None:
    """Set ``KEY=value`` in ``.env`` (mode 0600, atomic, under its lock), keeping other lines."""
    if not is_env_key(key):
        raise ConfigError(f"invalid environment name {key!r}: use A-Z, 0-9 and _")
    if "\n" in value or "\r" in value:
        raise ConfigError(f"the value for {key} must be a single line")
    quoted = value if re.fullmatch(r"[A-Za-z0-9_./:@+-]*", value) else _quote(value)
    new_line = f"{key}={quoted}"
    with file_lock(lock_file_for(path)):  # read, change, replace: another writer waits its turn
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            lines = []
        for index, line in enumerate(lines):
            match = _DOTENV_LINE.match(line)
            if match and match.group(1) == key:
                lines[index] = new_line
                break
        else:
            lines.append(new_line)
        atomic_write(path, "\n".join(lines) + "\n", mode=0o600)


def _quote(value: str) -> str:
    if "'" not in value:
        return f"'{value}'"
    if '"' not in value:
        return f'"{value}"'
    raise ConfigError("a .env value cannot hold both ' and \" characters")
