"""API keys of ``hermes serve``: generated once, stored only as SHA-256 hashes in ``serve.api_keys``.

A key is 32 random bytes (``hk-`` plus URL-safe base64): guessing is hopeless,
so a fast hash is enough and a slow one would only cost every request. The
plain key is printed once by ``hermes serve key add`` and never stored.
The hashes are not secret material: dashboard cookies are signed with the
server secret (cookies.py), never derived from a hash, so a copied
``config.yaml`` lets nobody sign in.

Each key belongs to a tenant (its own name unless ``--tenant`` names a shared
one); an admin key sees every tenant (tenants.py says what that scopes).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes.kernel.config import read_config_file, set_config_value
from hermes.kernel.errors import ConfigError, HermesError
from hermes.kernel.home import file_lock, lock_file_for

__all__ = ["ApiKey", "KEY_PREFIX", "add_key", "hash_key", "load_keys", "match_key", "revoke_key"]

KEY_PREFIX = "hk-"
_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


@dataclass(frozen=True)
class ApiKey:
    """One stored key: its name, hash, the first characters (to recognise it) and its limits.

    ``requests_per_minute`` / ``cost_per_day`` None: the ``serve.*`` defaults apply.
    ``tenant`` None: the key is a tenant of its own, named after it.
    """

    name: str
    sha256: str
    prefix: str
    created_at: float = 0.0
    requests_per_minute: int | None = None
    cost_per_day: float | None = None
    tenant: str | None = None
    admin: bool = False

    @property
    def tenant_name(self) -> str:
        """The tenant whose sessions, memory, skills and workspace this key uses."""
        return self.tenant or self.name

    def as_config(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "sha256": self.sha256, "prefix": self.prefix,
                                "created_at": round(self.created_at, 3)}  # fmt: skip
        if self.requests_per_minute is not None:
            data["requests_per_minute"] = self.requests_per_minute
        if self.cost_per_day is not None:
            data["cost_per_day"] = self.cost_per_day
        if self.tenant is not None:
            data["tenant"] = self.tenant
        if self.admin:
            data["admin"] = True
        return data

    def describe(self) -> dict[str, Any]:
        """What ``key list`` shows: never the hash."""
        return {"name": self.name, "prefix": self.prefix, "created_at": self.created_at,
                "requests_per_minute": self.requests_per_minute, "cost_per_day": self.cost_per_day,
                "tenant": self.tenant_name, "admin": self.admin}  # fmt: skip


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _optional_number(entry: dict[str, Any], field: str, kind: type, index: int) -> Any:
    value = entry.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ConfigError(f"serve.api_keys[{index}].{field} must be a number of at least 0, got {value!r}")
    return kind(value)


def load_keys(entries: Any) -> list[ApiKey]:
    """The keys in ``serve.api_keys``; a malformed entry is a ConfigError naming it."""
    if entries in (None, ""):
        return []
    if not isinstance(entries, list):
        raise ConfigError("serve.api_keys must be a list; manage it with `hermes serve key add|revoke`")
    keys = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str) or not entry.get("name"):
            raise ConfigError(
                f"serve.api_keys[{index}] needs a name and a sha256 hash; remove it and run `hermes serve key add NAME`"
            )
        tenant, admin = entry.get("tenant"), entry.get("admin", False)
        if tenant is not None and not _valid_name(tenant):
            raise ConfigError(f"serve.api_keys[{index}].tenant must be 1-64 letters, digits, '-', '_' or '.', got {tenant!r}")
        if not isinstance(admin, bool):
            raise ConfigError(f"serve.api_keys[{index}].admin must be true or false, got {admin!r}")
        keys.append(ApiKey(
            name=str(entry["name"]), sha256=entry["sha256"].lower(), prefix=str(entry.get("prefix", "")),
            created_at=float(entry.get("created_at") or 0.0),
            requests_per_minute=_optional_number(entry, "requests_per_minute", int, index),
            cost_per_day=_optional_number(entry, "cost_per_day", float, index),
            tenant=tenant, admin=admin,
        ))  # fmt: skip
    return keys


def match_key(keys: Sequence[ApiKey], presented: str | None) -> ApiKey | None:
    """The stored key whose hash matches ``presented`` (compared in constant time), or None."""
    if not presented:
        return None
    digest = hash_key(presented)
    found = None
    for key in keys:
        if hmac.compare_digest(key.sha256, digest):
            found = key
    return found


def _valid_name(name: Any) -> bool:
    # Tenant names become folder names: '.' and '..' are not names.
    return isinstance(name, str) and 0 < len(name) <= 64 and set(name) <= _NAME_CHARS and name.strip(".") != ""


def _validate_name(name: str, what: str = "key name") -> str:
    if not _valid_name(name):
        raise HermesError(f"invalid {what} {name!r}: use 1-64 letters, digits, '-', '_' or '.'")
    return name


def add_key(config_path: Path, name: str, *, requests_per_minute: int | None = None,
            cost_per_day: float | None = None, tenant: str | None = None, admin: bool = False) -> str:  # fmt: skip
    """Create a key named ``name`` in the config file at ``config_path``; returns the plain key (shown once).

    ``tenant`` None makes the key a tenant of its own; ``admin`` lets it see every tenant.
    """
    _validate_name(name)
    if tenant is not None:
        _validate_name(tenant, "tenant name")
    for field, value in (("--rpm", requests_per_minute), ("--cost-per-day", cost_per_day)):
        if value is not None and value < 0:
            raise HermesError(f"{field} must be 0 (unlimited) or more, got {value}")
    with file_lock(lock_file_for(config_path)):  # the list read is the list changed: no key lost
        data = read_config_file(config_path)
        existing = load_keys((data.get("serve") or {}).get("api_keys"))
        if any(k.name == name for k in existing):
            raise HermesError(f"a key named {name!r} exists; revoke it first (`hermes serve key revoke {name}`) or pick another name")
        plain = KEY_PREFIX + secrets.token_urlsafe(32)
        key = ApiKey(name, hash_key(plain), plain[:8], time.time(), requests_per_minute, cost_per_day, tenant, admin)
        set_config_value(config_path, "serve.api_keys", [k.as_config() for k in existing] + [key.as_config()])
    return plain


def revoke_key(config_path: Path, name: str) -> None:
    """Remove the key named ``name``; an unknown name is an error that lists the names."""
    with file_lock(lock_file_for(config_path)):
        data = read_config_file(config_path)
        existing = load_keys((data.get("serve") or {}).get("api_keys"))
        if not any(k.name == name for k in existing):
            names = ", ".join(k.name for k in existing) or "none"
            raise HermesError(f"no key named {name!r} (keys: {names}); see `hermes serve key list`")
        set_config_value(config_path, "serve.api_keys", [k.as_config() for k in existing if k.name != name])
