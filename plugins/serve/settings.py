"""The ``serve.*`` settings, checked once at start: a bad value is one line naming the key and the fix."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes.kernel.approvals import CommandAllowList
from hermes.kernel.config import Config
from hermes.kernel.errors import ConfigError
from hermes.kernel.home import HermesHome
from .keys import ApiKey, load_keys

__all__ = ["APPROVAL_MODES", "ServeSettings", "is_loopback"]

APPROVAL_MODES = ("refuse", "allow-list")
_LOOPBACK = {"127.0.0.1", "::1", "localhost"}


def is_loopback(host: str) -> bool:
    return host in _LOOPBACK or host.startswith("127.")


def _number(config: Config, key: str, kind: type, minimum: float, maximum: float) -> Any:
    value = config.get(f"serve.{key}")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not minimum <= value <= maximum:
        raise ConfigError(
            f"serve.{key} must be a number from {minimum:g} to {maximum:g}, got {value!r}; "
            f"fix it with `hermes config set serve.{key} VALUE`"
        )
    return kind(value)


@dataclass(frozen=True)
class ServeSettings:
    """Everything the server reads from ``serve.*``."""

    keys: tuple[ApiKey, ...]
    max_concurrent: int
    max_queue: int
    drain_timeout: float
    approvals: str
    allowed_commands: tuple[str, ...]
    workspace: Path
    requests_per_minute: int
    cost_per_day: float
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    idle_timeout: float = 5.0
    max_connections: int = 1000
    max_connections_per_client: int = 64

    @classmethod
    def from_config(cls, config: Config, home: HermesHome) -> ServeSettings:
        approvals = config.get("serve.approvals", "refuse")
        if approvals not in APPROVAL_MODES:
            raise ConfigError(f"serve.approvals must be one of {', '.join(APPROVAL_MODES)}, got {approvals!r}")
        allowed = config.get("serve.allowed_commands", []) or []
        if not isinstance(allowed, list) or not all(isinstance(p, str) for p in allowed):
            raise ConfigError("serve.allowed_commands must be a list of command patterns (globs such as 'git push *')")
        workspace = str(config.get("serve.workspace", "") or "")
        return cls(
            keys=tuple(load_keys(config.get("serve.api_keys", []))),
            max_concurrent=_number(config, "max_concurrent", int, 1, 1024),
            max_queue=_number(config, "max_queue", int, 0, 100_000),
            drain_timeout=_number(config, "drain_timeout", float, 0, 86_400),
            approvals=approvals,
            allowed_commands=tuple(allowed),
            workspace=Path(workspace).expanduser() if workspace else home.path / "workspace",
            requests_per_minute=_number(config, "requests_per_minute", int, 0, 10_000_000),
            cost_per_day=_number(config, "cost_per_day", float, 0, 10_000_000),
            header_timeout=_number(config, "header_timeout", float, 0.1, 3600),
            body_timeout=_number(config, "body_timeout", float, 0.1, 3600),
            idle_timeout=_number(config, "idle_timeout", float, 0.1, 3600),
            max_connections=_number(config, "max_connections", int, 1, 1_000_000),
            max_connections_per_client=_number(config, "max_connections_per_client", int, 1, 1_000_000),
        )

    def approver(self) -> Callable[[str, str], bool] | None:
        """The ``approve`` callback tools get: None (refuse every command that needs approval) or the allow-list.

        The allow-list matches parsed commands part by part (:class:`~hermes.kernel.approvals.CommandAllowList`).
        """
        if self.approvals == "refuse":
            return None
        return CommandAllowList(self.allowed_commands)
