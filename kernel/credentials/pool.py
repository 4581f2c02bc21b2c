"""The credential pool: several keys per provider, chosen by a strategy plugin.

Keys come from config (``credentials.<provider>``), the environment
(``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ...; ``HERMES_HOME/.env`` is part of
the environment) and ``HERMES_HOME/auth.json``, in that order. On a home whose
``auth.json`` is Hermes Agent's, the kernel's own file is
``HERMES_HOME/hermes-kernel/auth.json`` and Hermes Agent's API keys follow the
kernel's (read only; see ``sources``). A key cools down
for as long as the provider said (``retry-after``, reset headers, even 0);
without reset information a rate limit cools it 60 s, a quota or billing
failure an hour, and an unauthorised key five minutes. Cooldowns, request
counts, last use (the round-robin cursor) and session leases live in auth.json
under its lock, so every process on the machine shares them.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..home import HermesHome
from ..failures import ProviderError
from ..redact import mask_secret
from .sources import HermesView, kernel_auth_path
from .store import AuthStore, key_id
from .strategy import CredentialStatus, CredentialStrategy

__all__ = [
    "COOLDOWNS",
    "Credential",
    "CredentialLease",
    "CredentialPool",
    "CredentialsExhaustedError",
    "NoCredentialsError",
    "env_key_for",
]

log = logging.getLogger(__name__)

#: Default cooldown in seconds by failure reason, when the provider gives no reset time.
COOLDOWNS = {"rate_limit": 60.0, "billing": 3600.0, "auth": 300.0}


def env_key_for(provider: str, provider_class: Any = None) -> str:
    """The environment variable holding ``provider``'s key: the class's ``env_key``, else ``<PROVIDER>_API_KEY``."""
    declared = getattr(provider_class, "env_key", None)
    return declared or f"{provider.upper().replace('-', '_')}_API_KEY"


def _cooling(state: Mapping[str, Any], now: float) -> bool:
    """Whether a key's stored state still cools it down at ``now`` (usable again from ``exhausted_until`` on).

    More time left than the cooldown that was set means the clock was wrong when it
    was set (a day ahead, then corrected): the cooldown is void rather than a day long;
    a key still limited is simply cooled again at its next failure.
    """
    left = float(state.get("exhausted_until", 0)) - now
    length = state.get("cooldown")
    if isinstance(length, (int, float)) and not isinstance(length, bool) and left > float(length) + 1.0:
        return False
    return left > 0


@dataclass(frozen=True)
class Credential:
    """One API key. ``repr`` and ``str`` show it masked, never whole."""

    provider: str
    key: str = field(repr=False)
    label: str
    source: str  # config, env, auth.json (hermes-kernel/auth.json on a Hermes Agent home) or hermes-agent
    origin: str = field(default="", compare=False)  # for hermes-agent: the entry's id in Hermes Agent's pool

    @functools.cached_property
    def id(self) -> str:
        return key_id(self.key)

    @property
    def masked(self) -> str:
        return mask_secret(self.key)

    def __repr__(self) -> str:
        return f"Credential({self.provider}, {self.label!r}, {self.masked}, {self.source})"

    __str__ = __repr__


class NoCredentialsError(ProviderError):
    """The provider has no key at all."""

    def __init__(self, provider: str, env_name: str) -> None:
        super().__init__(
            "auth",
            f"no API key for {provider}; add one with `hermes auth add {provider}` or set {env_name}",
            provider=provider,
            should_rotate_credential=False,
        )


class CredentialsExhaustedError(ProviderError):
    """Every key of the provider is cooling down; says which, why and until when."""

    def __init__(self, provider: str, cooling: list[tuple[Credential, dict[str, Any]]], now: float) -> None:
        from datetime import datetime, timezone

        soonest = min(float(s["exhausted_until"]) for _, s in cooling)
        reasons = {s.get("reason") for _, s in cooling}
        shared = reasons.pop() if len(reasons) == 1 else None
        parts = [
            f"{c.label} ({s.get('reason', 'unknown')}, {max(0, int(float(s['exhausted_until']) - now))}s left)"
            for c, s in cooling
        ]
        at = datetime.fromtimestamp(soonest, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        # One reason shared by every key is the error's; a mix (or an unknown one) reads as a rate limit.
        reason = shared if shared in ("billing", "auth") else "rate_limit"
        super().__init__(
            reason,  # type: ignore[arg-type]
            f"all {len(cooling)} {provider} keys are cooling down: {', '.join(parts)}; the first is usable again "
            f"at {at}; see `hermes auth list` or clear with `hermes auth reset {provider}`",
            provider=provider,
            retry_after=max(0.0, soonest - now),
            retryable=False,
            should_rotate_credential=False,
            should_fallback=True,
        )


class CredentialLease:
    """A session's soft claim on a key: other sessions prefer other keys while it lasts."""

    def __init__(self, pool: CredentialPool, credential: Credential, lease_id: str) -> None:
        self.pool, self.credential, self.lease_id = pool, credential, lease_id
        self.released = False
        self.renewed_at = pool.clock()

    def renew_if_due(self) -> bool:
        """Extend the lease once half its time has passed (long sessions keep their key)."""
        if self.released or self.pool.clock() - self.renewed_at < self.pool.lease_ttl / 2:
            return False
        self.pool._renew(self)
        return True

    def release(self) -> None:
        if not self.released:
            self.released = True
            self.pool._release(self)

    def __enter__(self) -> CredentialLease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class CredentialPool:
    """The keys of one provider and the logic of choosing among them; thread-safe."""

    def __init__(
        self,
        provider: str,
        *,
        home: HermesHome,
        strategy: CredentialStrategy | None = None,
        config_keys: Any = None,
        env_name: str | None = None,
        environ: Mapping[str, str] | None = None,
        cooldowns: Mapping[str, float] | None = None,
        lease_ttl: float = 900.0,
        clock: Any = time.time,
    ) -> None:
        self.provider = provider
        self.strategy = strategy
        self.store = AuthStore(kernel_auth_path(home.path))
        # Hermes Agent's file, read only, when the kernel keeps its own records beside it.
        self.hermes = HermesView(home.auth_path) if self.store.path != home.auth_path else None
        self.stored_source = "auth.json" if self.hermes is None else f"{self.store.path.parent.name}/auth.json"
        self.env_name = env_name or env_key_for(provider)
        self._environ = os.environ if environ is None else environ
        self._config_keys = config_keys
        self.cooldowns = {**COOLDOWNS, **(cooldowns or {})}
        self.lease_ttl = lease_ttl
        self.clock = clock
        self._lock = threading.RLock()
        self._cached: tuple[Any, list[Credential]] | None = None

    # --- the keys ---------------------------------------------------------------

    def _from_config(self) -> list[Credential]:
        raw = self._config_keys
        if raw is None:
            return []
        items = raw if isinstance(raw, list) else [raw]
        found = []
        for index, item in enumerate(items, start=1):
            if isinstance(item, str):
                key, label = item, f"config-{index}"
            elif isinstance(item, Mapping) and isinstance(item.get("key"), str):
                key, label = item["key"], str(item.get("label") or f"config-{index}")
            else:
                raise ConfigError(
                    f"credentials.{self.provider} entries must be keys or {{key: ..., label: ...}} mappings"
                )
            if key:
                found.append(Credential(self.provider, key, label, "config"))
        return found

    def credentials(self) -> list[Credential]:
        """Every distinct key, in pool order: config, environment, auth.json."""
        env_value = self._environ.get(self.env_name, "").strip()
        # Rebuilt only when the environment or auth.json changed: this runs on every request.
        signature = (env_value, self.store.signature(), self.hermes.signature() if self.hermes else None)
        if self._cached is not None and self._cached[0] == signature:
            return list(self._cached[1])
        found = self._from_config()
        if env_value:
            found.append(Credential(self.provider, env_value, self.env_name, "env"))
        for index, entry in enumerate(self.store.keys(self.provider), start=1):
            found.append(Credential(self.provider, entry["key"], str(entry.get("label") or f"key-{index}"),
                                    self.stored_source))
        found += self.hermes_credentials()
        unique: dict[str, Credential] = {}
        for cred in found:
            unique.setdefault(cred.key, cred)
        self._cached = (signature, list(unique.values()))
        return list(unique.values())

    def hermes_credentials(self, *, hidden: bool = False) -> list[Credential]:
        """Hermes Agent's keys for this provider (those hidden with ``hermes auth remove`` only if ``hidden``)."""
        auth = self.hermes.read() if self.hermes is not None else None
        if auth is None:
            return []
        self.hermes.warn_once(self.provider)
        gone = self.store.hidden(self.provider)
        return [Credential(self.provider, k.key, k.label, "hermes-agent", f"{k.pool}:{k.id}")
                for k in auth.keys_for(self.provider) if hidden or key_id(k.key) not in gone]

    def problems(self) -> list[str]:
        """One line per Hermes Agent entry of this provider that was skipped, and per file-wide problem."""
        auth = self.hermes.read() if self.hermes is not None else None
        return auth.problems_for(self.provider) if auth else []

    def __len__(self) -> int:
        return len(self.credentials())

    # --- state ------------------------------------------------------------------

    def state_of(self, credential: Credential) -> dict[str, Any]:
        """Cooldown state of ``credential`` ({} when usable)."""
        state = self.store.view()["state"].get(credential.id, {})
        return dict(state) if _cooling(state, self.clock()) else {}

    def _live_leases(self, data: dict[str, Any], now: float) -> dict[str, int]:
        return {
            kid: sum(1 for expires in leases.values() if float(expires) > now)
            for kid, leases in data["leases"].items()
        }

    def statuses(self) -> list[tuple[Credential, dict[str, Any]]]:
        """Every key with its cooldown state, for ``hermes auth list``."""
        return [(c, self.state_of(c)) for c in self.credentials()]

    # --- choosing ---------------------------------------------------------------

    def select(self, preferred: Credential | None = None) -> Credential:
        """A usable key: ``preferred`` (a session's lease) if it is usable, else the strategy's pick.

        Raises NoCredentialsError or CredentialsExhaustedError.
        """
        with self._lock:
            creds = self.credentials()
            if not creds:
                raise NoCredentialsError(self.provider, self.env_name)
            now = self.clock()
            data = self.store.view()
            usable, cooling = [], []
            for cred in creds:
                state = data["state"].get(cred.id, {})
                if _cooling(state, now):
                    cooling.append((cred, state))
                else:
                    usable.append(cred)
            if not usable:
                raise CredentialsExhaustedError(self.provider, cooling, now)
            if preferred is not None and any(c.key == preferred.key for c in usable):
                chosen = preferred
            else:
                chosen = self._choose(creds, usable, self._live_leases(data, now))
            self._count_use(chosen, now)
            return chosen

    def _count_use(self, chosen: Credential, now: float) -> None:
        # Shared through auth.json: least_used and round_robin see every process's requests.
        def change(data: dict[str, Any]) -> None:
            entry = data["usage"].setdefault(chosen.id, {})
            entry["requests"] = int(entry.get("requests", 0)) + 1
            entry["last_used"] = now

        self.store.update(change)

    def _choose(self, creds: Sequence[Credential], usable: Sequence[Credential],
                leases: Mapping[str, int]) -> Credential:
        positions = {c.id: i for i, c in enumerate(creds)}
        shared = self.store.view()["usage"]
        views = [
            CredentialStatus(
                id=c.id,
                label=c.label,
                position=positions[c.id],
                request_count=int(shared.get(c.id, {}).get("requests", 0)),
                last_used=float(shared.get(c.id, {}).get("last_used", 0.0)),
                leases=leases.get(c.id, 0),
            )
            for c in usable
        ]
        # Soft leases: prefer the keys the fewest live sessions hold; the strategy picks among those.
        fewest = min(v.leases for v in views)
        if self.strategy is None:
            raise ValueError("this pool was opened without a strategy; it cannot choose keys")
        picked = self.strategy.choose([v for v in views if v.leases == fewest])
        return next(c for c in usable if c.id == picked.id)

    # --- outcomes ----------------------------------------------------------------

    def mark_exhausted(self, credential: Credential, error: ProviderError) -> float:
        """Cool ``credential`` down after ``error``; returns the cooldown in seconds.

        What the provider said wins, 0 included; a 401 is never shortened by headers.
        """
        default = self.cooldowns.get(error.reason, self.cooldowns["rate_limit"])
        said = error.retry_after if error.reason != "auth" else None
        cooldown = max(0.0, float(said)) if said is not None else default
        until = self.clock() + cooldown

        def change(data: dict[str, Any]) -> None:
            data["state"][credential.id] = {"exhausted_until": until, "cooldown": cooldown, "reason": error.reason,
                                            "status": error.status}  # fmt: skip

        self.store.update(change)
        log.info("%s key %s (%s) cooling down for %.0fs after %s", self.provider, credential.label,
                 credential.masked, cooldown, error.reason)
        return cooldown

    def record_success(self, credential: Credential) -> None:
        """Clear any error state of a key that just answered (cheap when there is none)."""
        if credential.id in self.store.view()["state"]:
            self.store.update(lambda data: data["state"].pop(credential.id, None))

    def reset(self) -> int:
        """Clear every cooldown of this provider's keys; returns how many were cleared."""
        ids = {c.id for c in self.credentials()}

        def change(data: dict[str, Any]) -> int:
            gone = [k for k in data["state"] if k in ids]
            for k in gone:
                del data["state"][k]
            return len(gone)

        return self.store.update(change)

    # --- leases -------------------------------------------------------------------

    def lease(self) -> CredentialLease:
        """Claim a key for a session (soft: an over-subscribed key is still shared)."""
        with self._lock:
            credential = self.select()
            lease_id = os.urandom(6).hex()
            expires = self.clock() + self.lease_ttl

            def change(data: dict[str, Any]) -> None:
                now = self.clock()
                held = data["leases"].setdefault(credential.id, {})
                for old in [k for k, v in held.items() if float(v) <= now]:
                    del held[old]
                held[lease_id] = expires

            self.store.update(change)
            return CredentialLease(self, credential, lease_id)

    def _renew(self, lease: CredentialLease) -> None:
        expires = self.clock() + self.lease_ttl

        def change(data: dict[str, Any]) -> None:
            data["leases"].setdefault(lease.credential.id, {})[lease.lease_id] = expires

        self.store.update(change)
        lease.renewed_at = self.clock()

    def _release(self, lease: CredentialLease) -> None:
        def change(data: dict[str, Any]) -> None:
            held = data["leases"].get(lease.credential.id, {})
            held.pop(lease.lease_id, None)
            if not held:
                data["leases"].pop(lease.credential.id, None)

        self.store.update(change)
