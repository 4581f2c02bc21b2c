"""Reading (and, only when asked, editing) Hermes Agent's ``HERMES_HOME/auth.json``.

Hermes Agent keeps ``{"version": 1, "providers": {...}, "active_provider": ...,
"credential_pool": {"<provider>": [entry, ...]}, "suppressed_sources": {...}}``;
a pool entry carries ``id``, ``label``, ``auth_type`` (``api_key`` or ``oauth``),
``priority``, ``source`` (``manual``, ``env:NAME``, ...), ``access_token``,
optional expiry (``expires_at`` ISO text, ``expires_at_ms``) and its own status
(``last_status``: ``ok``, ``exhausted``, ``dead``). The format is the same from
0.17.0 through 0.19.0. Only the pool's API keys are used by hermes-kernel; the
kernel's own records (added keys, cooldowns, usage) never go into this file.

The kernel reaches this module through a deferred import made only after its
cheap check (``hermes.kernel.credentials.sources``) found Hermes Agent's layout.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hermes.kernel.errors import HermesError
from hermes.kernel.home import atomic_write, file_lock

__all__ = [
    "KNOWN_VERSION",
    "PROVIDER_ALIASES",
    "STRATEGIES",
    "HermesAuth",
    "HermesKey",
    "describe_hermes_auth",
    "hermes_pool_names",
    "hermes_strategy",
    "kernel_provider",
    "read_hermes_auth",
    "remove_hermes_keys",
]

#: The auth.json version every release up to 0.19.0 writes.
KNOWN_VERSION = 1
#: Hermes Agent pool names whose kernel provider has another name (others map onto themselves).
PROVIDER_ALIASES = {"openai-api": "openai"}
#: Hermes Agent's pool strategies, each named as the kernel's strategy plugin that does the same.
STRATEGIES = {"fill_first": "fill_first", "round_robin": "round_robin", "random": "random", "least_used": "least_used"}
# Sources whose secret Hermes Agent deliberately leaves out of the file (it reads them live).
_BORROWED_PREFIXES = ("env:",)


def kernel_provider(hermes_name: str) -> str:
    """The kernel provider a Hermes Agent pool name feeds (``openai-api`` -> ``openai``)."""
    return PROVIDER_ALIASES.get(hermes_name, hermes_name)


def hermes_pool_names(provider: str) -> list[str]:
    """Hermes Agent pool names that feed kernel ``provider``, in the order they are read."""
    return [provider, *(name for name, target in PROVIDER_ALIASES.items() if target == provider)]


@dataclass(frozen=True)
class HermesKey:
    """One usable API key from Hermes Agent's pool; ``repr`` never shows the key."""

    provider: str  # the kernel's name
    pool: str  # Hermes Agent's name (credential_pool.<pool>)
    id: str
    label: str
    key: str = field(repr=False)
    priority: int = 0


@dataclass
class HermesAuth:
    """What one read of Hermes Agent's auth.json gave: keys, and one line per entry skipped."""

    path: Path
    keys: list[HermesKey] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (kernel provider or "", line)
    other_pools: dict[str, int] = field(default_factory=dict)  # OAuth-only or unknown pools: entries

    def keys_for(self, provider: str) -> list[HermesKey]:
        return [k for k in self.keys if k.provider == provider]

    def problems_for(self, provider: str | None) -> list[str]:
        """Lines about ``provider``'s entries (every line when None; file-wide lines always)."""
        return [text for p, text in self.problems if provider is None or p in ("", provider)]


def _expiry(entry: Mapping[str, Any]) -> float | None:
    """Epoch seconds an OAuth entry expires at, if it says."""
    ms = entry.get("expires_at_ms")
    if isinstance(ms, (int, float)) and not isinstance(ms, bool) and ms > 0:
        return float(ms) / 1000.0
    text = entry.get("expires_at")
    if isinstance(text, str) and text.strip():
        raw = text.strip()
        try:
            parsed = datetime.fromisoformat(raw[:-1] + "+00:00" if raw.endswith("Z") else raw)
        except ValueError:
            return None
        return (parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)).timestamp()
    return None


