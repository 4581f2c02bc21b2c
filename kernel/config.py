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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .home import HermesHome, atomic_write

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
]

DEFAULTS: dict[str, Any] = {
    "model": {
        "provider": "openai",
        "name": "",
        "base_url": None,
        "max_tokens": 4096,
        "temperature": None,
        "timeout": 600.0,
        "prompt_caching": True,
    },
    "retries": {
        "max_attempts": 3,
        "base_delay": 1.0,
        "max_delay": 30.0,
        "max_retry_after": 60.0,
    },
    "credentials": {},
    "credential_pool": {
        "rate_limit_cooldown": 3600,
        "billing_cooldown": 3600,
        "auth_cooldown": 300,
        "lease_ttl": 900,
    },
    "pricing": {
        "models": {},
    },
    "agent": {
        "max_iterations": 90,
    },
    "toolsets": [],
    "context": {
        "engine": "compressor",
    },
    "compression": {
        # false: never compress automatically (/compress and a context-overflow error still do).
        "enabled": True,
        "threshold": 0.50,
        "target_ratio": 0.20,
        "protect_first_n": 3,
        # The newest messages always kept verbatim (the seeds keep 20); at least 3.
        "tail_min_messages": 20,
        # Below this fidelity score (0-1) the summary is asked again, then missing facts are kept verbatim.
        "min_fidelity": 0.85,
        # ask: show each compaction's note in the REPL to accept, edit or cancel; off: never.
        "review": "off",
        # Tokens of conversation the summary model is sent at most (never over 60% of the window).
        "summary_input_tokens": 60_000,
    },
    "auxiliary": {
        # The summary model; empty: the main provider and model.
        "compression": {"provider": "", "model": ""},
    },
    "memory": {
        "enabled": True,
        "provider": "",
        "memory_limit": 2200,
        "user_limit": 1375,
        "nudge_interval": 10,
    },
    "credential_pool_strategies": {},
    "delegation": {
        "max_concurrent_children": 3,
        "max_spawn_depth": 1,
        "max_iterations": 50,
        "timeout": 600.0,
        "provider": None,
        "model": None,
    },
    "skills": {
        "external_dirs": [],
        # Skill names left out of the index and the tools.
        "disabled": [],
        # Tool-using iterations without skill maintenance before the self-improvement review.
        "review_interval": 15,
        # Install sources (path or URL prefixes) treated as trusted by the skills guard policy.
        "trusted_sources": [],
    },
    "context_files": {
        # AGENTS.md / .hermes.md / ... in the system prompt; longer files are cut.
        "enabled": True,
        "max_chars": 20_000,
    },
    "plugins": {
        "disabled": [],
    },
    "serve": {
        # Bearer keys, stored hashed ({name, sha256, prefix, created_at, requests_per_minute,
        # cost_per_day}); managed by `hermes serve key add|list|revoke`. None: only loopback binds.
        "api_keys": [],
        # Turns running at once, and turns waiting for a worker before a 429.
        "max_concurrent": 8,
        "max_queue": 64,
        # Seconds running turns get to finish after SIGTERM.
        "drain_timeout": 30.0,
        # Dangerous terminal commands: "refuse" them all, or "allow-list" (allowed_commands globs).
        "approvals": "refuse",
        "allowed_commands": [],
        # The folder file tools are confined to; empty: HERMES_HOME/workspace.
        "workspace": "",
        # Per-key limits for keys that set none (0: unlimited).
        "requests_per_minute": 0,
        "cost_per_day": 0.0,
    },
    "mcp": {
        # NAME: {command, args, env, cwd} (stdio) or {url, headers, transport: http | sse}, plus
        # enabled, timeout, connect_timeout, include, exclude, parallel_safe (docs/mcp.md).
        "servers": {},
        "timeout": 120.0,  # seconds per call, unless a server sets its own
        "connect_timeout": 30.0,
        "max_restarts": 5,  # restarts in a row of a server that keeps dying, then it stays down
        "restart_backoff": 0.5,  # first restart delay in seconds, doubled each time
        "restart_backoff_max": 30.0,
        "sampling": {"enabled": False, "model": "", "max_tokens_cap": 1024, "requests_per_minute": 10},
    },
    "security": {
        # Secrets in tool output become [REDACTED:kind] before they are stored, saved or sent.
        "redact_tool_output": True,
    },
    "tools": {
        # Folders the file tools may use without approval, besides the working directory.
        "allowed_paths": [],
    },
    "approvals": {
        # ask: the REPL asks, a one-shot run refuses; off: approve everything (as --yolo does).
        "mode": "ask",
    },
    "store": {
        # An entry point in hermes.session_stores: sqlite (HERMES_HOME/state.db) or postgresql.
        "backend": "sqlite",
        # Where the data lives (HERMES_STORE_URL wins): empty for state.db, a path or
        # sqlite:///path, or postgresql://user@host/db. A URL's scheme names its backend.
        "url": None,
        # SQLite only: OFF, NORMAL (default; a commit survives a crash, maybe not power loss),
        # FULL or EXTRA (survives power loss too). See docs/session-stores.md.
        "synchronous": "NORMAL",
        # PostgreSQL only: connections per process.
        "pool_size": 4,
    },
}

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
    """The merged configuration of one profile, read with dotted keys."""

    def __init__(self, data: dict[str, Any], path: Path | None = None) -> None:
        self._data = data
        self.path = path

    def get(self, key: str, default: Any = _MISSING) -> Any:
        """Value at dotted ``key``; ``default`` if given, else ConfigError when absent."""
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
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
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


_DOTENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


def read_dotenv(path: Path) -> dict[str, str]:
    """``KEY=VALUE`` pairs of a ``.env`` file; quotes stripped, ``#`` comments ignored."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return {}
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


def _env_overrides(environ: Mapping[str, str]) -> dict[str, Any]:
    overrides: dict[str, Any] = {}
    for name, raw in environ.items():
        if not name.startswith("HERMES_") or name in _RESERVED_ENV:
            continue
        parts = name[len("HERMES_") :].lower().split("__")
        if parts[0] not in DEFAULTS or any(not p for p in parts):
            continue
        _set_dotted(overrides, ".".join(parts), parse_value(raw))
    return overrides


def load_config(
    home: HermesHome,
    *,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Config:
    """Merge defaults, ``config.yaml``, ``.env`` + environment and CLI ``overrides``.

    ``overrides`` maps dotted keys to values (None values are skipped, so
    unset flags do not mask lower layers).
    """
    env: dict[str, str] = dict(read_dotenv(home.env_path))
    env.update(os.environ if environ is None else environ)
    data = copy.deepcopy(DEFAULTS)
    _deep_merge(data, read_config_file(home.config_path))
    _deep_merge(data, _env_overrides(env))
    for key, value in (overrides or {}).items():
        if value is not None:
            _set_dotted(data, key, value)
    return Config(data, home.config_path)


def set_config_value(path: Path, key: str, value: Any) -> None:
    """Set dotted ``key`` in the ``config.yaml`` at ``path``, written atomically."""
    import yaml

    data = read_config_file(path)
    _set_dotted(data, key, value)
    atomic_write(path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def set_dotenv_value(path: Path, key: str, value: str) -> None:
    """Set ``KEY=value`` in ``.env`` (mode 0600, atomic), keeping other lines."""
    if not is_env_key(key):
        raise ConfigError(f"invalid environment name {key!r}: use A-Z, 0-9 and _")
    if "\n" in value or "\r" in value:
        raise ConfigError(f"the value for {key} must be a single line")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    quoted = value if re.fullmatch(r"[A-Za-z0-9_./:@+-]*", value) else _quote(value)
    new_line = f"{key}={quoted}"
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
