"""Where MCP servers' noise goes: ``logs/mcp-<name>.log``, redacted, mode 0600, never the terminal.

Three streams end up there: the log records of the ``mcp`` SDK and the HTTP
libraries it drives (routed to the server whose task logged them through a
context variable that every task of a server's owner inherits), everything a
stdio server writes to stderr (read from a pipe by a thread, line by line), and
one line per non-JSON line on a server's stdout. Every line goes through the
kernel's :func:`~hermes.kernel.redact.redact_text`. The terminal sees only the
one-line events the hub logs itself.
"""

from __future__ import annotations

import contextvars
import logging
import os
import threading
import time
from pathlib import Path
from typing import IO, Any

__all__ = ["SDK_LOGGERS", "ServerLogs", "bind", "install_sdk_logging", "noise_size"]

#: Loggers of the SDK and of what it drives. ``mcp`` never reaches the terminal; the others are
#: diverted only for records logged inside a server's tasks (the model client uses httpx too).
SDK_LOGGERS = ("mcp", "httpx", "httpx2", "anyio", "sse_starlette")
_LINE_LIMIT = 2000  # characters of one logged line kept (a flood's lines are cut, not the file filled)
_PARSE_FAILURE = "Failed to parse JSONRPC message from server"

_current: contextvars.ContextVar[tuple[ServerLogs, str] | None] = contextvars.ContextVar("hermes_mcp_server", default=None)
_fallback: list[ServerLogs] = []  # the newest hub's logs: records logged outside any server's task
_installed: list[logging.Handler] = []


def _redact(text: str) -> str:
    from hermes.kernel.redact import redact_text

    return redact_text(text)


class ServerLogs:
    """The log files of one hub's servers (opened on first use, 0600, appended, thread-safe)."""

    def __init__(self, log_dir: Path | None) -> None:
        self.log_dir = log_dir
        self._files: dict[str, IO[str]] = {}
        self._lock = threading.Lock()
        self._closed = False
        self.cut_off: set[str] = set()  # servers whose stdout noise is no longer logged

    def path(self, name: str) -> Path | None:
        return self.log_dir / f"mcp-{name}.log" if self.log_dir is not None else None

    def _file(self, name: str) -> IO[str] | None:
        fh = self._files.get(name)
        if fh is None and self.log_dir is not None and not self._closed:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.log_dir / f"mcp-{name}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            os.fchmod(fd, 0o600)  # a file left by an older version may be wider
            fh = self._files[name] = os.fdopen(fd, "a", encoding="utf-8", errors="replace")
        return fh

    def write(self, name: str, text: str, *, source: str = "") -> None:
        """Append ``text`` (one or more lines) to the server's log, redacted and stamped."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        lines = [line[:_LINE_LIMIT] for line in _redact(text).splitlines() or [""]]
        prefix = f"{stamp} {source + ': ' if source else ''}"
        with self._lock:
            fh = self._file(name)
            if fh is None:
                return
            fh.write("".join(f"{prefix}{line}\n" for line in lines))
            fh.flush()

    def stderr_pipe(self, name: str) -> tuple[IO[str], Any]:
        """A write end for a child's stderr and a function that closes it once the child holds it.

        A daemon thread copies what arrives, line by line and redacted, into the
        server's log until every holder of the write end (the child and its own
        children) has closed it.
        """
        read_fd, write_fd = os.pipe()
        writer = os.fdopen(write_fd, "w", encoding="utf-8")

        def pump() -> None:
            with os.fdopen(read_fd, "r", encoding="utf-8", errors="replace") as reader:
                for line in reader:
                    self.write(name, line.rstrip("\n"), source="stderr")

        threading.Thread(target=pump, name=f"mcp-{name}-stderr", daemon=True).start()
        closed: list[bool] = []

        def release() -> None:
            if not closed:
                closed.append(True)
                writer.close()

        return writer, release

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for fh in self._files.values():
                fh.close()
            self._files.clear()
        if self in _fallback:
            _fallback.remove(self)


def bind(logs: ServerLogs, name: str) -> None:
    """Route the SDK's records of the calling task (and every task it starts) to ``name``'s log."""
    _current.set((logs, name))


def noise_size(exc: BaseException) -> int:
    """How many bytes of stdout a parse failure of the SDK stands for (its input line)."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            found = errors(include_url=False)
        except Exception:
            found = []
        if found:
            return len(str(found[0].get("input", ""))) + 1
    return 1


class _Router(logging.Handler):
    """Writes each SDK record into the log of the server it belongs to."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        bound = _current.get()
        logs, name = bound if bound is not None else (_fallback[-1] if _fallback else None, "sdk")
        if logs is None:
            return
        try:
            if record.msg == _PARSE_FAILURE and record.exc_info:
                if name in logs.cut_off:
                    return  # the server is being cut off; its flood stays out of the file
                exc = record.exc_info[1]
                found = getattr(exc, "errors", lambda **_: [])(include_url=False) if exc is not None else []
                line = str(found[0].get("input", ""))[:200] if found else str(exc)
                logs.write(name, f"not JSON-RPC: {line}", source="stdout")
                return
            logs.write(name, self.format(record), source="sdk")
        except Exception:  # a log line must never break a call
            pass


class _Divert(logging.Filter):
    """On a library's logger: a record logged inside a server's tasks goes to that server's log only."""

    def __init__(self, router: _Router) -> None:
        super().__init__()
        self.router = router

    def filter(self, record: logging.LogRecord) -> bool:
        if _current.get() is None:
            return True  # not ours: the library's usual handling
        self.router.handle(record)
        return False


def install_sdk_logging(logs: ServerLogs, level: int = logging.INFO) -> None:
    """Send the SDK's records to the servers' logs only (once per process; ``logs`` is the fallback)."""
    _fallback.append(logs)
    if _installed:
        return
    router = _Router()
    _installed.append(router)
    sdk = logging.getLogger(SDK_LOGGERS[0])
    sdk.addHandler(router)
    sdk.setLevel(level)
    sdk.propagate = False  # nothing reaches the root logger or logging's last-resort stderr
    for name in SDK_LOGGERS[1:]:
        logging.getLogger(name).addFilter(_Divert(router))
