"""One background event loop that owns every MCP server session.

Each server has one owner task that opens the transport and the session,
waits while the server is up and closes both, so the SDK's anyio cancel
scopes open and close in the same task. Agent threads talk to the loop only
through :class:`McpHub`'s synchronous methods (``run_coroutine_threadsafe``).
A server that fails its first start stays down (one warning); one that dies
later is restarted with exponential backoff, at most ``max_restarts`` times in
a row.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .children import CHILDREN
from .server_log import ServerLogs, bind, install_sdk_logging, noise_size
from .settings import GlobalSettings, ServerSpec, expand

__all__ = ["McpCallError", "McpHub", "ServerState"]

log = logging.getLogger(__name__)

_CONNECTION_CLOSED = -32000
_REQUEST_TIMEOUT = -32001
_STABLE_AFTER = 60.0  # seconds up before a restart no longer counts towards max_restarts


class McpCallError(Exception):
    """A call that did not produce a result; the message is for the model."""


@dataclass
class ServerState:
    """What is known about one server (read from any thread)."""

    spec: ServerSpec
    status: str = "idle"  # idle, starting, ready, restarting, failed, stopped
    error: str = ""
    tools: list[dict[str, Any]] = field(default_factory=list)
    has_resources: bool = False
    has_prompts: bool = False
    prompts: list[dict[str, Any]] = field(default_factory=list)
    pid: int | None = None
    relisting: int = 0  # tools/list_changed re-lists under way; the next step waits for them
    restarts: int = 0
    started_at: float = 0.0
    connect_seconds: float = 0.0


class _Server:
    """The loop-side half of one server: its owner task and session."""

    def __init__(self, hub: McpHub, state: ServerState) -> None:
        self.hub = hub
        self.state = state
        self.session: Any = None
        self.settled = asyncio.Event()  # a start attempt finished (up or given up)
        self.lost = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.noise = 0  # bytes of non-JSON output on stdout
        self.cut_off = ""  # why the server was stopped for good (a stdout flood)
        self.deadline: asyncio.Timeout | None = None  # of the start under way; moved up to abandon it

    async def own(self) -> None:
        bind(self.hub.logs, self.state.spec.name)  # the SDK's records of this server go to its log
        failures = 0
        first = True
        while not self.hub._closing:
            self.lost.clear()
            self.state.status = "starting" if first else "restarting"
            was_up = False
            try:
                async with AsyncExitStack() as stack:
                    # asyncio.timeout, not wait_for: the SDK's cancel scopes must stay in this task.
                    try:
                        async with asyncio.timeout(self.state.spec.connect_timeout) as self.deadline:
                            await self._open(stack)
                    finally:
                        self.deadline = None
                    self.state.status, self.state.error = "ready", ""
                    self.state.started_at = time.monotonic()
                    was_up = True
                    self.settled.set()
                    await self.lost.wait()
                    self.session = None
            except Exception as exc:
                self.session = None
                reason = _reason(exc, self.state.spec)
                if self.cut_off:
                    self._give_up(self.cut_off)
                    return
                if self.hub._closing:  # abandoned by close(): not a failure to report
                    break
                if first:
                    self._give_up(reason)
                    (log.warning if self.hub.warn else log.info)("mcp server %r did not start: %s", self.state.spec.name, reason)
                    return
                self.state.error = reason
            first = False
            if self.hub._closing:
                break
            if self.cut_off:  # reported once when it happened; a restart would flood again
                self._give_up(self.cut_off)
                return
            # A server that ran for a while before dying starts a fresh count.
            stable = was_up and time.monotonic() - self.state.started_at > _STABLE_AFTER
            failures = 1 if stable else failures + 1
            settings = self.hub.settings
            if failures > settings.max_restarts:
                self._give_up(f"stopped after {settings.max_restarts} restarts: {self.state.error or 'it kept exiting'}")
                log.warning("mcp server %r is down: %s", self.state.spec.name, self.state.error)
                return
            self.settled.clear()
            self.state.status = "restarting"
            delay = min(settings.restart_backoff * 2 ** (failures - 1), settings.restart_backoff_max)
            log.info("mcp server %r stopped; restart %d in %.1fs", self.state.spec.name, failures, delay)
            self.state.restarts += 1
            try:  # close() ends the wait early
                await asyncio.wait_for(self.hub._stopping.wait(), delay)
            except asyncio.TimeoutError:
                pass
        self.state.status = "stopped"
        self.settled.set()

    def _give_up(self, reason: str) -> None:
        self.state.status, self.state.error = "failed", reason
        self.settled.set()

    async def _open(self, stack: AsyncExitStack) -> None:
        from mcp import ClientSession

        spec = self.state.spec
        started = time.perf_counter()
        read, write = await stack.enter_async_context(self._transport())
        session = await stack.enter_async_context(
            ClientSession(
                read,
                write,
                sampling_callback=self.hub._sampling_callback(spec.name),
                message_handler=self._on_message,
            )
        )
        init = await session.initialize()
        caps = init.capabilities
        tools = await _list_tools(session) if caps.tools is not None else []
        prompts: list[dict[str, Any]] = []
        if caps.prompts is not None:
            listed = await session.list_prompts()
            prompts = [p.model_dump(mode="json", by_alias=True, exclude_none=True) for p in listed.prompts]
        self.state.tools = tools
        self.state.prompts = prompts
        # The SDK's servers declare the capability with no resource at all: offer the tools only for some.
        self.state.has_resources = caps.resources is not None and await _has_resources(session)
        self.state.has_prompts = caps.prompts is not None
        self.state.connect_seconds = time.perf_counter() - started
        self.session = session

    def _transport(self) -> Any:
        spec = self.state.spec
        lookup = self.hub.lookup
        where = f"mcp.servers.{spec.name}"
        if spec.transport == "stdio":
            from mcp import StdioServerParameters, stdio_client

            params = StdioServerParameters(
                command=expand(spec.command or "", lookup, where + ".command"),
                args=[expand(a, lookup, where + ".args") for a in spec.args],
                # The SDK starts from a short safe list (PATH, HOME, ...): provider
                # keys reach a server only when its config names them.
                env={k: expand(v, lookup, f"{where}.env.{k}") for k, v in spec.env.items()},
                cwd=os.path.expanduser(spec.cwd) if spec.cwd else None,
            )
            errlog, release = self.hub.logs.stderr_pipe(spec.name)
            return _stdio(stdio_client, params, errlog, release, self.state)
        headers = {k: expand(v, lookup, f"{where}.headers.{k}") for k, v in spec.headers.items()}
        url = expand(spec.url or "", lookup, where + ".url")
        if spec.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(url, headers=headers, timeout=spec.connect_timeout)
        return _http(url, headers, spec.connect_timeout)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            self._noise(message)
            return
        method = getattr(getattr(message, "root", message), "method", "")
        if method == "notifications/tools/list_changed" and self.session is not None:
            # Over HTTP the tool call's result can arrive while this re-list is still out;
            # McpHub.wait_relisted holds the next step until the new list is in.
            self.state.relisting += 1
            try:
                self.state.tools = await _list_tools(self.session)
            except Exception as exc:
                log.debug("re-listing tools of %r failed: %s", self.state.spec.name, exc)
            finally:
                self.state.relisting -= 1

    async def ready_session(self) -> Any:
        """The live session, waiting through a restart; McpCallError when the server is down."""
        if self.state.status in ("starting", "restarting"):
            try:
                await asyncio.wait_for(self.settled.wait(), self.state.spec.connect_timeout + 1)
            except asyncio.TimeoutError:
                pass
        if self.session is None:
            raise McpCallError(
                f"MCP server {self.state.spec.name!r} is not available ({self.state.status}"
                f"{': ' + self.state.error if self.state.error else ''})"
            )
        return self.session

    def _noise(self, exc: Exception) -> None:
        """Count a non-JSON line on stdout; past ``mcp.stdout_noise_limit`` bytes the server is cut off."""
        if self.cut_off:
            return
        self.noise += noise_size(exc)
        limit = self.hub.settings.stdout_noise_limit
        if self.noise <= limit:
            return
        name = self.state.spec.name
        self.hub.logs.cut_off.add(name)
        self.cut_off = f"it wrote over {limit} bytes of non-JSON output to stdout (mcp.stdout_noise_limit)"
        log.warning("mcp server %r stopped: %s; see %s", name, self.cut_off, self.hub.logs.path(name) or "its log")
        self.abandon_start()
        self.mark_lost(self.cut_off)

    def abandon_start(self) -> None:
        """End a start that is under way now (its deadline moves to now), stopping the child first."""
        if self.deadline is not None and self.session is None and not self.deadline.expired():
            CHILDREN.terminate(self.state.pid)
            try:
                self.deadline.reschedule(asyncio.get_running_loop().time())
            except RuntimeError:  # it has just finished on its own
                pass

    def mark_lost(self, why: str) -> None:
        if self.session is not None:
            self.state.error = why
            self.state.status = "restarting"
            self.settled.clear()
            self.lost.set()


async def _list_tools(session: Any) -> list[dict[str, Any]]:
    """Every tool the server lists, page by page, as JSON dicts."""
    tools: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = await session.list_tools(params=_page(cursor))
        tools.extend(t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


async def _has_resources(session: Any) -> bool:
    """True when the server lists at least one resource or resource template."""
    for listing in (session.list_resources, session.list_resource_templates):
        try:
            page = await listing()
        except Exception as exc:  # a server that declares resources but cannot list them has none to offer
            log.debug("listing resources failed: %s", exc)
            continue
        if getattr(page, "resources", None) or getattr(page, "resource_templates", None):
            return True
    return False


def _page(cursor: str | None) -> Any:
    if cursor is None:
        return None
    from mcp.types import PaginatedRequestParams

    return PaginatedRequestParams(cursor=cursor)


def _stdio(stdio_client: Any, params: Any, errlog: Any, release: Callable[[], None], state: ServerState) -> Any:
    """The SDK's stdio transport, noting the child's PID (``hermes mcp list``, and the exit guard)."""
    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def opened() -> Any:
        before = set(_children())
        try:
            async with stdio_client(params, errlog=errlog) as streams:
                release()  # the child holds its stderr now; EOF comes when it exits
                new = set(_children()) - before
                state.pid = min(new) if new else None
                CHILDREN.add(state.pid)
                try:
                    yield streams
                finally:
                    CHILDREN.discard(state.pid)
                    state.pid = None
        finally:
            release()

    return opened()


def _children() -> list[int]:
    """PIDs of this process's direct children (Linux /proc; empty elsewhere)."""
    me = str(os.getpid())
    found = []
    try:
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    with open(f"/proc/{entry.name}/stat", encoding="utf-8", errors="replace") as fh:
                        fields = fh.read().rsplit(")", 1)[-1].split()
                except OSError:
                    continue
                if len(fields) > 1 and fields[1] == me:
                    found.append(int(entry.name))
    except OSError:
        return []
    return found


