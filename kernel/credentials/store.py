"""``HERMES_HOME/auth.json``: stored keys plus the pool state shared by processes.

Layout::

    {"version": 1,
     "credentials": {"openai": [{"key": "...", "label": "work", "added_at": 1.7e9}]},
     "state": {"<key id>": {"exhausted_until": 1.7e9, "reason": "rate_limit"}},
     "leases": {"<key id>": {"<lease id>": <expires at>}},
     "usage": {"<key id>": {"requests": 12, "last_used": 1.7e9}},
     "hidden": {"openai": ["<key id>"]}}

``hidden`` (on a Hermes Agent home, where this file is
``hermes-kernel/auth.json``) lists Hermes Agent keys removed from the kernel's
view with ``hermes auth remove``, while Hermes Agent's file stays as it was.

Every change is a read-modify-write under an exclusive lock on the side file
``auth.json.lock`` (:func:`hermes.kernel.home.file_lock`), written atomically
with mode 0600, so concurrent processes never lose each other's updates and
readers never see half a file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..errors import HermesError
from ..home import atomic_write, file_lock
from .sources import KERNEL_DIR, looks_like_hermes_agent

__all__ = ["AuthStore", "key_id"]

T = TypeVar("T")


def key_id(key: str) -> str:
    """A stable, non-reversible id for a key (state is stored under it, never the key)."""
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def _empty() -> dict[str, Any]:
    return {"version": 1, "credentials": {}, "state": {}, "leases": {}, "usage": {}}


class AuthStore:
    """Locked, atomic access to one ``auth.json``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock_path = path.with_name(path.name + ".lock")
        self._cache: tuple[tuple[int, int], dict[str, Any]] | None = None
        self._foreign = False  # the last read found Hermes Agent's layout

    def signature(self) -> tuple[int, int] | None:
        """Changes whenever the file does (None while it does not exist)."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return None
        return (stat.st_mtime_ns, stat.st_size)

    def view(self) -> dict[str, Any]:
        """The whole file ({} sections when missing), cached until the file changes.

        The cached data itself, for callers that only read; :meth:`read` gives a copy to change.
        """
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self._foreign = False
            return _empty()
        signature = (stat.st_mtime_ns, stat.st_size)
        if self._cache is not None and self._cache[0] == signature:
            return self._cache[1]
        try:
            data = json.loads(self.path.read_bytes().decode())
        except UnicodeDecodeError as exc:
            from ..config import decode_error

            raise decode_error(self.path, exc) from None
        except json.JSONDecodeError as exc:
            raise HermesError(
                f"{self.path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                "fix it or remove it and re-add keys with `hermes auth add`"
            ) from None
        except OSError as exc:
            raise HermesError(f"cannot read {self.path}: {exc.strerror or exc}; check its permissions") from None
        if not isinstance(data, dict):
            raise HermesError(f"{self.path} must hold a JSON object")
        # Hermes Agent's file reads as one with no kernel records; update() refuses to write it.
        self._foreign = looks_like_hermes_agent(data)
        for section, default in _empty().items():
            data.setdefault(section, default)
        self._cache = (signature, data)
        return data

    def read(self) -> dict[str, Any]:
        """A private copy of the whole file, free to change."""
        return json.loads(json.dumps(self.view()))

    def update(self, change: Callable[[dict[str, Any]], T]) -> T:
        """Apply ``change`` to the file's data under the lock and write it back."""
        with file_lock(self.lock_path):
            self._cache = None
            data = self.read()
            if self._foreign:  # never rewrite Hermes Agent's file (a caller that opened it directly)
                raise HermesError(f"{self.path} is Hermes Agent's auth.json, which hermes-kernel only reads; "
                                  f"its own records are in {self.path.parent / KERNEL_DIR / 'auth.json'}")
            result = change(data)
            atomic_write(self.path, json.dumps(data, indent=2, sort_keys=True) + "\n", mode=0o600)
            return result

    # --- stored keys -----------------------------------------------------------

    def hidden(self, provider: str) -> set[str]:
        """Ids of Hermes Agent keys of ``provider`` removed from the kernel's view."""
        ids = self.view().get("hidden", {})
        found = ids.get(provider, []) if isinstance(ids, dict) else []
        return {str(i) for i in found} if isinstance(found, list) else set()

    def hide(self, provider: str, kids: list[str], *, forget: bool = False) -> None:
        """Hide Hermes Agent keys (``forget``: they left Hermes Agent's file, so drop their records instead)."""

        def change(data: dict[str, Any]) -> None:
            hidden = data.setdefault("hidden", {}).setdefault(provider, [])
            for kid in kids:
                if forget:
                    for section in ("state", "leases", "usage"):
                        data[section].pop(kid, None)
                    if kid in hidden:
                        hidden.remove(kid)
                elif kid not in hidden:
                    hidden.append(kid)

        self.update(change)

    def unhide(self, provider: str, kid: str) -> bool:
        """Show a hidden Hermes Agent key again; whether it was hidden."""

        def change(data: dict[str, Any]) -> bool:
            hidden = data.setdefault("hidden", {}).get(provider, [])
            if kid in hidden:
                hidden.remove(kid)
                return True
            return False

        return self.update(change)

    def keys(self, provider: str) -> list[dict[str, Any]]:
        entries = self.view()["credentials"].get(provider, [])
        return [e for e in entries if isinstance(e, dict) and isinstance(e.get("key"), str) and e["key"]]

    def add(self, provider: str, key: str, label: str, added_at: float) -> None:
        def change(data: dict[str, Any]) -> None:
            entries = data["credentials"].setdefault(provider, [])
            if any(e.get("key") == key for e in entries):
                raise HermesError(f"that key is already stored for {provider}")
            if any(e.get("label") == label for e in entries):
                raise HermesError(f"{provider} already has a key labelled {label!r}; choose another --label")
            entries.append({"key": key, "label": label, "added_at": added_at})

        self.update(change)

    def remove(self, provider: str, match: Callable[[int, dict[str, Any]], bool]) -> list[dict[str, Any]]:
        """Remove the stored keys of ``provider`` for which ``match(position, entry)`` holds."""

        def change(data: dict[str, Any]) -> list[dict[str, Any]]:
            entries = data["credentials"].get(provider, [])
            gone = [e for i, e in enumerate(entries, start=1) if match(i, e)]
            data["credentials"][provider] = [e for e in entries if e not in gone]
            for entry in gone:
                kid = key_id(entry.get("key", ""))
                for section in ("state", "leases", "usage"):
                    data[section].pop(kid, None)
            return gone

        return self.update(change)
