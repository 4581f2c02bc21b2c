"""Who a request acts for on a shared server, and where that tenant's own state lives.

Every key belongs to a tenant (keys.py). A tenant's turns create sessions
tagged with it, search only its sessions, remember in its own memory files,
write skills into its own folder and work in its own workspace folder, so
nothing one tenant writes reaches another tenant's prompt. The profile's
configuration, credentials, persona and installed skills are shared (read-only
for skills): they are the operator's.

An admin key, and a server without keys, act as the operator: they read every
tenant's sessions and work with the profile's own memory, skills and
workspace, as the CLI does; the sessions they create belong to no tenant.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes.kernel.home import HermesHome
from .keys import ApiKey

__all__ = ["Scope", "TENANTS_FOLDER", "TenantHome"]

#: Folder of the profile that holds one folder per tenant.
TENANTS_FOLDER = "tenants"


@dataclass(frozen=True)
class TenantHome(HermesHome):
    """A profile's home as one tenant's agent sees it.

    Configuration, credentials, the store, plugins, logs and ``SOUL.md`` are the
    profile's; memory files, saved tool results and the skills the agent writes
    are the tenant's (``<profile>/tenants/<tenant>/``). The profile's own skills
    stay visible, read-only (:attr:`shared_skills_dirs`).
    """

    tenant: str = ""

    @property
    def tenant_path(self) -> Path:
        return self.path / TENANTS_FOLDER / self.tenant

    @property
    def memories_dir(self) -> Path:
        return self.tenant_path / "memories"

    @property
    def skills_dir(self) -> Path:
        return self.tenant_path / "skills"

    @property
    def results_dir(self) -> Path:
        return self.tenant_path / "results"

    @property
    def shared_skills_dirs(self) -> tuple[Path, ...]:
        """The profile's skills: offered to the tenant, never written by it."""
        return (HermesHome(self.root, self.profile).skills_dir,)

    def ensure(self) -> TenantHome:
        self.tenant_path.mkdir(parents=True, exist_ok=True, mode=0o700)
        super().ensure()
        return self


@dataclass(frozen=True)
class Scope:
    """The tenant a request acts for and whether it may read every tenant.

    ``tenant`` None: a server without keys (one user on loopback).
    """

    tenant: str | None = None
    admin: bool = False

    @classmethod
    def of(cls, key: ApiKey | None) -> Scope:
        if key is None:
            return cls()
        return cls(key.tenant_name, key.admin)

    @property
    def isolated(self) -> bool:
        """True when this scope sees only its own tenant."""
        return self.tenant is not None and not self.admin

    @property
    def writes(self) -> str | None:
        """The tenant the sessions this scope creates belong to: None for the operator (admin, no keys)."""
        return self.tenant if self.isolated else None

    @property
    def reads(self) -> str | None:
        """The tenant filter for store reads: None reads every session."""
        return self.tenant if self.isolated else None

    def sees(self, session: dict[str, Any] | None) -> bool:
        """Whether a stored session row is visible to this scope (a missing one is not)."""
        if session is None:
            return False
        return not self.isolated or session.get("tenant") == self.tenant

    def home(self, profile_home: HermesHome) -> HermesHome:
        """The home this scope's agents use."""
        if not self.isolated:
            return profile_home
        return TenantHome(profile_home.root, profile_home.profile, str(self.tenant))

    def workspace(self, root: Path) -> Path:
        """The folder this scope's file and shell tools are confined to: ``root/<tenant>`` when isolated."""
        return root / str(self.tenant) if self.isolated else root
