"""``mcp.servers.<name>`` in config: parsing, ``${NAME}`` references and masking.

Nothing here imports the ``mcp`` SDK, so ``hermes mcp list`` and the tool
plugin stay cheap when no server runs.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes.kernel import ConfigError
from hermes.kernel.config import read_dotenv

__all__ = ["GlobalSettings", "ServerSpec", "env_lookup", "expand", "mask_spec", "parse_servers"]

log = logging.getLogger(__name__)

_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_REF_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_TRANSPORTS = ("stdio", "http", "sse")


@dataclass(frozen=True)
class ServerSpec:
    """One configured MCP server, as written (``${NAME}`` references unresolved)."""

    name: str
    transport: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    enabled: bool = True
    timeout: float = 120.0
    connect_timeout: float = 30.0
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    parallel_safe: bool = False

    def wants(self, tool: str) -> bool:
        """True when ``include``/``exclude`` let ``tool`` through."""
        if self.include and tool not in self.include:
            return False
        return tool not in self.exclude


@dataclass(frozen=True)
class GlobalSettings:
    """The ``mcp.*`` keys that are not per server."""

    timeout: float = 120.0
    connect_timeout: float = 30.0
    max_restarts: int = 5
    restart_backoff: float = 0.5
    restart_backoff_max: float = 30.0
    sampling_enabled: bool = False
    sampling_model: str = ""
    sampling_max_tokens_cap: int = 1024
    sampling_requests_per_minute: int = 10
    stdout_noise_limit: int = 65536  # bytes of non-JSON on a server's stdout before it is cut off

    @classmethod
    def from_config(cls, section: Mapping[str, Any]) -> GlobalSettings:
        sampling = section.get("sampling") or {}
        if not isinstance(sampling, Mapping):
            raise ConfigError("mcp.sampling must be a mapping (enabled, model, max_tokens_cap, requests_per_minute)")
        return cls(
            timeout=_number(section, "timeout", cls.timeout, "mcp"),
            connect_timeout=_number(section, "connect_timeout", cls.connect_timeout, "mcp"),
            max_restarts=int(_number(section, "max_restarts", cls.max_restarts, "mcp", minimum=0)),
            restart_backoff=_number(section, "restart_backoff", cls.restart_backoff, "mcp"),
            restart_backoff_max=_number(section, "restart_backoff_max", cls.restart_backoff_max, "mcp"),
            sampling_enabled=bool(sampling.get("enabled", False)),
            sampling_model=str(sampling.get("model") or ""),
            sampling_max_tokens_cap=int(_number(sampling, "max_tokens_cap", 1024, "mcp.sampling", minimum=1)),
            sampling_requests_per_minute=int(_number(sampling, "requests_per_minute", 10, "mcp.sampling", minimum=0)),
            stdout_noise_limit=int(_number(section, "stdout_noise_limit", cls.stdout_noise_limit, "mcp", minimum=1)),
        )


def _number(data: Mapping[str, Any], key: str, default: float, where: str, *, minimum: float = 0.001) -> float:
    value = data.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value < minimum:
        raise ConfigError(f"{where}.{key} must be a number >= {minimum:g}, not {value!r}")
    return float(value)


def _strings(data: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = data.get(key) or []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        raise ConfigError(f"{where}.{key} must be a list of strings")
    return tuple(str(v) for v in value)


def _mapping(data: Mapping[str, Any], key: str, where: str) -> dict[str, str]:
    value = data.get(key) or {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}.{key} must be a mapping of NAME: value")
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


def _server(name: str, raw: Any, defaults: GlobalSettings) -> ServerSpec:
    where = f"mcp.servers.{name}"
    if not _NAME_RE.match(name):
        raise ConfigError(f"{where}: a server name uses 1-32 letters, digits, '_' or '-'")
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where} must be a mapping with `command` (stdio) or `url` (http, sse)")
    command, url = raw.get("command"), raw.get("url")
    if not command and not url and not raw.get("transport"):
        raise ConfigError(f"{where} needs `command` (a stdio server) or `url` (http, sse)")
    transport = str(raw.get("transport") or ("stdio" if command else "http"))
    if transport not in _TRANSPORTS:
        raise ConfigError(f"{where}.transport must be one of {', '.join(_TRANSPORTS)}, not {transport!r}")
    if transport == "stdio" and not command:
        raise ConfigError(f"{where} needs `command` (or `url` with transport http or sse)")
    if transport != "stdio" and not url:
        raise ConfigError(f"{where} needs `url` for transport {transport}")
    return ServerSpec(
        name=name,
        transport=transport,
        command=str(command) if command else None,
        args=_strings(raw, "args", where),
        env=_mapping(raw, "env", where),
        cwd=str(raw["cwd"]) if raw.get("cwd") else None,
        url=str(url) if url else None,
        headers=_mapping(raw, "headers", where),
        enabled=bool(raw.get("enabled", True)),
        timeout=_number(raw, "timeout", defaults.timeout, where),
        connect_timeout=_number(raw, "connect_timeout", defaults.connect_timeout, where),
        include=_strings(raw, "include", where),
        exclude=_strings(raw, "exclude", where),
        parallel_safe=bool(raw.get("parallel_safe", False)),
    )


def parse_servers(section: Mapping[str, Any] | None) -> tuple[list[ServerSpec], list[str]]:
    """The valid servers of an ``mcp`` config section, and one line per invalid one."""
    section = section or {}
    defaults = GlobalSettings.from_config(section)
    servers = section.get("servers") or {}
    if not isinstance(servers, Mapping):
        return [], ["mcp.servers must be a mapping of NAME: {command | url, ...}"]
    specs, problems = [], []
    for name, raw in servers.items():
        try:
            specs.append(_server(str(name), raw, defaults))
        except ConfigError as exc:
            problems.append(str(exc))
    return specs, problems


def expand(text: str, lookup: Mapping[str, str], where: str) -> str:
    """``text`` with each ``${NAME}`` replaced from ``lookup`` (.env, then the environment)."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in lookup:
            raise ConfigError(f"{where} refers to ${{{name}}}, which is not set; add it with `hermes config set {name} VALUE`")
        return lookup[name]

    return _REF_RE.sub(value, text)


