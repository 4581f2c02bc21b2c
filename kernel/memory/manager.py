"""The memory manager: the builtin provider plus at most one external one, behind one door."""

from __future__ import annotations

import inspect
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

from ..errors import ConfigError, HermesError, PluginDependencyError, PluginLoadError
from ..hookspecs import hookimpl
from ..memory_provider import AGENT_CONTEXTS, MemoryProvider
from ..tools import Tool, ToolContext
from .worker import OrderedWorker

# Seconds a session end waits for queued memory syncs.
_SETTLE_TIMEOUT = 30.0

__all__ = ["BUILTIN", "MEMORY_GROUP", "MEMORY_TOOLSET", "MemoryManager"]

log = logging.getLogger(__name__)

MEMORY_GROUP = "hermes.memory_providers"
BUILTIN = "builtin"
MEMORY_TOOLSET = "memory"
_SHUTDOWN_GRACE = 0.1  # each provider's shutdown gets at least this long, even past the deadline


def _instantiate(obj: Any, name: str) -> MemoryProvider:
    provider = obj() if isinstance(obj, type) else obj
    if not isinstance(provider, MemoryProvider):
        raise PluginLoadError(MEMORY_GROUP, name, f"{type(provider).__name__} is not a hermes.kernel.MemoryProvider")
    if not provider.name:
        provider.name = name
    return provider