def _http(url: str, headers: Mapping[str, str], connect_timeout: float) -> Any:
    from contextlib import asynccontextmanager

    import httpx2
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    @asynccontextmanager
    async def opened() -> Any:
        client = create_mcp_http_client(headers=dict(headers), timeout=httpx2.Timeout(connect_timeout, read=300.0))
        async with client, streamable_http_client(url, http_client=client) as streams:
            yield streams

    return opened()


def _transport_failure(exc: BaseException) -> bool:
    """True when ``exc`` says the connection itself is gone (a restart may help)."""
    import sys

    kinds: list[type[BaseException]] = [OSError, EOFError]
    anyio = sys.modules.get("anyio")
    if anyio is not None:
        kinds += [anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream]
    httpx = sys.modules.get("httpx2")
    if httpx is not None:
        kinds.append(httpx.TransportError)
    return isinstance(exc, tuple(kinds))


def _reason(exc: BaseException, spec: ServerSpec) -> str:
    """One line saying why a server is not up."""
    from hermes.kernel import ConfigError
    from hermes.kernel.redact import redact_text

    if isinstance(exc, asyncio.TimeoutError | TimeoutError):
        return f"no answer within {spec.connect_timeout:g}s (connect_timeout)"
    if isinstance(exc, ConfigError):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {spec.command}"
    if isinstance(exc, BaseExceptionGroup):
        inner = exc.exceptions[0] if exc.exceptions else exc
        return _reason(inner, spec)
    text = str(exc) or type(exc).__name__
    if "Connection closed" in text and spec.transport == "stdio":
        text = "the process exited before it answered (see its log with `hermes mcp test " + spec.name + "`)"
    return redact_text(f"{type(exc).__name__}: {text}" if text != type(exc).__name__ else text)


