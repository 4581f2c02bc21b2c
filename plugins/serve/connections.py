"""What uvicorn lacks against slow and greedy clients: read deadlines and connection caps.

uvicorn closes a kept-alive connection that sits idle (``timeout_keep_alive``,
set from ``serve.idle_timeout``) but holds a connection that sends nothing,
or dribbles its headers or body, for ever; 1,100 such connections used up the
file limit. Its ``limit_concurrency`` answers a plain-text 503 without
``Retry-After`` and has no per-address count. This protocol (uvicorn's h11
one, subclassed) adds:

- ``serve.header_timeout``: a request's headers must be complete this many
  seconds after its first byte (after the connection opened, for the first);
  dribbling does not extend it. Then ``408`` and the connection closes.
- ``serve.body_timeout``: a body may stall at most this long between reads;
  then ``408`` (if no response started) and the connection closes.
- ``serve.max_connections_per_client`` (``429``) and ``serve.max_connections``
  (``503``): connections over a cap are answered at once, in OpenAI's error
  shape with ``Retry-After``, and closed; they never count towards the caps.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from typing import Any

from .errors import error_body
from .settings import ServeSettings

__all__ = ["ConnectionGuard", "guarded_app", "guarded_protocol"]

log = logging.getLogger(__name__)

#: Seconds a refused connection stays half-closed, reading (and dropping) what the client still sends:
#: closed at once with unread data, the client would get a reset instead of the answer.
_REFUSED_LINGER_S = 1.0
_TIMED_OUT = "hermes.timed_out"
_PHRASES = {408: b"Request Timeout", 429: b"Too Many Requests", 503: b"Service Unavailable"}


def _response(status: int, message: str, code: str, retry_after: int | None = None) -> bytes:
    body = json.dumps(error_body(status, message, code=code)).encode()
    head = [f"HTTP/1.1 {status} ".encode() + _PHRASES[status], b"content-type: application/json",
            f"content-length: {len(body)}".encode(), b"connection: close"]  # fmt: skip
    if retry_after is not None:
        head.append(f"retry-after: {retry_after}".encode())
    return b"\r\n".join(head) + b"\r\n\r\n" + body


@dataclass
class ConnectionGuard:
    """The server-wide counts: open connections per client address and in all, and what was refused."""

    settings: ServeSettings
    per_address: dict[str, int] = field(default_factory=dict)
    total: int = 0
    refused: int = 0
    timed_out: int = 0

    def admit(self, address: str) -> tuple[int, str, str] | None:
        """Count a new connection, or say why not (status, message, code)."""
        if self.total >= self.settings.max_connections:
            return 503, (f"the server holds its limit of {self.settings.max_connections} connections "
                         "(serve.max_connections); retry shortly"), "too_many_connections"  # fmt: skip
        if self.per_address.get(address, 0) >= self.settings.max_connections_per_client:
            return 429, (f"this client address holds its limit of {self.settings.max_connections_per_client} "
                         "open connections (serve.max_connections_per_client); close some or retry shortly"), \
                "too_many_connections_per_client"  # fmt: skip
        self.per_address[address] = self.per_address.get(address, 0) + 1
        self.total += 1
        return None

    def release(self, address: str) -> None:
        self.total -= 1
        left = self.per_address.get(address, 1) - 1
        if left > 0:
            self.per_address[address] = left
        else:
            self.per_address.pop(address, None)


def guarded_protocol(guard: ConnectionGuard) -> type:
    """uvicorn's h11 protocol with ``guard``'s caps and the header and body deadlines."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    settings = guard.settings

    class GuardedH11Protocol(H11Protocol):  # type: ignore[misc]
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._timer: asyncio.TimerHandle | None = None
            self._phase: str | None = None
            self._address = str(self.client[0]) if self.client else "?"
            why = guard.admit(self._address)
            self._counted = why is None
            if why is not None:
                self._refuse(*why)
                return
            self._arm("headers", settings.header_timeout)

        def _refuse(self, status: int, message: str, code: str) -> None:
            guard.refused += 1
            self._phase = "refused"
            self.transport.write(_response(status, message, code, retry_after=1))
            if self.transport.can_write_eof():
                self.transport.write_eof()
            self._timer = self.loop.call_later(_REFUSED_LINGER_S, self.transport.close)

        def _arm(self, phase: str, seconds: float) -> None:
            if self._timer is not None:
                self._timer.cancel()
            self._phase = phase
            self._timer = self.loop.call_later(seconds, self._expired, phase)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
            self._timer, self._phase = None, None

        def connection_lost(self, exc: Exception | None) -> None:
            if self._timer is not None:
                self._timer.cancel()
            if self._counted:
                self._counted = False
                guard.release(self._address)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._phase == "refused":
                return  # read and dropped until the linger ends
            super().data_received(data)
            if self.transport.is_closing():
                self._disarm()
                return
            state = self.conn.their_state
            if state is h11.IDLE:
                if self._phase != "headers":  # the first bytes of the next request: its deadline starts now
                    self._arm("headers", settings.header_timeout)
            elif state is h11.SEND_BODY:
                self._arm("body", settings.body_timeout)  # at every read: the longest stall allowed
            else:
                self._disarm()  # the request is in; the rest is the app's (and the keep-alive timeout's)

        def _expired(self, phase: str) -> None:
            self._timer = None
            if self.transport.is_closing():
                return
            guard.timed_out += 1
            cycle = self.cycle
            if phase == "headers" and (cycle is None or cycle.response_complete):
                self.transport.write(_response(408, f"the request headers did not arrive within {settings.header_timeout:g} s "
                                                    "(serve.header_timeout)", "request_timeout"))  # fmt: skip
            elif phase == "body" and cycle is not None and not cycle.response_complete:
                if not cycle.response_started:
                    self.transport.write(_response(408, f"the request body stalled for {settings.body_timeout:g} s "
                                                        "(serve.body_timeout)", "request_timeout"))  # fmt: skip
                cycle.scope[_TIMED_OUT] = True  # the app's read ends as a disconnect: not an error to log
                cycle.disconnected = True
                cycle.message_event.set()
            self.transport.close()

    return GuardedH11Protocol


def guarded_app(app: Any) -> Any:
    """``app``, quiet about a request whose body timed out (its read raises a disconnect; the 408 is sent)."""

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        try:
            await app(scope, receive, send)
        except Exception:
            if not scope.get(_TIMED_OUT):
                raise

    return guarded
