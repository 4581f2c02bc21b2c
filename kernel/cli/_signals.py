"""SIGTERM and SIGHUP for ``hermes chat``: end the session cleanly and exit.

The handlers raise :class:`Terminated` in the main thread (a BaseException,
like KeyboardInterrupt, so no ``except Exception`` swallows it). Whoever is
waiting on the turn interrupts the agent, which stops its tool process groups
and abandons a model call at once; :func:`finish` then ends the session with
``sigterm`` or ``sighup`` as its end reason, flushes and closes the store, and
exits with 128 + the signal number, after the exit handlers (``atexit``) ran:
tool sources stop their child processes there (MCP servers).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any, NoReturn

__all__ = ["GRACE_SECONDS", "Terminated", "finish", "install", "leave", "quiet_teardown", "received"]

#: How long a terminated turn may take to stop its tools and persist what it has.
GRACE_SECONDS = 0.8
_REASONS = {signal.SIGTERM: "sigterm", signal.SIGHUP: "sighup"}
_received: list[int] = []


class Terminated(BaseException):
    """The process was asked to stop (SIGTERM or SIGHUP)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"terminated by signal {signum}")
        self.signum = signum
        self.reason = _REASONS.get(signal.Signals(signum), "terminated")
        self.exit_code = 128 + signum


def _raise(signum: int, frame: Any) -> None:
    if _received:
        return  # already stopping; a second signal must not interrupt the cleanup
    _received.append(signum)
    raise Terminated(signum)


def install() -> None:
    """Route SIGTERM and SIGHUP to :class:`Terminated` (main thread only; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in _REASONS:
        signal.signal(sig, _raise)


def received() -> str | None:
    """The end reason of the terminating signal that arrived, if one did."""
    return _REASONS.get(signal.Signals(_received[0])) if _received else None


def finish(agent: Any, stop: Terminated) -> NoReturn:
    """End the session with the signal's reason, release everything and exit."""
    agent.interrupt()
    try:
        agent.end_session(stop.reason)
    finally:
        agent.close()
    leave(stop)


def quiet_teardown() -> None:
    """Spare the exit a full garbage collection of the SDKs' heaps (seconds on a busy machine).

    Everything that matters is flushed and closed by now; frozen objects are
    skipped by the collector the interpreter runs at shutdown.
    """
    import gc

    gc.freeze()


def leave(stop: Terminated) -> NoReturn:
    """Exit now, once the session is ended and the store closed.

    The ``atexit`` handlers run first (they stop child processes: MCP servers),
    then ``os._exit`` after flushing: interpreter shutdown would otherwise wait
    on an abandoned model call's socket, and the caller asked us to stop. A
    closed terminal (SIGHUP) makes every write fail; the exit goes on regardless.
    """
    import atexit

    try:
        print(f"\n  · stopped by {signal.Signals(stop.signum).name}; session ended", file=sys.stderr)
    except (OSError, ValueError):
        pass
    atexit._run_exitfuncs()  # each handler's failure is reported and skipped by atexit itself
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(stop.exit_code)
