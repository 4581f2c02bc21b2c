"""Build an :class:`Agent` from configuration: providers, fallbacks, tools, store."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from ..config import Config
from ..errors import ConfigError, HermesError
from ..home import HermesHome
from ..host import PluginHost
from .calling import ModelRoute
from .events import AgentEvent
from .loop import Agent

__all__ = ["ClientWrapper", "build_agent", "describe_result", "open_engine", "open_route", "open_routes"]

#: Wraps a model client just opened; the agent calls through what it returns
#: (a server's per-key spend meter, so no route escapes it).
ClientWrapper = Callable[[Any], Any]


def open_route(
    host: PluginHost,
    config: Config,
    home: HermesHome,
    *,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    wrap_client: ClientWrapper | None = None,
) -> ModelRoute:
    """A model route for ``provider`` (default ``model.provider``) and its model name.

    Fails before any request when no key is usable: one line naming the
    environment variable and the ``hermes auth add`` command. ``wrap_client``
    wraps the opened client; the lease is still taken from the client itself.
    """
    from ..providers.client import open_model_client

    client = open_model_client(host, config, home, provider=provider)
    if provider is not None and provider != config.get("model.provider", None):
        # model.base_url belongs to the primary provider, not to a fallback.
        env_url = getattr(client.provider_class, "env_base_url", None)
        client.base_url = base_url or (os.environ.get(env_url) if env_url else None) or None
    elif base_url:
        client.base_url = base_url
    name = model or (str(config.get("model.name") or "") if provider in (None, config.get("model.provider", None)) else "")
    name = name or str(getattr(client.provider_class, "default_model", "") or "")
    if not name:
        raise ConfigError(
            f"no model set for provider {client.name!r}; pass --model NAME or run `hermes config set model.name NAME`"
        )
    if client.pool is not None and not client.pool.credentials() and not client.base_url:
        env = client.pool.env_name
        raise HermesError(
            f"no API key for {client.name}: set {env} (or `hermes config set {env} KEY`), "
            f"or run `hermes auth add {client.name}`"
        )
    return ModelRoute(wrap_client(client) if wrap_client else client, name, lease=client.lease())


def _fallbacks(host: PluginHost, config: Config, home: HermesHome, wrap_client: ClientWrapper | None) -> list[ModelRoute]:
    entries = config.get("fallback_providers", []) or []
    if not isinstance(entries, list):
        raise ConfigError("fallback_providers must be a list of {provider, model, base_url} entries")
    routes = []
    for entry in entries:
        if not isinstance(entry, dict) or not entry.get("provider"):
            raise ConfigError("each fallback_providers entry needs at least a provider name")
        try:
            routes.append(
                open_route(host, config, home, provider=str(entry["provider"]), model=entry.get("model"),
                           base_url=entry.get("base_url"), wrap_client=wrap_client)
            )  # fmt: skip
        except HermesError:
            continue  # an unusable fallback must not stop the primary from working
    return routes


def open_routes(
    host: PluginHost,
    config: Config,
    home: HermesHome,
    *,
    provider: str | None = None,
    model: str | None = None,
    wrap_client: ClientWrapper | None = None,
) -> list[ModelRoute]:
    """The primary route and the usable ``fallback_providers``, in order."""
    return [open_route(host, config, home, provider=provider, model=model, wrap_client=wrap_client),
            *_fallbacks(host, config, home, wrap_client)]  # fmt: skip


def open_engine(
    host: PluginHost, config: Config, home: HermesHome, main: ModelRoute, *, wrap_client: ClientWrapper | None = None
) -> Any:
    """The context engine named by ``context.engine`` for the main route's model.

    Its summaries go through ``auxiliary.compression.provider``/``model`` when
    set (that client wrapped by ``wrap_client``), falling back once to the main model.
    """
    from ..context_engine import ContextEngine
    from ..context_windows import resolve_model
    from ..errors import PluginLoadError
    from .summarizer import make_summarizer

    name = str(config.get("context.engine", "compressor") or "compressor")
    engine_class = host.driver("hermes.context_engines", name)
    if not (isinstance(engine_class, type) and issubclass(engine_class, ContextEngine)):
        raise PluginLoadError("hermes.context_engines", name, "does not name a hermes.kernel.ContextEngine subclass")
    summary_routes = [main]
    aux = config.get("auxiliary.compression", {}) or {}
    if isinstance(aux, dict) and (aux.get("provider") or aux.get("model")):
        try:
            summary_routes.insert(
                0, open_route(host, config, home, provider=aux.get("provider") or None, model=aux.get("model") or None,
                              wrap_client=wrap_client),
            )
        except HermesError as exc:
            import logging

            logging.getLogger(__name__).warning("auxiliary summary model unusable (%s); using the main model", exc)
    def window(route: ModelRoute, configured: int | None = None) -> int:
        key = route.lease.credential.key if getattr(route, "lease", None) is not None else None
        return resolve_model(route.model, configured=configured, base_url=getattr(route.client, "base_url", None),
                             api_key=key, home=home).context_length

    length = window(main, config.get("model.context_length", None))
    # The summary request is capped by the window of the model that reads it.
    summary_length = length if summary_routes[0] is main else window(summary_routes[0])
    summarizer = make_summarizer(summary_routes, summary_length)
    return engine_class(context_length=length, config=config, summarizer=summarizer, model=main.model)


def build_agent(
    *,
    host: PluginHost,
    config: Config,
    home: HermesHome,
    provider: str | None = None,
    model: str | None = None,
    toolsets: Sequence[str] | None = None,
    resume: str | None = None,
    interactive: bool = False,
    source: str = "cli",
    stream: bool = True,
    on_event: Callable[[AgentEvent], None] | None = None,
    ask_user: Callable[[str, list[str] | None], str] | None = None,
    approve: Callable[[str, str], bool] | None = None,
    cwd: Path | None = None,
    routes: Sequence[ModelRoute] | None = None,
    tenant: str | None = None,
    wrap_client: ClientWrapper | None = None,
    claim_writer: bool = False,
    auto_title: Literal["model", "local"] = "model",
) -> Agent:
    """The agent a ``hermes chat`` runs, as configured (flags override config).

    ``routes`` (primary first) replaces opening them from config: a server
    shares its model clients, and their SDK connections, across its agents.
    ``tenant`` scopes the agent to that tenant's sessions (:attr:`Agent.tenant`);
    ``resume`` is then an exact id of one of them (a prefix could match another
    tenant's), and any other id is not found.
    ``wrap_client`` wraps every model client opened here rather than given in
    ``routes`` (those are the caller's, wrapped as it likes): the routes from
    config, the auxiliary summary model, and each sub-agent's ``delegation``
    model, so a caller that meters calls sees all of them.
    ``claim_writer`` makes the agent its session's only writer (a chat: a
    session open in another process is continued in a branch; see
    :mod:`.resuming`); a server serialises its turns per session itself.
    ``auto_title`` is how an untitled session gets its title (unless
    ``sessions.auto_title`` is off): ``model`` asks the auxiliary model in the
    background after the first exchange (a REPL); ``local`` names it after its
    first user message with no model call (a one-shot, a stateless API
    request: one tool-less turn, one model call).
    """
    from ..memory import MemoryManager
    from ..store import open_store
    from ..tool_registry import ToolRegistry

    if auto_title not in ("model", "local"):  # before anything is opened
        raise ValueError(f"auto_title must be 'model' or 'local', not {auto_title!r}")
    routes = list(routes) if routes else open_routes(host, config, home, provider=provider, model=model,
                                                     wrap_client=wrap_client)  # fmt: skip
    route = routes[0]
    engine = open_engine(host, config, home, route, wrap_client=wrap_client)
    chosen = list(toolsets) if toolsets else list(config.get("toolsets", []) or [])
    loadable = [name for name in chosen if name != "memory"]  # the memory toolset comes from the manager
    tools = (
        ToolRegistry.load(host, loadable or None, interactive=interactive, config=config, home=home)
        if loadable or not chosen
        else ToolRegistry()
    )
    memory = MemoryManager.from_config(host, config, home, agent_context="primary", platform="cli")
    memory_tools = memory.tools(reserved_names=tools.names) if not chosen or "memory" in chosen else []
    for tool in memory_tools:
        tools.add(tool)
    from .wiring import engine_tools

    for tool in engine_tools(engine, reserved_names=tools.names):
        tools.add(tool)  # an engine's own tools (e.g. recall of what it compressed) reach the model too
    home.ensure()
    store = open_store(config, home, host)
    from .resuming import SessionWriter
    from .wiring import prompt_extras, review_schedules

    work_dir = cwd or Path.cwd()
    warn = (lambda text: on_event(AgentEvent("status", f"warning: {text}"))) if on_event else (lambda text: None)
    try:
        if resume and tenant is None:
            resume = store.resolve_session_id(resume)
        agent = Agent(
            routes=routes,
            tools=tools,
            host=host,
            store=store,
            max_iterations=int(config.get("agent.max_iterations", 90)),
            results_dir=home.results_dir,
            engine=engine,
            memory=memory,
            source=source,
            session_id=resume,
            soul_path=home.path / "SOUL.md",
            cwd=work_dir,
            prompt_extras=prompt_extras(home, config, host, work_dir, warn),
            stream=stream,
            max_tokens=int(config.get("model.max_tokens", 4096)),
            temperature=config.get("model.temperature", None),
            on_event=on_event,
            ask_user=ask_user,
            approve=approve,
            home=home,
            config=config,
            owns_store=True,
            tenant=tenant,
            writer=SessionWriter(store) if claim_writer else None,
        )
    except BaseException:
        store.close()  # a session not found (another tenant's, say) leaves no connection behind in a server
        raise
    agent.tool_context.services["delegator"] = _delegator(agent, host, config, home, tools, wrap_client)
    if wrap_client is not None:
        from ..tools import CLIENT_WRAPPER_SERVICE

        agent.tool_context.services[CLIENT_WRAPPER_SERVICE] = wrap_client  # clients tools open (MCP sampling)
    agent.tool_context.services["host"] = host
    agent.reviews.extend(review_schedules(host, config, memory_tools=memory_tools))
    if config.get("sessions.auto_title", True):
        from .titles import LocalTitle, TitleSchedule

        if auto_title == "local":
            agent.reviews.append(LocalTitle())
        elif getattr(engine, "summarizer", None) is not None:
            agent.reviews.append(TitleSchedule(engine.summarizer))
    return agent


def _delegator(
    agent: Agent, host: PluginHost, config: Config, home: HermesHome, tools: Any, wrap_client: ClientWrapper | None
) -> Any:
    """The service behind ``delegate_task``: children on their own leases, under the parent's budget.

    A child on the parent's model shares the parent's (already wrapped) client;
    one on ``delegation.provider``/``model`` gets a client of its own, wrapped too.
    """
    from ..tool_registry import ToolRegistry
    from .delegation import Delegator

    settings = config.get("delegation", {}) or {}
    provider, model = settings.get("provider"), settings.get("model")
    main = agent.primary

    def routes_for_child() -> list[ModelRoute]:
        if provider or model:
            return [open_route(host, config, home, provider=provider or None, model=model or None, wrap_client=wrap_client)]
        lease = main.client.lease() if hasattr(main.client, "lease") else None
        return [ModelRoute(main.client, main.model, lease=lease)]

    def tools_for(toolsets: Sequence[str] | None) -> Any:
        return ToolRegistry.load(host, toolsets, interactive=False, config=config, home=home) if toolsets else tools

    return Delegator(
        agent,
        routes_for_child=routes_for_child,
        tools_for=tools_for,
        max_concurrent=int(settings.get("max_concurrent_children", 3)),
        max_iterations=int(settings.get("max_iterations", 50)),
        timeout=float(settings.get("timeout", 600.0)),
        max_depth=int(settings.get("max_spawn_depth", 1)),
    )


def describe_result(result: dict[str, Any]) -> str:
    """A one-line status for a turn that did not complete."""
    if result.get("failed"):
        return f"the turn failed: {result.get('error')}"
    if result.get("interrupted"):
        return "interrupted; send another message to continue"
    if result.get("empty"):
        return "the model gave no answer"
    if result.get("incomplete"):
        return "the answer is incomplete: the stream was cut off before the model finished; send another message to continue"
    return "done"
