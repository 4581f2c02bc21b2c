"""Running the app under uvicorn, and the drain on SIGTERM.

SIGTERM (or Ctrl-C): stop accepting, let running turns finish for
``serve.drain_timeout`` seconds, then interrupt what still runs (the agent
persists it, marked interrupted), end the sessions this process served with
``server_shutdown``, and exit 0.
"""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Sequence
from typing import Any

from hermes.kernel.errors import HermesError
from hermes.kernel.home import HermesHome
from .settings import ServeSettings, is_loopback

__all__ = ["check_bind", "run_server"]

#: Seconds an interrupted turn gets to persist and return after the drain timeout.
_INTERRUPT_GRACE_S = 10.0


def check_bind(host: str, settings: ServeSettings) -> None:
    """Without keys, only loopback: anyone who can reach the port could run tools."""
    if not settings.keys and not is_loopback(host):
        raise HermesError(
            f"refusing to listen on {host} without API keys: anyone who reaches it could run the agent's tools; "
            "create one with `hermes serve key add NAME`, or use --host 127.0.0.1"
        )


def _say(text: str) -> None:
    print(f"hermes serve: {text}", file=sys.stderr, flush=True)


def run_server(
    home: HermesHome, host: str, port: int, *, log_level: str = "warning", notes: Sequence[str] = ()
) -> None:
    """Serve until SIGTERM/SIGINT, then drain. Prints the bound address (port 0 picks one), then ``notes``."""
    import uvicorn

    from .app import create_app
    from .state import ServeState

    server_ref: dict[str, Any] = {}

    def on_shutdown(state: ServeState) -> None:
        runner = state.runner
        runner.draining = True
        running = runner.interrupt_all()  # only turns the drain timeout left running are still here
        runner.join_threads(_INTERRUPT_GRACE_S if running else 1.0)
        ended = runner.end_touched("server_shutdown")
        # The drain timer interrupted most of them already (they are gone from the running set by now).
        _say(f"drained: {runner.drain_interrupted} turn(s) interrupted, {len(ended)} session(s) ended (server_shutdown)")
        server = server_ref.get("server")
        if server is not None:
            server._captured_signals.clear()  # a clean drain exits 0 instead of re-raising the signal

    app = create_app(home, on_shutdown=on_shutdown)
    state: ServeState = app.state.serve
    check_bind(host, state.settings)
    state.guard.bound_to(host)  # a specific bind address is a Host name clients may use
    drain = state.settings.drain_timeout

    class Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            for listener in self.servers:
                for sock in listener.sockets:
                    address = sock.getsockname()
                    shown = f"[{address[0]}]" if ":" in address[0] else address[0]
                    _say(f"listening on http://{shown}:{address[1]} (profile {home.profile}, "
                         f"{len(state.keys)} key(s), {state.settings.max_concurrent} workers)")  # fmt: skip
            for note in notes:  # after the address: clients and scripts wait for that line first
                _say(note)

        def handle_exit(self, sig: int, frame: Any) -> None:
            if not self.should_exit:
                state.runner.draining = True
                _say(f"shutting down: waiting up to {drain:g} s for {state.runner.pending} turn(s)")
                timer = threading.Timer(drain, state.runner.interrupt_all)
                timer.daemon = True
                timer.start()
            super().handle_exit(sig, frame)

    from .connections import ConnectionGuard, guarded_app, guarded_protocol

    settings = state.settings
    config = uvicorn.Config(
        guarded_app(app), host=host, port=port, log_level=log_level, access_log=False, lifespan="on",
        timeout_graceful_shutdown=drain + _INTERRUPT_GRACE_S, timeout_keep_alive=settings.idle_timeout,  # type: ignore[arg-type]
        http=guarded_protocol(ConnectionGuard(settings)),  # header/body deadlines, per-address and total caps
        proxy_headers=False,  # X-Forwarded-* count only when serve.trust_proxy says so (guard.py)
    )  # fmt: skip
    server = Server(config)
    server_ref["server"] = server
    server.run(sockets=[_bind(host, port)])


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before uvicorn starts so a taken port is one clear line."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it: without it every small response waits ~40 ms
    # for the client's delayed ACK (Nagle), which is most of a short turn.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise HermesError(f"cannot listen on {host}:{port}: {exc.strerror or exc}; pick another with --port (0: any free port)") from None
    sock.listen(2048)
    sock.setblocking(False)
    return sock