def _mask(value: str) -> str:
    """A ``${NAME}`` reference is shown as written; any literal value is hidden."""
    from hermes.kernel.redact import mask_secret

    if _REF_RE.fullmatch(value.strip()):
        return value
    return _REF_RE.sub(lambda m: m.group(0), mask_secret(value)) if value else value


def mask_spec(spec: ServerSpec) -> dict[str, Any]:
    """The server as shown by ``hermes mcp list``: env and header values masked."""
    shown: dict[str, Any] = {"name": spec.name, "transport": spec.transport, "enabled": spec.enabled}
    if spec.transport == "stdio":
        shown.update(command=spec.command, args=list(spec.args), cwd=spec.cwd)
    else:
        shown["url"] = spec.url
    shown["env"] = {k: _mask(v) for k, v in spec.env.items()}
    shown["headers"] = {k: _mask(v) for k, v in spec.headers.items()}
    shown.update(
        timeout=spec.timeout, connect_timeout=spec.connect_timeout, include=list(spec.include),
        exclude=list(spec.exclude), parallel_safe=spec.parallel_safe,
    )  # fmt: skip
    return shown


def env_lookup(home: Any) -> dict[str, str]:
    """``${NAME}`` values: ``.env`` first, the real environment over it."""
    values: dict[str, str] = {}
    env_path = getattr(home, "env_path", None)
    if env_path is not None:
        try:
            values.update(read_dotenv(env_path))
        except Exception as exc:  # an unreadable .env only loses its references
            log.warning("could not read %s: %s", env_path, exc)
    values.update(os.environ)
    return values