def _enabled(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in ("false", "no", "off", "0", "")
    return bool(value)


def _external_name(value: Any) -> str:
    names = value if isinstance(value, list) else str(value or "").split(",")
    names = [str(n).strip() for n in names if str(n).strip() and str(n).strip() != BUILTIN]
    if len(names) > 1:
        raise ConfigError(
            f"memory.provider names {len(names)} providers ({', '.join(names)}); only one external memory "
            f"provider can be active: `hermes config set memory.provider {names[0]}`"
        )
    return names[0] if names else ""


class MemoryManager:
    """The agent's memory: the ``builtin`` provider always, plus at most one external provider.

    The API the agent uses:

    * :meth:`from_config` ``(host, config, home, *, agent_context="primary", platform="cli")``:
      ``builtin`` plus ``memory.provider`` loaded with ``host.driver`` (an unknown
      name raises PluginNotFoundError; an unavailable provider logs a warning and
      builtin works alone); ``memory.enabled: false`` gives a manager with no
      providers at all.
    * :meth:`start` ``(session_id)``: initialize every provider (``hermes_home``,
      ``platform``, ``agent_context``, plus ``config`` and ``notify_memory_write``),
      register them and the manager with the host, take the system-prompt snapshot.
    * :meth:`system_prompt_block` (the frozen snapshot) and :meth:`refresh_snapshot`
      (re-read it at a session boundary).
    * :meth:`tools` ``(reserved_names)``: the ``memory`` tool and the providers'
      tools as kernel Tools (toolset ``memory``); a name in ``reserved_names`` or
      already taken is refused with a warning.
    * :meth:`sync_turn` ``(user_content, assistant_content, session_id=None, *, interrupted=False, messages=None)``
      and :meth:`queue_prefetch` ``(query, session_id=None)``: queued on one
      background worker, in order, never blocking.
    * :meth:`switch_session` ``(new_session_id)``; :meth:`shutdown` ``(timeout=5.0)``.

    As a hook listener the manager implements ``prefetch``: every provider's
    recall joined, unfenced (the loop fences all prefetch results), each
    provider isolated from the others. Only a ``primary`` agent's manager
    listens by default (``listen``): a review or sub-agent sharing the host
    must not add a second recall to the user's turn, and its memory writes
    still reach the primary's providers through ``on_memory_write``.
    """

    def __init__(
        self,
        host: Any,
        home: Any,
        config: Any = None,
        *,
        providers: Iterable[MemoryProvider] = (),
        agent_context: str = "primary",
        platform: str = "cli",
        enabled: bool = True,
        listen: bool | None = None,
        user_id: str | None = None,
    ) -> None:
        if agent_context not in AGENT_CONTEXTS:
            raise ValueError(f"agent_context must be one of {', '.join(AGENT_CONTEXTS)}, not {agent_context!r}")
        self.host = host
        self.home = home
        self.config = config
        self.agent_context = agent_context
        self.platform = platform
        #: Who the agent talks for (a server's tenant): passed to providers as ``user_id``,
        #: the key Hermes Agent's providers scope their memory by.
        self.user_id = user_id
        self.enabled = enabled
        self.listen = agent_context == "primary" if listen is None else listen
        self.providers: list[MemoryProvider] = []
        #: External providers that were selected but left out, with the reason.
        self.skipped: dict[str, str] = {}
        self.session_id: str | None = None
        self._snapshot: str | None = None
        self._registered: list[object] = []
        self._worker = OrderedWorker()
        self._started = self._closed = False
        for provider in providers:
            self.add_provider(provider)

    # --- assembly -------------------------------------------------------------------

    @classmethod
    def from_config(
        cls, host: Any, config: Any, home: Any, *, agent_context: str = "primary", platform: str = "cli",
        user_id: str | None = None,
    ) -> MemoryManager:
        """The manager ``memory.*`` in config asks for (see the class docstring)."""
        if not _enabled(config.get("memory.enabled", True)):
            return cls(host, home, config, agent_context=agent_context, platform=platform, enabled=False)
        manager = cls(host, home, config, agent_context=agent_context, platform=platform, user_id=user_id)
        if BUILTIN in host.available(MEMORY_GROUP):
            manager.add_provider(_instantiate(host.driver(MEMORY_GROUP, BUILTIN), BUILTIN))
        else:
            log.warning("the builtin memory provider is disabled (plugins.disabled); MEMORY.md and USER.md are not used")
        name = _external_name(config.get("memory.provider", ""))
        if name:
            provider: MemoryProvider | None = None
            try:
                provider = _instantiate(host.driver(MEMORY_GROUP, name), name)
            except PluginDependencyError as exc:  # a package it needs is missing: the agent runs without it
                available, why = False, str(exc)
            if provider is not None:
                try:
                    available, why = provider.is_available(), "its is_available() returned False"
                except Exception as exc:
                    available, why = False, f"its is_available() raised {type(exc).__name__}: {exc}"
            if available and provider is not None:
                manager.add_provider(provider)
            else:
                manager.skipped[name] = why
                log.warning(
                    "memory provider %r is not available (%s: check its settings and dependencies); "
                    "using the builtin memory only", name, why,
                )  # fmt: skip
        return manager

    @property
    def external(self) -> MemoryProvider | None:
        """The external provider, if one is active."""
        return next((p for p in self.providers if p.name != BUILTIN), None)

    def add_provider(self, provider: MemoryProvider) -> None:
        """Add a provider before :meth:`start`; a second external provider is refused."""
        if self._started:
            raise HermesError("memory providers must be added before the manager starts")
        if provider.name != BUILTIN and self.external is not None:
            raise HermesError(
                f"memory provider {provider.name!r} refused: {self.external.name!r} is already active and only "
                "one external memory provider can be (memory.provider)"
            )
        if any(p.name == provider.name for p in self.providers):
            raise HermesError(f"memory provider {provider.name!r} is already active")
        self.providers.append(provider)

    # --- lifecycle ------------------------------------------------------------------

    def start(self, session_id: str) -> None:
        """Initialize the providers, register them with the host, snapshot their prompt blocks.

        Calling it again (a new session in the same agent, ``/new``) is a
        session boundary: the session id moves on and the snapshot is re-read;
        providers are not initialized twice.
        """
        if self._closed:
            raise HermesError("the memory manager was shut down; build a new one")
        if self._started:
            self.switch_session(session_id)
            self.refresh_snapshot()
            return
        self._started = True
        self.session_id = session_id
        kwargs = {
            "hermes_home": self.home,
            "platform": self.platform,
            "agent_context": self.agent_context,
            "config": self.config,
            "notify_memory_write": self._notify_write,
        }
        if self.user_id:
            kwargs["user_id"] = self.user_id
        for provider in list(self.providers):
            try:
                provider.initialize(session_id, **kwargs)
            except Exception as exc:  # one provider's failure never stops another
                log.warning("memory provider %r failed to initialize and is left out: %s: %s",
                            provider.name, type(exc).__name__, exc)  # fmt: skip
                self.providers.remove(provider)
                self.skipped[provider.name] = f"initialize raised {type(exc).__name__}: {exc}"
        if self.listen:
            # host.register keeps overridden lifecycle methods listening (no @hookimpl needed).
            for obj, name in [*((p, f"memory:{p.name}") for p in self.providers), (self, "memory")]:
                try:
                    # Unique per manager: a second agent in this process may share the host.
                    self.host.register(obj, name=f"{name}@{id(self):x}")
                except Exception as exc:  # e.g. a hook override with a wrong signature
                    log.warning("%s could not be registered for hooks: %s", name, exc)
                    continue
                self._registered.append(obj)
        self.refresh_snapshot()

    def switch_session(self, new_session_id: str) -> None:
        """Make ``new_session_id`` the session later syncs belong to."""
        self.session_id = new_session_id

    def shutdown(self, timeout: float = 5.0) -> None:
        """Drain the worker for at most ``timeout`` s, then shut providers down in reverse order.

        A provider that hangs in ``shutdown`` is abandoned once the deadline has
        passed (each still gets a short grace period), so this returns in
        about ``timeout`` seconds whatever the providers do.
        """
        if self._closed:
            return
        self._closed = True
        deadline = time.monotonic() + timeout
        self._worker.drain(timeout)
        for provider in reversed(self.providers):
            remaining = max(deadline - time.monotonic(), _SHUTDOWN_GRACE)
            _call_bounded(provider.shutdown, remaining, f"shutdown of memory provider {provider.name!r}")
        for obj in reversed(self._registered):
            self.host.unregister(obj)
        self._registered.clear()

    # --- the system prompt ------------------------------------------------------------

    def system_prompt_block(self) -> str | None:
        """The snapshot taken by :meth:`start` or the last :meth:`refresh_snapshot`."""
        return self._snapshot

    def refresh_snapshot(self) -> str | None:
        """Re-read every provider's prompt block (only at a session boundary: prefix caching)."""
        blocks = []
        for provider in self.providers:
            text = _isolated(provider.system_prompt_block, f"system_prompt_block of {provider.name!r}")
            if isinstance(text, str) and text.strip():
                blocks.append(text.strip())
        self._snapshot = "\n\n".join(blocks) or None
        return self._snapshot

    # --- tools ------------------------------------------------------------------------

    def tools(self, reserved_names: Iterable[str] = ()) -> list[Tool]:
        """The providers' tools as kernel Tools; none may take a reserved or taken name."""
        taken = set(reserved_names)
        tools: list[Tool] = []
        for provider in self.providers:
            schemas = _isolated(provider.get_tool_schemas, f"get_tool_schemas of {provider.name!r}") or []
            for schema in schemas:
                function = schema.get("function", schema) if isinstance(schema, dict) else {}
                name = function.get("name") if isinstance(function, dict) else None
                if not name:
                    log.warning("memory provider %r offered a tool without a name; ignored", provider.name)
                    continue
                if name in taken:
                    log.warning("memory provider %r: tool %r refused, it would shadow a tool of that name",
                                provider.name, name)  # fmt: skip
                    continue
                taken.add(name)
                tools.append(
                    Tool(
                        name=name,
                        description=str(function.get("description") or ""),
                        parameters=function.get("parameters") or {"type": "object", "properties": {}},
                        handler=partial(_run_tool, provider, name),
                        toolset=MEMORY_TOOLSET,
                    )
                )
        return tools

    # --- per turn ---------------------------------------------------------------------

    @hookimpl
    def prefetch(self, session_id: str, query: str) -> str | None:
        """Every provider's recall for this turn, joined; the loop fences it."""
        texts = []
        for provider in self.providers:
            text = _isolated(partial(provider.prefetch, query, session_id), f"prefetch of {provider.name!r}")
            if isinstance(text, str) and text.strip():
                texts.append(text.strip())
        return "\n\n".join(texts) or None

    @hookimpl
    def on_session_switch(self, old_session_id: str | None, new_session_id: str, reason: str) -> None:
        self.switch_session(new_session_id)

    @hookimpl(tryfirst=True)
    def on_session_end(self, session_id: str, messages: list[dict[str, Any]], reason: str) -> None:
        # Before any provider hears the session ended, the last turn's queued
        # sync_turn (and queue_prefetch) must have run: a provider that
        # finalises at session end would otherwise lose that turn.
        if not self._worker.wait_idle(_SETTLE_TIMEOUT):
            log.warning("memory syncs still running when session %s ended", session_id)

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        session_id: str | None = None,
        *,
        interrupted: bool = False,
        messages: Sequence[dict[str, Any]] | None = None,
    ) -> None:
        """Queue storing a completed turn with every provider; an interrupted turn is not synced.

        ``messages`` (the conversation as of this turn) reaches providers whose
        ``sync_turn`` declares a ``messages`` parameter.
        """
        if interrupted:
            return
        sid = session_id or self.session_id or ""
        snapshot = list(messages) if messages is not None else None  # the agent keeps appending to its list
        for provider in self.providers:
            extra = {"messages": snapshot} if snapshot is not None and _takes(provider.sync_turn, "messages") else {}
            self._worker.submit(partial(provider.sync_turn, user_content, assistant_content, sid, **extra),
                                f"sync_turn of {provider.name!r}")  # fmt: skip

    def queue_prefetch(self, query: str, session_id: str | None = None) -> None:
        """Queue background recall for the next turn with every provider."""
        sid = session_id or self.session_id or ""
        for provider in self.providers:
            self._worker.submit(partial(provider.queue_prefetch, query, sid), f"queue_prefetch of {provider.name!r}")

    def _notify_write(self, action: str, target: str, content: str) -> None:
        self.host.call("on_memory_write", action=action, target=target, content=content)

    # --- status -----------------------------------------------------------------------

    def status(self) -> list[dict[str, Any]]:
        """Each selected provider: name, kind, availability and what it reports (``describe``)."""
        rows = []
        for provider in self.providers:
            row: dict[str, Any] = {
                "name": provider.name,
                "kind": "builtin" if provider.name == BUILTIN else "external",
                "available": bool(_isolated(provider.is_available, f"is_available of {provider.name!r}")),
                "error": None,
            }
            row.update(_isolated(partial(provider.describe, hermes_home=self.home, config=self.config),
                                 f"describe of {provider.name!r}") or {})  # fmt: skip
            rows.append(row)
        for name, why in self.skipped.items():
            rows.append({"name": name, "kind": "external", "available": False, "error": why})
        return rows


def _takes(func: Callable[..., Any], name: str) -> bool:
    """``func`` accepts the keyword ``name`` (declared, or through ``**kwargs``)."""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _run_tool(provider: MemoryProvider, name: str, args: dict[str, Any], ctx: ToolContext) -> Any:
    return provider.handle_tool_call(name, args)


def _isolated(func: Callable[[], Any], label: str) -> Any:
    try:
        return func()
    except Exception as exc:  # one provider's failure never stops another
        log.warning("memory: %s failed: %s: %s", label, type(exc).__name__, exc)
        log.debug("memory failure", exc_info=exc)
        return None


def _call_bounded(func: Callable[[], Any], timeout: float, label: str) -> None:
    thread = threading.Thread(target=_isolated, args=(func, label), name="hermes-memory-shutdown", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        log.warning("memory: %s did not finish within %.1f s; moving on", label, timeout)