# Optional fields and the types Hermes Agent writes them with (None is always allowed).
_TYPES: dict[str, tuple[type, ...]] = {
    "id": (str,), "label": (str,), "auth_type": (str,), "source": (str,), "priority": (int,),
    "expires_at": (str,), "expires_at_ms": (int, float), "last_status": (str,),
}


def _check(pool: str, index: int, entry: Any, now: float) -> tuple[HermesKey | None, str | None]:
    """The entry as a key, or why it is skipped (None, None: skipped without a word)."""
    provider = kernel_provider(pool)
    where = f"credential_pool.{pool}[{index}]"
    if not isinstance(entry, dict):
        return None, f"{where} is not an object; skipped (fix or delete it in Hermes Agent: `hermes auth remove {pool}`)"
    label = entry.get("label") if isinstance(entry.get("label"), str) else None
    name = f"{where} {label!r}" if label else where
    for key, types in _TYPES.items():
        value = entry.get(key)
        if value is not None and (not isinstance(value, types) or isinstance(value, bool)):
            wanted = " or ".join("number" if t in (int, float) else "text" for t in types)
            return None, (f"{name}: {key} must be {wanted}, not {type(value).__name__}; skipped "
                          f"(re-add the key with `hermes auth add {provider}` or fix it in Hermes Agent)")
    token = entry.get("access_token")
    source = str(entry.get("source") or "manual")
    if token is None and source.startswith(_BORROWED_PREFIXES):
        return None, None  # a pointer to an environment variable: the kernel reads the environment itself
    if not isinstance(token, str) or not token.strip():
        what = "has no access_token" if token is None else (
            "has an empty access_token" if isinstance(token, str) else
            f"access_token must be text, not {type(token).__name__}")
        return None, f"{name} {what}; skipped (re-add the key with `hermes auth add {provider}`)"
    if any(ch.isspace() for ch in token.strip()):
        return None, f"{name}: access_token contains spaces or line breaks; skipped (re-add the key)"
    if entry.get("last_status") == "dead":
        return None, f"{name} was marked dead (refused for good) by Hermes Agent; skipped (add a new key)"
    if str(entry.get("auth_type") or "api_key") != "api_key":
        expires = _expiry(entry)
        if expires is not None and expires <= now:
            when = datetime.fromtimestamp(expires, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            return None, (f"{name}: OAuth token expired at {when}; skipped (log in again with Hermes Agent, "
                          f"or add an API key with `hermes auth add {provider}`)")
        return None, (f"{name} is an OAuth login, and hermes-kernel uses API keys only; skipped "
                      f"(add an API key with `hermes auth add {provider}`)")
    return HermesKey(provider, pool, str(entry.get("id") or f"#{index}"), label or f"hermes-{index}",
                     token.strip(), int(entry.get("priority") or 0)), None


def read_hermes_auth(path: Path, *, now: float | None = None) -> HermesAuth:
    """Every usable API key in Hermes Agent's file, and one line for each thing skipped.

    Never raises for a bad file or entry: each problem becomes a line that says
    which entry, what is wrong and how to fix it, and the rest is used.
    """
    now = time.time() if now is None else now
    result = HermesAuth(path)
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return result
    except UnicodeDecodeError as exc:
        result.problems.append(("", f"{path} is not UTF-8 text (byte {exc.start}); its keys are skipped "
                                    "(re-save it as UTF-8, or let Hermes Agent rewrite it)"))
        return result
    except json.JSONDecodeError as exc:
        result.problems.append(("", f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                                    "its keys are skipped (fix it, or let Hermes Agent rewrite it)"))
        return result
    except OSError as exc:
        result.problems.append(("", f"cannot read {path}: {exc.strerror or exc}; its keys are skipped "
                                    "(check its permissions)"))
        return result
    if not isinstance(data, dict):
        result.problems.append(("", f"{path} must hold a JSON object; its keys are skipped "
                                    "(let Hermes Agent rewrite it, or move it away)"))
        return result
    version = data.get("version")
    if isinstance(version, int) and not isinstance(version, bool) and version > KNOWN_VERSION:
        # Newer releases have kept the pool layout; read on, but say so.
        result.problems.append(("", f"{path} is version {version}, newer than {KNOWN_VERSION} which hermes-kernel "
                                    "knows; its pool is read as version 1"))
    pools = data.get("credential_pool", {})
    if not isinstance(pools, dict):
        result.problems.append(("", f"{path}: credential_pool must be an object, not {type(pools).__name__}; "
                                    "its keys are skipped (let Hermes Agent rewrite it)"))
        return result
    for pool, entries in pools.items():
        provider = kernel_provider(str(pool))
        if not isinstance(entries, list):
            result.problems.append((provider, f"{path}: credential_pool.{pool} must be a list; skipped "
                                         f"(re-add its keys with `hermes auth add {provider}`)"))
            continue
        found: list[tuple[int, int, HermesKey]] = []
        for index, entry in enumerate(entries, start=1):
            key, problem = _check(str(pool), index, entry, now)
            if key is not None:
                found.append((key.priority, index, key))
            elif problem is not None:
                result.problems.append((provider, f"{path}: {problem}"))
        result.keys += [k for _, _, k in sorted(found, key=lambda item: item[:2])]  # Hermes Agent's own order
        if not found and entries:
            result.other_pools[str(pool)] = len(entries)
    return result


def hermes_strategy(provider: str, strategies: Any) -> str | None:
    """The kernel strategy for ``provider`` from Hermes Agent's ``credential_pool_strategies``.

    Looks at the Hermes Agent pool names of ``provider`` (``openai-api`` for
    ``openai``); normalises the name as Hermes Agent does (trimmed, lower case),
    and an unknown one means ``fill_first``, Hermes Agent's own fallback.
    """
    if not isinstance(strategies, Mapping):
        return None
    for name in hermes_pool_names(provider):
        raw = strategies.get(name)
        if raw is not None:
            return STRATEGIES.get(str(raw).strip().lower(), "fill_first")
    return None


def remove_hermes_keys(path: Path, pool: str, ids: list[str]) -> int:
    """Delete the entries ``ids`` of ``credential_pool.<pool>`` from Hermes Agent's file.

    Only for an explicit request (``hermes auth remove --hermes-agent``). Under
    Hermes Agent's own lock, re-read, change just that list, write atomically
    with mode 0600; returns how many entries went.
    """
    # Hermes Agent serialises its auth.json writes with flock on auth.lock beside it; take the same lock.
    with file_lock(path.with_suffix(".lock")):
        try:
            data = json.loads(path.read_bytes().decode("utf-8"))
        except (OSError, ValueError) as exc:
            raise HermesError(f"cannot change {path}: {exc.__class__.__name__}; it was left as it was") from None
        entries = data.get("credential_pool", {}).get(pool) if isinstance(data, dict) else None
        if not isinstance(entries, list):
            return 0
        kept = [e for e in entries if not (isinstance(e, dict) and str(e.get("id")) in ids)]
        gone = len(entries) - len(kept)
        if gone:
            data["credential_pool"][pool] = kept
            atomic_write(path, json.dumps(data, indent=2) + "\n", mode=0o600)
        return gone


def describe_hermes_auth(home: Path | str) -> list[str]:
    """Lines for ``hermes doctor`` about Hermes Agent's auth.json in ``home`` ([] when it is not there)."""
    path = Path(home) / "auth.json"
    if not path.exists():
        return []
    try:
        head = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError):
        head = None
    if isinstance(head, dict) and "credentials" in head:
        return []  # the kernel's own file, not Hermes Agent's
    auth = read_hermes_auth(path)
    by_provider: dict[str, int] = {}
    for key in auth.keys:
        by_provider[key.provider] = by_provider.get(key.provider, 0) + 1
    lines = []
    if by_provider:
        counts = ", ".join(f"{n} {p}" for p, n in sorted(by_provider.items()))
        lines.append(f"Hermes Agent's {path} gives {counts} API key(s); read only, never written by hermes-kernel")
    elif not auth.problems:
        lines.append(f"Hermes Agent's {path} holds no API keys hermes-kernel can use")
    if auth.other_pools:
        lines.append("Hermes Agent pools without usable API keys (OAuth logins or unknown providers): "
                     + ", ".join(sorted(auth.other_pools)))
    return lines + auth.problems_for(None)
