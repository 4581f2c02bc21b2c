"""Errors a user can act on.

Each carries an exit code and a one-line message that says what is wrong and,
where possible, the command that fixes it. The CLI prints ``error: <message>``
and exits with the code; no traceback for a user mistake.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["HermesError", "ConfigError", "PluginNotFoundError", "PluginLoadError", "PluginDependencyError"]


class HermesError(Exception):
    """Base class for errors shown to the user as one line."""

    exit_code: int = 1


class ConfigError(HermesError):
    """The configuration is unreadable or holds an invalid value."""

    exit_code = 2


class PluginNotFoundError(HermesError):
    """No enabled plugin of that name is installed in that entry-point group."""

    def __init__(self, group: str, name: str, available: Iterable[str]) -> None:
        self.group, self.name = group, name
        self.available = sorted(set(available))
        shown = ", ".join(self.available) if self.available else "none"
        super().__init__(
            f"no {group!r} plugin named {name!r}; available: {shown} "
            "(see `hermes plugin list --all`)"
        )


class PluginLoadError(HermesError):
    """A plugin was found but raised while importing or was the wrong type."""

    def __init__(self, group: str, name: str, reason: str) -> None:
        self.group, self.name, self.reason = group, name, reason
        super().__init__(f"{group!r} plugin {name!r} failed to load: {reason}")


class PluginDependencyError(PluginLoadError):
    """A plugin's own code is fine but a package it imports is not installed.

    An optional plugin (a memory provider) that raises this is left out with
    one line, and the agent runs without it.
    """
