"""Browser safety for ``hermes serve``: Host, Origin and Content-Type checks in front of every route.

A server on loopback without keys trusts whoever can reach the port, and a
web page in the user's browser can reach it. Three checks close the ways a
page gets in, the same ones careful local servers (Jupyter, Vite's dev
server) make:

* **Host** must be one this server answers to (``serve.allowed_hosts``;
  default: loopback names and addresses with the server's port, plus the bind
  address). DNS rebinding points an attacker's name at 127.0.0.1, so the
  browser calls it same-origin; the ``Host`` header still carries the
  attacker's name, and that is refused before any route runs.
* **Content-Type** of a state-changing request (POST, PUT, PATCH, DELETE with
  a body) must be ``application/json``. Browsers send ``text/plain``, form and
  multipart bodies cross-origin without asking (no CORS preflight); JSON
  needs a preflight, which this server never grants to a foreign origin.
* **Origin** (and ``Sec-Fetch-Site``, which modern browsers send even where
  they omit Origin) of a state-changing request must be the server's own
  origin or in ``serve.allowed_origins``.

``X-Forwarded-Host`` / ``X-Forwarded-Proto`` are read only when
``serve.trust_proxy`` is true: otherwise any client could claim them.
Refusals are JSON in OpenAI's error shape, naming the config key that allows
what was refused.
"""

from __future__ import annotations

import ipaddress
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from hermes.kernel.errors import ConfigError
from .errors import error_body

__all__ = ["GuardPolicy", "GuardMiddleware", "RequestView", "request_view"]

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Methods that change something; GET and HEAD only read, and a read cross-origin is blocked by the browser itself.
_UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_JSON_TYPES = frozenset({"application/json"})
_SCOPE_KEY = "hermes.guard"  # where the middleware leaves its view of the request for the routes
_WILDCARD_BINDS = frozenset({"", "0.0.0.0", "::", "[::]"})


@dataclass(frozen=True)
class RequestView:
    """What the guard established about a request: the scheme and host the client used, and whether TLS protects it."""

    scheme: str
    host: str  # as the client addressed it: "name" or "name:port", lowercased

    @property
    def secure(self) -> bool:
        return self.scheme == "https"

    @property
    def origin(self) -> str:
        return f"{self.scheme}://{self.host}"


def request_view(scope: Scope) -> RequestView | None:
    """The guard's view of a request (None when the app runs without the guard, as in unit tests)."""
    return scope.get(_SCOPE_KEY)


