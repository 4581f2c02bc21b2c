"""A wire-compatible fake of the OpenAI Chat Completions and Anthropic Messages APIs.

A threaded HTTP server on 127.0.0.1 with an ephemeral port. It answers
``POST /v1/chat/completions`` and ``POST /v1/messages`` (JSON or SSE, as the
request asks) from a :class:`~hermes.kernel.testing.script.Script`, records
every request, and injects faults. Point the real SDKs at it::

    with FakeModelServer() as server:
        server.reply(text="hello")
        OpenAI(base_url=server.openai_base_url, api_key="k").chat.completions.create(...)
        assert server.requests[-1].body["model"] == "gpt-4o"
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from . import _wire
from .script import Fault, Reply, Script, ScriptEntry, ToolCall, first_user_text

__all__ = ["FakeModelServer", "RecordedRequest"]


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received. ``api`` is ``openai`` or ``anthropic``."""

    api: str
    path: str
    headers: dict[str, str]
    body: Any
    time: float

    @property
    def stream(self) -> bool:
        return isinstance(self.body, dict) and bool(self.body.get("stream"))

    @property
    def api_key(self) -> str | None:
        """The credential the client sent (``Authorization: Bearer`` or ``x-api-key``)."""
        auth = self.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:]
        return self.headers.get("x-api-key")

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", [])) if isinstance(self.body, dict) else []


