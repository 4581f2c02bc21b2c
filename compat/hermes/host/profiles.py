"""Profiles as Hermes Agent's ``hermes_cli.profiles`` shows them to providers, for one home.

A provider asks which profile is active (honcho names its workspace host
after it), where the default home is (shared files such as ``honcho.json``)
and which profiles exist. The answers come from the home the provider was
initialised for, never from ``HERMES_HOME`` or ``~/.hermes``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes.kernel.home import HermesHome

__all__ = ["ProfileInfo", "Profiles"]


@dataclass
class ProfileInfo:
    """One profile: the fields providers read (Hermes's has more, about gateways and wrappers)."""

    name: str
    path: Path
    is_default: bool
    has_env: bool = False
    model: str | None = None
    provider: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Profiles:
    """The profile functions, answering for ``home()`` (a callable: the scope's home can change)."""

    def __init__(self, home: Any) -> None:
        self._home = home

    @property
    def home(self) -> HermesHome:
        home: HermesHome = self._home()
        return home

    def get_active_profile_name(self) -> str:
        """``default``, or the profile's name."""
        return self.home.profile

    def get_default_hermes_home(self) -> Path:
        """The root home (the default profile's), where files shared by all profiles live."""
        return self.home.root

    def list_profiles(self) -> list[ProfileInfo]:
        """The default profile plus every folder under ``<root>/profiles/``, by name."""
        root = self.home.root
        found = [ProfileInfo("default", root, True, (root / ".env").exists())]
        folder = root / "profiles"
        if folder.is_dir():
            for child in sorted(folder.iterdir()):
                if child.is_dir():
                    found.append(ProfileInfo(child.name, child, False, (child / ".env").exists()))
        return found

    def profile_exists(self, name: str) -> bool:
        return any(p.name == name for p in self.list_profiles())