def _split_host(host: str) -> tuple[str, int | None]:
    """``name:port`` or ``[v6]:port`` into the name and the port (None when absent or not a number)."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            return host, None
        name, rest = host[: end + 1], host[end + 1 :]
        port = rest[1:] if rest.startswith(":") else ""
    elif host.count(":") == 1:
        name, port = host.split(":")
    else:
        name, port = host, ""
    if port == "":
        return name, None
    return (name, int(port)) if port.isdigit() and len(port) <= 5 else (name, -1)


def _is_loopback_name(name: str) -> bool:
    if name == "localhost" or name.endswith(".localhost"):  # RFC 6761: always loopback, never rebindable
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


def _normalise_bind(host: str) -> str:
    host = host.strip().lower()
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _strings(config: Any, key: str) -> tuple[str, ...]:
    value = config.get(key, []) or []
    if isinstance(value, str):  # an environment variable given as "a,b"
        value = [part for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{key} must be a list of strings, got {value!r}; fix it with `hermes config set {key} '[...]'`")
    return tuple(v.strip().lower().rstrip("/") for v in value if v.strip())


@dataclass
class GuardPolicy:
    """The checks' settings: ``serve.allowed_hosts``, ``serve.allowed_origins``, ``serve.trust_proxy``.

    ``allowed_hosts`` entries: ``name`` (any port), ``name:port``, ``*.domain``
    (the domain's subdomains) or ``*`` (any host: turns the DNS-rebinding
    check off). The loopback defaults always apply besides them.
    ``allowed_origins`` entries: ``scheme://host[:port]`` exactly, or ``*``.
    """

    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    trust_proxy: bool = False
    bind_host: str = ""
    _hosts: list[tuple[str, int | None]] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self._hosts = [_split_host(entry) for entry in self.allowed_hosts]

    @classmethod
    def from_config(cls, config: Any) -> GuardPolicy:
        trust = config.get("serve.trust_proxy", False)
        if isinstance(trust, str):
            trust = trust.strip().lower() in {"1", "true", "yes", "on"}
        if not isinstance(trust, bool):
            raise ConfigError(f"serve.trust_proxy must be true or false, got {trust!r}")
        return cls(_strings(config, "serve.allowed_hosts"), _strings(config, "serve.allowed_origins"), trust)

    def bound_to(self, host: str) -> None:
        """Record the address ``hermes serve`` listens on: a specific one is a name clients may use."""
        self.bind_host = _normalise_bind(host)

    def host_allowed(self, host: str, server_port: int | None, scheme: str) -> bool:
        name, port = _split_host(host)
        if not name or port == -1:
            return False
        effective = port if port is not None else (443 if scheme == "https" else 80)
        for allowed_name, allowed_port in self._hosts:
            if allowed_port is not None and allowed_port != effective:
                continue
            if allowed_name == "*" or allowed_name == name:
                return True
            if allowed_name.startswith("*.") and name.endswith(allowed_name[1:]):
                return True
        # The defaults are tied to this server's port: another local service's name does not reach it.
        if server_port is not None and effective != server_port:
            return False
        if _is_loopback_name(name):
            return True
        return bool(self.bind_host) and self.bind_host not in _WILDCARD_BINDS and name == self.bind_host

    def origin_allowed(self, origin: str, own: str) -> bool:
        origin = origin.strip().lower().rstrip("/")
        return origin == own or origin in self.allowed_origins or "*" in self.allowed_origins

    def foreign_origin_allowed(self, origin: str) -> bool:
        """A listed origin other than the server's own: it gets CORS headers (bearer keys only, never cookies)."""
        origin = origin.strip().lower().rstrip("/")
        return origin != "null" and (origin in self.allowed_origins or "*" in self.allowed_origins)


def _headers(scope: Scope) -> dict[str, str]:
    # A repeated header keeps its first value: a proxy appends, the client's own copy comes first only without one.
    out: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers") or []:
        out.setdefault(raw_name.decode("latin-1").lower(), raw_value.decode("latin-1"))
    return out


def _first(value: str) -> str:
    return value.split(",")[0].strip()


class _Refusal(Exception):
    def __init__(self, status: int, message: str, code: str) -> None:
        super().__init__(message)
        self.status, self.code = status, code