_ROUTES = {"/v1/chat/completions": "openai", "/chat/completions": "openai", "/v1/messages": "anthropic"}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        # Small SSE writes must not wait for delayed ACKs (Nagle).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send_json(200, {"object": "list", "data": list(self.server.owner.models)})
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0]
        api = _ROUTES.get(path)
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = raw.decode("utf-8", "replace")
        owner = self.server.owner
        owner._record(RecordedRequest(api or "unknown", path, {k.lower(): v for k, v in self.headers.items()},
                                      body, time.time()))
        if api is None or not isinstance(body, dict):
            self._send_json(404 if api is None else 400, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}})
            return
        entry, n = owner._next(first_user_text(body.get("messages")))
        try:
            if isinstance(entry, Fault):
                self._fault(api, entry, body, n)
            else:
                self._reply(api, entry, body, n)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (its timeout); nothing to answer

    # --- answers ----------------------------------------------------------------

    def _reply(self, api: str, reply: Reply, body: dict[str, Any], n: int) -> None:
        if reply.delay and self.server.owner._stopping.wait(reply.delay):
            return
        if body.get("stream"):
            render = _wire.openai_sse if api == "openai" else _wire.anthropic_sse
            self._send_stream(render(reply, body, n))
        else:
            render_json = _wire.openai_json if api == "openai" else _wire.anthropic_json
            self._send_json(200, render_json(reply, body, n))

    def _fault(self, api: str, fault: Fault, body: dict[str, Any], n: int) -> None:
        kind = fault.kind
        if kind == "hang":
            self.server.owner._stopping.wait(fault.seconds)
            self.close_connection = True
            return
        if kind == "empty":
            self._reply(api, Reply(text="", usage=_wire.ScriptedUsage(input_tokens=10)), body, n)
            return
        if kind == "drop_stream" or (kind == "cut_stream" and not body.get("stream")):
            self._drop(api, body, n)
            return
        if kind == "cut_stream":
            reply = Reply(text=fault.message or "This answer stops before its end, with no finish reason")
            events = (_wire.openai_sse if api == "openai" else _wire.anthropic_sse)(reply, body, n)
            # Everything up to the finish: the body ends cleanly, the answer does not.
            self._send_stream(_wire.without_finish(api, events))
            return
        if kind == "slow_stream":
            self._slow(api, Reply(text=fault.message or "a slow answer that takes its time"), body, n, fault.seconds)
            return
        if kind == "malformed_json":
            if body.get("stream"):
                first = (_wire.openai_sse if api == "openai" else _wire.anthropic_sse)(Reply(text="partial"), body, n)[0]
                event = b"data: {\"id\": \"broken\", \"choices\": [\n\n" if api == "openai" else \
                    b"event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"index\": \n\n"
                self._send_stream([first, event])
            else:
                self._send_raw(200, b'{"id": "broken", "choices": [{"index": 0, "message": ', "application/json")
            return
        if kind == "bad_gateway":
            self._send_raw(fault.http_status, b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html")
            return
        headers, payload = (_wire.openai_error if api == "openai" else _wire.anthropic_error)(fault, body)
        self._send_json(fault.http_status, payload, headers)

    def _drop(self, api: str, body: dict[str, Any], n: int) -> None:
        reply = Reply(text="This answer will be cut off in the middle of a sentence")
        if body.get("stream"):
            events = (_wire.openai_sse if api == "openai" else _wire.anthropic_sse)(reply, body, n)
            self._start_stream()
            for event in events[: max(2, len(events) // 2)]:
                self._write_chunk(event)
        else:
            payload = json.dumps((_wire.openai_json if api == "openai" else _wire.anthropic_json)(reply, body, n)).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload[: len(payload) // 2])
        # Close without finishing the body: the client sees a broken transfer.
        self.close_connection = True
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        self.connection.shutdown(socket.SHUT_RDWR)

    def _slow(self, api: str, reply: Reply, body: dict[str, Any], n: int, pause: float) -> None:
        stopping = self.server.owner._stopping
        if not body.get("stream"):
            if stopping.wait(pause):
                return
            self._reply(api, reply, body, n)
            return
        events = (_wire.openai_sse if api == "openai" else _wire.anthropic_sse)(reply, body, n)
        self._start_stream()
        for event in events:
            self._write_chunk(event)
            if b"delta" in event and stopping.wait(pause):
                return
        self.wfile.write(b"0\r\n\r\n")

    # --- low-level writers -------------------------------------------------------------

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(payload).encode(), "application/json", headers)

    def _send_raw(self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.send_header("x-request-id", "req_fake")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _send_stream(self, events: list[bytes]) -> None:
        self._start_stream()
        for event in events:
            self._write_chunk(event)
        self.wfile.write(b"0\r\n\r\n")


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: FakeModelServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out or dropped its connection is an expected event here.
        if not isinstance(sys.exc_info()[1], (ConnectionError, OSError)):
            super().handle_error(request, client_address)


class FakeModelServer:
    """The fake API server. Use as a context manager or call :meth:`start`/:meth:`stop`.

    Script it with :meth:`reply`, :meth:`tool_calls`, :meth:`fault` or
    :meth:`enqueue`; read what clients sent in :attr:`requests`.
    """

    def __init__(self, script: Script | None = None, host: str = "127.0.0.1", port: int = 0) -> None:
        self.script = script or Script()
        self._address = (host, port)
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._count = 0
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        #: What ``GET /v1/models`` lists: OpenAI-style entries, with any metadata fields
        #: (``max_model_len``, ``context_length``, ``top_provider``, ``pricing``).
        self.models: list[dict[str, Any]] = []

    # --- lifecycle ---------------------------------------------------------------

    def start(self) -> FakeModelServer:
        if self._httpd is None:
            self._stopping.clear()
            self._httpd = _HTTPServer(self._address, _Handler)
            self._httpd.owner = self
            self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-model-server", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._stopping.set()  # releases hanging handlers
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``: the Anthropic SDK's base URL."""
        if self._httpd is None:
            raise RuntimeError("the fake server is not running; call start()")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: the OpenAI SDK's base URL."""
        return self.base_url + "/v1"

    anthropic_base_url = base_url

    # --- scripting ---------------------------------------------------------------

    def enqueue(self, *entries: ScriptEntry) -> FakeModelServer:
        self.script.add(*entries)
        return self

    def reply(self, text: str = "", **fields: Any) -> FakeModelServer:
        """Queue a reply; ``fields`` as :class:`Reply` (reasoning, usage, delay, ...)."""
        return self.enqueue(Reply(text=text, **fields))

    def tool_calls(self, *calls: ToolCall | tuple[str, dict[str, Any]], text: str = "", **fields: Any) -> FakeModelServer:
        """Queue a reply that calls tools (several calls = a parallel batch)."""
        made = tuple(c if isinstance(c, ToolCall) else ToolCall(c[0], c[1]) for c in calls)
        return self.enqueue(Reply(text=text, tool_calls=made, **fields))

    def lane(self, key: str, *entries: ScriptEntry) -> FakeModelServer:
        """Queue entries for requests whose first user message contains ``key`` (parallel agents)."""
        self.script.lane(key, *entries)
        return self

    def fault(self, kind: str, **fields: Any) -> FakeModelServer:
        """Queue a fault; ``fields`` as :class:`Fault` (retry_after, limit, seconds, ...)."""
        return self.enqueue(Fault(kind=kind, **fields))

    # --- request log -------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next(self, first_user: str = "") -> tuple[ScriptEntry, int]:
        with self._lock:
            self._count += 1
            n = self._count
        return self.script.next(first_user), n
