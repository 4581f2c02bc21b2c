"""Whose ``HERMES_HOME/auth.json`` is it, and where the kernel keeps its own records.

Hermes Agent and hermes-kernel share ``~/.hermes`` and both call their
credential file ``auth.json``, in different layouts. When the file is Hermes
Agent's (or the kernel already moved out), the kernel keeps its records —
keys added with ``hermes auth add``, cooldowns, usage, leases, hidden keys —
in ``HERMES_HOME/hermes-kernel/auth.json`` and only reads Hermes Agent's file,
through ``hermes.compat.hermes.auth_store``, imported here and only here, and
only after the cheap check below found Hermes Agent's layout.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from hermes.compat.hermes.auth_store import HermesAuth

__all__ = ["KERNEL_DIR", "HermesView", "auth_kind", "kernel_auth_path", "looks_like_hermes_agent", "strategy_name_for"]

log = logging.getLogger(__name__)

#: The folder under HERMES_HOME holding the kernel's own records on a Hermes Agent home.
KERNEL_DIR = "hermes-kernel"

# Lines already logged by this process: every pool of a home reads the same file.
_WARNED: set[str] = set()

Kind = Literal["missing", "kernel", "hermes-agent", "unreadable"]  # unreadable: cannot even be opened


def looks_like_hermes_agent(data: Any) -> bool:
    """Hermes Agent's layout: ``providers`` or ``credential_pool`` (or the old ``systems``), no kernel ``credentials``."""
    return (isinstance(data, dict) and "credentials" not in data
            and any(isinstance(data.get(k), dict) for k in ("credential_pool", "providers", "systems")))


def auth_kind(path: Path) -> Kind:
    """What ``path`` is: missing, the kernel's, Hermes Agent's, or unreadable (cannot tell whose)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "unreadable"
    # Cheap first: without one of Hermes Agent's section names it is the kernel's (AuthStore says
    # what is wrong with it, if anything); only a file naming them is parsed here.
    if not any(name in raw for name in _MARKERS):
        return "kernel"
    try:
        data = json.loads(raw.decode("utf-8"))
    except ValueError:  # JSON and UTF-8 errors alike
        # A broken file naming Hermes Agent's sections is taken for its: it is then only read,
        # and each read says what is wrong, instead of the kernel refusing to start.
        return "hermes-agent"
    return "hermes-agent" if looks_like_hermes_agent(data) else "kernel"


_MARKERS = (b'"credential_pool"', b'"providers"', b'"systems"')


def kernel_auth_path(home_path: Path) -> Path:
    """The file the kernel writes: ``auth.json``, or ``hermes-kernel/auth.json`` on a Hermes Agent home.

    Once the kernel's own folder exists it stays the kernel's file, so removing
    or breaking Hermes Agent's file never moves the kernel's records.
    """
    own = home_path / KERNEL_DIR / "auth.json"
    if own.exists() or auth_kind(home_path / "auth.json") == "hermes-agent":
        return own
    return home_path / "auth.json"


class HermesView:
    """Hermes Agent's keys as the kernel sees them, re-read only when the file changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._cached: tuple[tuple[int, int] | None, HermesAuth | None] | None = None

    def signature(self) -> tuple[int, int] | None:
        try:
            stat = self.path.stat()
        except OSError:
            return None
        return (stat.st_mtime_ns, stat.st_size)

    def read(self) -> HermesAuth | None:
        """The parsed file (None when it is missing or turned out to be the kernel's)."""
        signature = self.signature()
        if self._cached is not None and self._cached[0] == signature:
            return self._cached[1]
        auth = None
        kind = auth_kind(self.path) if signature is not None else "missing"
        if kind in ("hermes-agent", "unreadable"):  # unreadable: the read names the cause
            from hermes.compat.hermes.auth_store import read_hermes_auth  # only on a Hermes Agent home

            auth = read_hermes_auth(self.path)
        self._cached = (signature, auth)
        return auth

    def warn_once(self, provider: str) -> None:
        """Log each line about ``provider``'s skipped entries once per process (chat, serve)."""
        auth = self.read()
        for line in auth.problems_for(provider) if auth else []:
            if line not in _WARNED:
                _WARNED.add(line)
                log.warning("%s", line)


def strategy_name_for(provider: str, strategies: Any, home_path: Path) -> str:
    """The strategy plugin for ``provider``: ``credential_pool_strategies.<provider>`` when set,
    else Hermes Agent's setting for the same pool on a Hermes Agent home, else ``fill_first``."""
    own = isinstance(strategies, Mapping) and provider in strategies
    if not strategies or kernel_auth_path(home_path) == home_path / "auth.json":
        return str(strategies[provider]) if own else "fill_first"
    from hermes.compat.hermes.auth_store import STRATEGIES, hermes_strategy  # only on a Hermes Agent home

    if own:
        # The same config.yaml is Hermes Agent's too, which writes "Round_Robin" as happily as "round_robin".
        raw = str(strategies[provider])
        return STRATEGIES.get(raw.strip().lower(), raw)
    return hermes_strategy(provider, strategies) or "fill_first"
