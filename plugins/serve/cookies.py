"""Dashboard sign-in: the server secret, signed session cookies, their server-side record, the login CSRF token.

The cookie model:

* ``HERMES_HOME/serve_secret`` holds 32 random bytes (mode 0600, created
  atomically at first start, never printed). Nothing in ``config.yaml`` is
  enough to sign a cookie: the key hashes there are useless for forging one.
* Signing in creates a random session id. The cookie is
  ``v1.<session id>.<expiry>.<HMAC>``; the MAC covers the id, the expiry, the
  key's name and the key's hash, so a removed key (or one re-created under the
  same name) ends its cookies even before the record below is consulted.
* ``HERMES_HOME/serve_sessions.json`` (0600) records live sessions. A cookie
  counts only while its session is recorded: logout and ``hermes serve key
  remove`` delete records, expiry (``serve.session_hours``) prunes them.
  Processes sharing a home share the file, so a logout ends the session on
  all of them.
* The login form carries a CSRF token: ``HMAC(secret, nonce)``, where the
  nonce sits in a short-lived ``HttpOnly`` cookie set with the form. A page on
  another site can neither read the token nor set the cookie.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import logging
import os
import secrets
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hermes.kernel.errors import ConfigError
from hermes.kernel.home import atomic_write, file_lock, lock_file_for
from .keys import ApiKey

__all__ = ["LOGIN_COOKIE", "LOGIN_FORM_TTL", "SECRET_FILE", "SESSIONS_FILE", "SESSION_COOKIE", "SessionBook", "load_secret", "session_hours"]

log = logging.getLogger(__name__)

SESSION_COOKIE = "hermes_session"
LOGIN_COOKIE = "hermes_login"
SECRET_FILE = "serve_secret"
SESSIONS_FILE = "serve_sessions.json"
_VERSION = "v1"
#: Seconds a login form (its CSRF nonce) stays usable.
LOGIN_FORM_TTL = 3600


def session_hours(config: Any) -> float:
    value = config.get("serve.session_hours", 12.0)
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.001 <= value <= 8760:
        raise ConfigError(f"serve.session_hours must be a number of hours from 0.001 to 8760, got {value!r}; "
                          "fix it with `hermes config set serve.session_hours 12`")  # fmt: skip
    return float(value)


def load_secret(home: Path) -> bytes:
    """The server secret in ``home/serve_secret``; the first caller creates it (0600, atomically, race-safe)."""
    path = home / SECRET_FILE
    for _ in range(3):
        try:
            raw = path.read_text(encoding="ascii").strip()
        except FileNotFoundError:
            _create_secret(path)
            continue
        try:
            key = bytes.fromhex(raw)
        except ValueError:
            key = b""
        if len(key) < 32:
            raise ConfigError(f"{path} is damaged (not 64 or more hex digits); delete it and restart hermes serve "
                              "(every dashboard sign-in ends)")  # fmt: skip
        if path.stat().st_mode & 0o077:
            os.chmod(path, 0o600)  # someone loosened it; a readable secret lets anyone sign cookies
            log.warning("%s was readable by others; set it back to 0600", path)
        return key
    raise ConfigError(f"cannot create {path}")


def _create_secret(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # created 0600
    try:
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(secrets.token_hex(32) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        # link() fails when the file exists: two processes starting at once keep the first one's secret.
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        os.unlink(tmp)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class SessionBook:
    """Signs, checks and records dashboard sessions for one ``HERMES_HOME``."""

    def __init__(
        self, home: Path, *, hours: float = 12.0, secret: bytes | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.home = home
        self._clock = clock  # injectable so expiry is tested without sleeping
        self.lifetime = int(hours * 3600) or 1
        self._secret = secret if secret is not None else load_secret(home)
        self._path = home / SESSIONS_FILE
        self._cache: dict[str, dict[str, Any]] = {}
        self._stamp: int | None = None

    # --- the record file ------------------------------------------------------------

    def _locked(self) -> contextlib.AbstractContextManager[None]:
        """Across threads and processes: a read-modify-write of the record never loses another's change."""
        return file_lock(lock_file_for(self._path))

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            stamp = self._path.stat().st_mtime_ns
        except FileNotFoundError:
            self._cache, self._stamp = {}, None
            return {}
        if stamp != self._stamp:
            try:
                data = json.loads(self._path.read_text(encoding="utf-8"))
                self._cache = data if isinstance(data, dict) else {}
            except (OSError, ValueError) as exc:  # a damaged record ends every session: fail closed
                log.warning("ignoring %s: %s", self._path, exc)
                self._cache = {}
            self._stamp = stamp
        return self._cache

    def _write(self, sessions: dict[str, dict[str, Any]]) -> None:
        now = self._clock()
        live = {sid: s for sid, s in sessions.items() if float(s.get("expires", 0)) > now}
        atomic_write(self._path, json.dumps(live, indent=1, sort_keys=True), mode=0o600)
        self._stamp = None  # re-read: our own write has a new mtime

    # --- cookies --------------------------------------------------------------------

    def _mac(self, sid: str, expires: int, key: ApiKey) -> str:
        payload = f"{_VERSION}|{sid}|{expires}|{key.name}|{key.sha256}".encode()
        return _b64(hmac.new(self._secret, payload, hashlib.sha256).digest())

    def sign_in(self, key: ApiKey) -> tuple[str, int]:
        """A new session for ``key``: the cookie value and its lifetime in seconds."""
        sid = secrets.token_urlsafe(18)  # URL-safe base64 has no '.', the cookie's separator
        expires = int(self._clock()) + self.lifetime
        with self._locked():
            sessions = dict(self._read())
            sessions[sid] = {"key": key.name, "expires": expires, "created": int(self._clock())}
            self._write(sessions)
        return f"{_VERSION}.{sid}.{expires}.{self._mac(sid, expires, key)}", self.lifetime

    def _parse(self, cookie: str | None) -> tuple[str, int, str] | None:
        if not cookie:
            return None
        parts = cookie.split(".")
        if len(parts) != 4 or parts[0] != _VERSION or not parts[2].isdigit():
            return None
        return parts[1], int(parts[2]), parts[3]

    def key_for(self, keys: Sequence[ApiKey], cookie: str | None) -> ApiKey | None:
        """The key a session cookie stands for, or None: forged, expired, logged out or its key removed."""
        parsed = self._parse(cookie)
        if parsed is None:
            return None
        sid, expires, mac = parsed
        if expires <= self._clock():
            return None
        record = self._read().get(sid)
        if not record or int(record.get("expires", 0)) != expires:
            return None
        key = next((k for k in keys if k.name == record.get("key")), None)
        if key is None or not hmac.compare_digest(self._mac(sid, expires, key), mac):
            return None
        return key

    def sign_out(self, cookie: str | None) -> bool:
        """End the session a cookie names (its record is deleted); True when there was one."""
        parsed = self._parse(cookie)
        if parsed is None:
            return False
        with self._locked():
            sessions = dict(self._read())
            if sessions.pop(parsed[0], None) is None:
                return False
            self._write(sessions)
        return True

    def end_key(self, name: str) -> int:
        """End every session signed in with the key ``name`` (it was removed); returns how many."""
        if not self._path.exists():
            return 0
        with self._locked():
            sessions = dict(self._read())
            ended = [sid for sid, s in sessions.items() if s.get("key") == name]
            for sid in ended:
                del sessions[sid]
            self._write(sessions)
        return len(ended)

    # --- the login form's CSRF token ------------------------------------------------

    def login_form(self) -> tuple[str, str]:
        """A fresh nonce (for the ``hermes_login`` cookie) and the token the form carries."""
        nonce = f"{int(self._clock()) + LOGIN_FORM_TTL}.{secrets.token_urlsafe(18)}"
        return nonce, self._csrf(nonce)

    def _csrf(self, nonce: str) -> str:
        return _b64(hmac.new(self._secret, f"login-csrf|{nonce}".encode(), hashlib.sha256).digest())

    def csrf_ok(self, nonce: str | None, token: Any) -> bool:
        """True when ``token`` is the one the form with this nonce carried, and the form has not expired."""
        if not nonce or not isinstance(token, str) or not token:
            return False
        stamp = nonce.split(".", 1)[0]
        if not stamp.isdigit() or int(stamp) <= self._clock():
            return False
        return hmac.compare_digest(self._csrf(nonce), token)