class McpHub:
    """Every configured MCP server of one process, on one background loop."""

    def __init__(
        self,
        specs: list[ServerSpec],
        settings: GlobalSettings | None = None,
        *,
        lookup: Mapping[str, str] | None = None,
        log_dir: Path | None = None,
        sampler: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None,
        warn: bool = True,
    ) -> None:
        self.warn = warn  # False when the caller reports failures itself (hermes mcp)
        self.users = 0  # tool sources sharing this hub; the last one to close stops it
        self.settings = settings or GlobalSettings()
        self.lookup = dict(lookup if lookup is not None else os.environ)
        self.log_dir = log_dir
        self.sampler = sampler
        self.logs = ServerLogs(log_dir)
        install_sdk_logging(self.logs)
        self.states = {spec.name: ServerState(spec) for spec in specs if spec.enabled}
        self._servers: dict[str, _Server] = {}
        self._closing = False
        self._stopping: asyncio.Event = asyncio.Event()  # replaced on the loop by _start_all
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    # --- lifecycle (any thread) ---------------------------------------------------

    def start(self) -> None:
        """Start every enabled server in parallel (idempotent, returns at once)."""
        with self._lock:
            if self._loop is not None or self._closing:
                return
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(loop)
                loop.set_exception_handler(self._loop_error)
                loop.call_soon(ready.set)
                loop.run_forever()

            # A daemon thread: interpreter exit must not wait on it; close() (and
            # the atexit hook of the tool source) stops the servers first.
            self._thread = threading.Thread(target=run, name="hermes-mcp", daemon=True)
            self._thread.start()
            ready.wait()
            self._loop = loop
        asyncio.run_coroutine_threadsafe(self._start_all(), loop).result()

    async def _start_all(self) -> None:
        self._stopping = asyncio.Event()
        for name, state in self.states.items():
            server = _Server(self, state)
            self._servers[name] = server
            server.task = asyncio.create_task(server.own(), name=f"mcp-{name}")

    def wait_ready(self, timeout: float | None = None, stop: threading.Event | None = None) -> None:
        """Block until every server is up or has given up (at most ``timeout``, or until ``stop`` is set)."""
        if self._loop is None or all(s.status not in ("idle", "starting") for s in self.states.values()):
            return  # the common case on every later call: no round trip to the loop
        limit = timeout if timeout is not None else max((s.spec.connect_timeout for s in self.states.values()), default=0) + 2

        async def settled() -> None:
            await asyncio.gather(*(s.settled.wait() for s in self._servers.values()))

        future = asyncio.run_coroutine_threadsafe(asyncio.wait_for(settled(), limit), self._loop)
        try:
            while not future.done():
                if stop is not None and stop.wait(0.05):
                    future.cancel()  # Ctrl-C: the servers go on starting; this turn stops waiting for them
                    return
                if stop is None:
                    future.result(limit + 1)
            future.result()
        except (asyncio.TimeoutError, concurrent.futures.TimeoutError, concurrent.futures.CancelledError, TimeoutError):
            pass

    def wait_relisted(self, timeout: float = 10.0) -> None:
        """Block while a server re-lists its tools after ``tools/list_changed`` (at most ``timeout``)."""
        deadline = time.monotonic() + timeout
        while any(s.relisting for s in self.states.values()) and time.monotonic() < deadline:
            time.sleep(0.01)  # a re-list is one request; polling keeps the loop free of agent threads

    def close(self, timeout: float = 10.0) -> None:
        """Stop every server and the loop; no child process outlives this call."""
        with self._lock:
            if self._closing:
                return
            self._closing = True
            loop = self._loop
        if loop is None:
            return

        async def stop_all() -> None:
            self._stopping.set()
            for server in self._servers.values():
                server.abandon_start()  # a server still starting has nothing to close gracefully
                server.lost.set()
            tasks = [s.task for s in self._servers.values() if s.task is not None]
            if tasks:
                _, pending = await asyncio.wait(tasks, timeout=timeout)
                for task in pending:
                    task.cancel()
                if pending:
                    await asyncio.wait(pending, timeout=2.0)

        try:
            asyncio.run_coroutine_threadsafe(stop_all(), loop).result(timeout + 5)
        except Exception as exc:
            log.warning("stopping MCP servers: %s", exc)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.logs.close()

    def _loop_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """An error nobody awaited (a transport task's): into the log, not a traceback on the terminal."""
        exc = context.get("exception")
        text = f"{context.get('message', 'error')}: {type(exc).__name__}: {exc}" if exc is not None else str(context.get("message"))
        self.logs.write("sdk", text, source="loop")

    # --- calls (agent threads) --------------------------------------------------------

    def run(
        self,
        server: str,
        operation: Callable[[Any], Awaitable[Any]],
        *,
        is_interrupted: Callable[[], bool] = lambda: False,
        what: str = "call",
    ) -> Any:
        """Run ``operation(session)`` on the loop and wait for it.

        Ctrl-C (``is_interrupted``) cancels it, which makes the SDK send
        ``notifications/cancelled``; a closed connection marks the server for
        restart. Failures come back as McpCallError with a line for the model.
        """
        if self._loop is None:
            self.start()
        assert self._loop is not None
        owner = self._servers.get(server)
        if owner is None:
            raise McpCallError(f"no MCP server named {server!r} is configured and enabled")

        async def call() -> Any:
            bind(self.logs, server)
            session = await owner.ready_session()
            return await operation(session)

        future = asyncio.run_coroutine_threadsafe(call(), self._loop)
        while True:
            try:
                return future.result(timeout=0.1)
            except concurrent.futures.TimeoutError:
                if is_interrupted():
                    future.cancel()
                    raise McpCallError(f"{what} on MCP server {server!r} was cancelled: interrupted by the user") from None
            except concurrent.futures.CancelledError:
                raise McpCallError(f"{what} on MCP server {server!r} was cancelled") from None
            except McpCallError:
                raise
            except Exception as exc:
                raise self._failure(owner, exc, what) from None

    def _failure(self, owner: _Server, exc: Exception, what: str) -> McpCallError:
        name = owner.state.spec.name
        code = getattr(getattr(exc, "error", None), "code", None)
        if code == _REQUEST_TIMEOUT:
            return McpCallError(
                f"{what} on MCP server {name!r} timed out after {owner.state.spec.timeout:g}s and was cancelled; "
                "try a smaller request or another approach"
            )
        if code == _CONNECTION_CLOSED or (code is None and _transport_failure(exc)):
            assert self._loop is not None
            self._loop.call_soon_threadsafe(owner.mark_lost, "the connection closed during a call")
            return McpCallError(
                f"MCP server {name!r} stopped during {what}; it is being restarted. The call did not "
                "complete: retry it once, or continue without it"
            )
        from hermes.kernel.redact import redact_text

        return McpCallError(redact_text(f"{what} on MCP server {name!r} failed: {type(exc).__name__}: {exc}"))

    def _sampling_callback(self, server: str) -> Any:
        if self.sampler is None or not getattr(self.sampler, "enabled", True):
            return None  # no callback: the SDK does not advertise sampling to the server
        sampler = self.sampler

        async def callback(context: Any, params: Any) -> Any:
            from mcp import types

            try:
                answer = await asyncio.to_thread(sampler, server, params.model_dump(mode="json", by_alias=True))
            except Exception as exc:
                return types.ErrorData(code=types.INVALID_REQUEST, message=str(exc))
            return types.CreateMessageResult(
                role="assistant",
                content=types.TextContent(type="text", text=answer["text"]),
                model=answer["model"],
                stop_reason=answer.get("stop_reason") or "endTurn",
            )

        return callback
