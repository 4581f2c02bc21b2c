"""What every route of ``hermes serve`` shares: the server state and who a request is.

Its own module because both the API routes (app.py) and the dashboard
(dashboard.py) need it; neither imports the other.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from hermes.kernel.home import HermesHome
from .cookies import SESSION_COOKIE, SessionBook, session_hours
from .errors import RequestError
from .guard import GuardPolicy
from .keys import ApiKey, match_key
from .limits import KeyLimits
from .profiles import Profile, ProfileSet
from .runner import TurnRunner
from .settings import ServeSettings

if TYPE_CHECKING:
    from starlette.requests import Request

__all__ = ["COOKIE", "ServeState", "authenticate"]

log = logging.getLogger(__name__)
COOKIE = SESSION_COOKIE


class ServeState:
    """What every route shares: profiles, settings, the runner, the limits and read-only stores."""

    def __init__(self, home: HermesHome) -> None:
        self.profiles = ProfileSet(home)
        self.settings = ServeSettings.from_config(self.profiles.serving.config, home)
        self.runner = TurnRunner(self.settings)
        self.limits = KeyLimits(self.settings)
        # Browser safety (guard.py) and dashboard sessions (cookies.py): their own serve.* keys.
        config = self.profiles.serving.config
        self.guard = GuardPolicy.from_config(config)
        self.profiles.serving.home.ensure()
        self.sessions = SessionBook(self.profiles.serving.home.path, hours=session_hours(config))
        self._stores: dict[str, Any] = {}
        self._stores_lock = threading.Lock()
        self._keys = self.settings.keys
        # Once a server has keys it never turns open: revoking the last key locks it instead.
        self.auth_required = bool(self._keys)
        self._keys_stamp = self._stamp()
        self.started = time.time()

    def _stamp(self) -> int:
        try:
            return self.profiles.serving.home.config_path.stat().st_mtime_ns
        except OSError:
            return 0

    @property
    def keys(self) -> tuple[ApiKey, ...]:
        """The keys in the config file, re-read when it changes: a revoke applies to running servers."""
        path = self.profiles.serving.home.config_path
        try:
            stamp = path.stat().st_mtime_ns
        except OSError:
            stamp = 0
        if stamp != self._keys_stamp:
            from hermes.kernel.config import read_config_file
            from .keys import load_keys

            try:
                self._keys = tuple(load_keys((read_config_file(path).get("serve") or {}).get("api_keys")))
                self.auth_required = self.auth_required or bool(self._keys)
            except Exception as exc:  # noqa: BLE001 - a broken edit keeps the last good keys
                log.warning("keeping the previous API keys: %s", exc)
            self._keys_stamp = stamp
        return self._keys

    def store(self, profile: Profile | None = None) -> Any:
        """A store for reads (lookups and the dashboard), one per profile, opened once.

        The one the profile's config chooses (``store.backend``/``store.url``,
        ``HERMES_STORE_URL``), as its agents use: on a shared PostgreSQL store a
        ``previous_response_id`` made by another process is found here too.
        """
        from hermes.kernel.store import open_store

        profile = profile or self.profiles.serving
        with self._stores_lock:  # dashboard pages run in Starlette's thread pool
            if profile.name not in self._stores:
                profile.home.ensure()
                self._stores[profile.name] = open_store(profile.config, profile.home)
            return self._stores[profile.name]

    def close(self) -> None:
        for store in self._stores.values():
            store.close()
        self._stores.clear()


def authenticate(state: ServeState, request: Request, *, cookie: bool = False) -> ApiKey | None:
    """The key a request presents; None when the server runs without keys. Raises 401 otherwise."""
    keys = state.keys
    if not keys and not state.auth_required:
        return None
    header = request.headers.get("authorization", "")
    presented = header[7:].strip() if header.lower().startswith("bearer ") else None
    key = match_key(keys, presented)
    if key is None and cookie:
        key = state.sessions.key_for(keys, request.cookies.get(COOKIE))
    if key is None:
        why = "no API key was sent" if not presented else "the API key is not valid (revoked or mistyped)"
        raise RequestError(f"{why}; send 'Authorization: Bearer <key>' with a key from `hermes serve key add`",
                           status=401, code="invalid_api_key")  # fmt: skip
    return key