class GuardMiddleware:
    """An ASGI middleware: refuses a request whose Host, Origin or Content-Type a browser attack would have.

    ``policy`` is read at each request, so the app may fill in the bind address after building.
    """

    def __init__(self, app: ASGIApp, policy: GuardPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        try:
            view = self._view(scope, headers)
            self._check(scope, headers, view)
        except _Refusal as refusal:
            log.warning("refused %s %s: %s", scope.get("method"), scope.get("path"), refusal)
            await _send_json(send, refusal.status, error_body(refusal.status, str(refusal), code=refusal.code))
            return
        scope[_SCOPE_KEY] = view
        origin = headers.get("origin", "")
        if origin and self.policy.foreign_origin_allowed(origin) and origin.lower().rstrip("/") != view.origin:
            await self._cors(scope, receive, send, origin)
            return
        await self.app(scope, receive, send)

    def _view(self, scope: Scope, headers: dict[str, str]) -> RequestView:
        scheme = str(scope.get("scheme") or "http")
        host = headers.get("host", "")
        server = scope.get("server") or (None, None)
        port = server[1] if isinstance(server, (tuple, list)) and len(server) > 1 else None
        if not self.policy.host_allowed(host, port, scheme):
            shown = host or "(none)"
            raise _Refusal(403, f"the Host header {shown!r} is not one this server answers to, which guards against DNS "
                           "rebinding; if clients really reach it by that name, add it to serve.allowed_hosts", "host_not_allowed")  # fmt: skip
        if self.policy.trust_proxy:
            # The proxy (trusted by config) says what the client used; its Host must pass the same check.
            forwarded_proto = _first(headers.get("x-forwarded-proto", "")).lower()
            if forwarded_proto in {"http", "https"}:
                scheme = forwarded_proto
            forwarded_host = _first(headers.get("x-forwarded-host", ""))
            if forwarded_host:
                if not self.policy.host_allowed(forwarded_host, None, scheme):
                    raise _Refusal(403, f"the X-Forwarded-Host {forwarded_host!r} is not in serve.allowed_hosts; add the "
                                   "name clients use through the proxy there", "host_not_allowed")  # fmt: skip
                host = forwarded_host
        return RequestView(scheme, host.strip().lower())

    def _check(self, scope: Scope, headers: dict[str, str], view: RequestView) -> None:
        method = str(scope.get("method") or "GET").upper()
        if method == "OPTIONS":
            return  # a preflight: answered by _cors for listed origins, refused by routing otherwise
        if method not in _UNSAFE:
            return
        origin = headers.get("origin")
        if origin is not None and not self.policy.origin_allowed(origin, view.origin):
            raise _Refusal(403, f"requests from the origin {origin!r} are refused: a web page on another site may not "
                           f"drive this server; add that origin to serve.allowed_origins to allow it", "origin_not_allowed")  # fmt: skip
        fetch_site = headers.get("sec-fetch-site", "").lower()
        if fetch_site in {"cross-site", "same-site"} and not (origin and self.policy.foreign_origin_allowed(origin)):
            raise _Refusal(403, f"a {fetch_site} request from a web page is refused (Sec-Fetch-Site); add the page's "
                           "origin to serve.allowed_origins to allow it", "origin_not_allowed")  # fmt: skip
        has_body = headers.get("content-length", "0") not in {"", "0"} or "transfer-encoding" in headers
        if method == "DELETE" and not has_body:
            return
        raw_type = headers.get("content-type", "")
        media = raw_type.split(";")[0].strip().lower()
        if media not in _JSON_TYPES:
            shown = raw_type or "none"
            raise _Refusal(415, f"this route takes only 'Content-Type: application/json' (got {shown!r}); browsers send "
                           "text/plain and form bodies across sites without asking, so no setting allows them", "unsupported_media_type")  # fmt: skip

    async def _cors(self, scope: Scope, receive: Receive, send: Send, origin: str) -> None:
        """A page on a listed origin may call the API with a bearer key: CORS headers, never credentials."""
        cors = [(b"access-control-allow-origin", origin.encode("latin-1")), (b"vary", b"Origin")]
        if scope.get("method") == "OPTIONS":
            await send({"type": "http.response.start", "status": 204, "headers": cors + [
                (b"access-control-allow-methods", b"GET, POST, DELETE"),
                (b"access-control-allow-headers", b"authorization, content-type"),
                (b"access-control-max-age", b"600")]})  # fmt: skip
            await send({"type": "http.response.body", "body": b""})
            return

        async def send_with_cors(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = list(message.get("headers") or []) + cors
            await send(message)

        await self.app(scope, receive, send_with_cors)


async def _send_json(send: Send, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode("utf-8")
    headers: Iterable[tuple[bytes, bytes]] = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                                              (b"x-content-type-options", b"nosniff"), (b"cache-control", b"no-store")]  # fmt: skip
    await send({"type": "http.response.start", "status": status, "headers": list(headers)})
    await send({"type": "http.response.body", "body": data})
