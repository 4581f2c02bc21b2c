"""The typed config schema: one :class:`ConfigKey` per key, defaults included.

Adding a key is one entry in :data:`SCHEMA`. Plugins declare their own keys
through the ``config_keys`` hook (a list of ConfigKey). A ``*`` segment stands
for any name in an open-ended map (``credential_pool_strategies.*``,
``mcp.servers.*.command``). :func:`check` turns a raw value into a valid one
or raises :class:`~hermes.kernel.errors.ConfigError` with one line naming the
key, the value and what is allowed.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .errors import ConfigError

__all__ = [
    "CONFIG_VERSION",
    "ConfigKey",
    "ConfigSchema",
    "SCHEMA",
    "SLOT_GROUPS",
    "defaults_from",
    "plugin_problem",
    "render_markdown",
]

# The layout version a config.yaml written today carries (see kernel/config_migrations.py).
CONFIG_VERSION = 1

_TYPES = ("str", "int", "float", "bool", "list", "map", "any")

# Slots whose implementations may declare keys as a ``config_keys`` class attribute.
SLOT_GROUPS = (
    "hermes.context_engines",
    "hermes.memory_providers",
    "hermes.model_providers",
    "hermes.credential_strategies",
    "hermes.session_stores",
)


_FIELDS = ("key", "type", "default", "description", "min", "max", "choices", "nullable", "plugin_group", "item")


class ConfigKey:
    """One config key: dotted name, type, default, allowed values and a one-line description.

    ``type`` is ``str``, ``int``, ``float``, ``bool``, ``list`` (of strings
    unless ``item`` says otherwise), ``map`` (an open-ended mapping whose
    entries may be typed by ``NAME.*`` keys) or ``any``. ``plugin_group``
    names an entry-point group whose installed names the value must be one of.
    ``item`` is the type of a list's items: ``str`` or ``map``.

    Immutable, compared and hashed by value. Written by hand rather than as a
    frozen dataclass: the decorator costs more than the rest of this module,
    and ``hermes --help`` reads the schema (bench/startup.py).
    """

    __slots__ = _FIELDS
    key: str
    type: str
    default: Any
    description: str
    min: float | None
    max: float | None
    choices: tuple[Any, ...] | None
    nullable: bool
    plugin_group: str | None
    item: str

    def __init__(
        self,
        key: str,
        type: str,  # noqa: A002 - the public field's name
        default: Any,
        description: str,
        min: float | None = None,  # noqa: A002
        max: float | None = None,  # noqa: A002
        choices: tuple[Any, ...] | None = None,
        nullable: bool = False,
        plugin_group: str | None = None,
        item: str = "str",
    ) -> None:
        if type not in _TYPES:
            raise ValueError(f"{key}: unknown config type {type!r}")
        values = (key, type, default, description, min, max, choices, nullable, plugin_group, item)
        for name, value in zip(_FIELDS, values):
            object.__setattr__(self, name, value)

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in _FIELDS)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"ConfigKey is read-only: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"ConfigKey is read-only: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _FIELDS)
        return f"ConfigKey({shown})"

    def __reduce__(self) -> Any:  # copy and pickle, which __setattr__ would otherwise refuse
        return (self.__class__, self._values())

    def allowed(self) -> str:
        """What values are allowed, in a few words."""
        if self.choices:
            text = "one of " + ", ".join(str(c) for c in self.choices)
        elif self.type == "int":
            text = "a whole number" + _range_text(self.min, self.max)
        elif self.type == "float":
            text = "a number" + _range_text(self.min, self.max)
        elif self.type == "bool":
            text = "true or false"
        elif self.type == "list":
            text = "a list of mappings" if self.item == "map" else "a list like a,b or [a, b]"
        elif self.type == "map":
            text = "a mapping of names to values"
        elif self.type == "str":
            text = "text"
        else:
            text = "any value"
        if self.plugin_group:
            text += f" (an installed {self.plugin_group} plugin)"
        return text + (", or null" if self.nullable else "")

    def check(self, value: Any, *, where: str = "", key: str | None = None, hint: bool = True) -> Any:
        """``value`` converted to this key's type, or ConfigError naming key, value and what is allowed."""
        if value is None and (self.nullable or self.type == "any"):
            return None
        converted = _convert(self, value)
        if converted is _BAD:
            name = key or self.key
            fix = f"; fix it with `hermes config set {name} VALUE`" if where and hint else ""
            shown = "the value given" if _secret_key(name) else _show(value)  # never echo a key back
            raise ConfigError(f"{where}{name}: {shown} is not allowed; use {self.allowed()}{fix}")
        return converted


_BAD = object()


def _range_text(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f" from {low:g} to {high:g}"
    if low is not None:
        return f" of at least {low:g}"
    if high is not None:
        return f" of at most {high:g}"
    return ""


def _secret_key(key: str) -> bool:
    from .redact import is_secret_key

    parts = key.split(".")
    return parts[0] == "credentials" or any(is_secret_key(part) for part in parts)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _in_range(spec: ConfigKey, number: float) -> bool:
    if math.isnan(number) or math.isinf(number):
        return False
    return not ((spec.min is not None and number < spec.min) or (spec.max is not None and number > spec.max))


def _convert(spec: ConfigKey, value: Any) -> Any:
    kind = spec.type
    if kind == "any":
        return value
    if kind == "bool":
        return value if isinstance(value, bool) else _BAD
    if kind == "int":
        if isinstance(value, bool):
            return _BAD
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or not _in_range(spec, value):
            return _BAD
        return value
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not _in_range(spec, float(value)):
            return _BAD
        value = float(value)
    elif kind == "str":
        if isinstance(value, bool) and spec.choices and ("off" if not value else "on") in spec.choices:
            value = "off" if not value else "on"  # YAML 1.1 reads a bare off / on as a boolean
        elif isinstance(value, bool) or not isinstance(value, (str, int, float)):
            return _BAD
        value = str(value)  # `config set model.name 5` means the text 5
    elif kind == "list":
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        if not isinstance(value, list):
            return _BAD
        if spec.item == "map":
            if not all(isinstance(v, Mapping) for v in value):
                return _BAD
        elif spec.item == "str" and not all(isinstance(v, str) and v for v in value):
            return _BAD
        if spec.choices and any(v not in spec.choices for v in value):
            return _BAD
        return value
    elif kind == "map":
        return dict(value) if isinstance(value, Mapping) else _BAD
    if spec.choices and value not in spec.choices:
        # Text choices match whatever the case (full -> FULL), stored as the schema spells them.
        folded = {c.lower(): c for c in spec.choices if isinstance(c, str)}
        if not (isinstance(value, str) and value.lower() in folded):
            return _BAD
        value = folded[value.lower()]
    return value


def _k(key: str, type_: str, default: Any, description: str, **extra: Any) -> ConfigKey:
    return ConfigKey(key, type_, default, description, **extra)


# One entry per key. Keep descriptions to one line: docs/config.md is generated from them.
SCHEMA: tuple[ConfigKey, ...] = (
    _k("config_version", "int", CONFIG_VERSION, "Layout version of this file; `hermes config migrate` upgrades older ones.", min=0),
    _k("model.provider", "str", "openai", "Model provider plugin (hermes.model_providers).", plugin_group="hermes.model_providers"),
    _k("model.name", "str", "", "Model name sent to the provider; empty: the provider's default."),
    _k("model.base_url", "str", None, "API endpoint; overrides OPENAI_BASE_URL / ANTHROPIC_BASE_URL.", nullable=True),
    _k("model.max_tokens", "int", 4096, "Most tokens one answer may have.", min=1),
    _k("model.temperature", "float", None, "Sampling temperature; null: the provider's default.", min=0, max=2, nullable=True),
    _k("model.timeout", "float", 600.0, "Seconds one model request may take.", min=1),
    _k("model.prompt_caching", "bool", True, "Mark the stable prompt prefix for the provider's prompt cache."),
    _k("model.context_length", "int", None, "Context window in tokens; null: looked up from the model name.", min=1024, nullable=True),
    _k("model.max_output", "int", None, "Most output tokens the model allows; null: looked up like the window.", min=1, nullable=True),
    _k("fallback_providers", "list", [], "Routes tried in order when the main model fails: [{provider, model, base_url}].", item="map"),
    _k("retries.max_attempts", "int", 3, "Attempts per model request before the turn fails.", min=1, max=20),
    _k("retries.base_delay", "float", 1.0, "First retry delay in seconds (doubled each time, with jitter).", min=0),
    _k("retries.max_delay", "float", 30.0, "Longest delay between two retries, in seconds.", min=0),
    _k("retries.max_retry_after", "float", 60.0, "Longest Retry-After the client waits for before failing over.", min=0),
    _k("credentials", "map", {}, "API keys per provider: credentials.<provider>: [key or {key, label}]."),
    _k("credentials.*", "any", [], "Keys of one provider: a key, a {key, label} mapping, or a list of either."),
    _k("credential_pool.rate_limit_cooldown", "float", 60, "Seconds a key rests after a rate limit without a reset time.", min=0),
    _k("credential_pool.billing_cooldown", "float", 3600, "Seconds a key rests after a billing or quota error.", min=0),
    _k("credential_pool.auth_cooldown", "float", 300, "Seconds a key rests after it was refused as invalid.", min=0),
    _k("credential_pool.lease_ttl", "float", 900, "Seconds a key lease lasts before another process may take it.", min=1),
    _k("credential_pool_strategies", "map", {}, "Key rotation strategy per provider: credential_pool_strategies.<provider>: NAME."),
    _k("credential_pool_strategies.*", "str", "fill_first", "Strategy plugin for one provider (hermes.credential_strategies).",
       plugin_group="hermes.credential_strategies"),
    _k("pricing.models", "map", {}, "Prices per model overriding the built-in table: pricing.models.<model>: {input, output, ...}."),
    _k("pricing.models.*", "map", {}, "USD per million tokens for one model: input, output, cache_read, cache_write."),
    _k("agent.max_iterations", "int", 90, "Model calls one user turn may make before it stops.", min=1, max=10_000),
    _k("toolsets", "list", [], "Toolsets loaded in chat (hermes.tools plugins), e.g. files,terminal.", plugin_group="hermes.tools"),
    _k("context.engine", "str", "compressor", "Context engine plugin (hermes.context_engines).", plugin_group="hermes.context_engines"),
    _k("compression.threshold", "float", 0.50, "Share of the context window that triggers a compression.", min=0.05, max=1.0),
    _k("compression.target_ratio", "float", 0.20, "Share of the window the compressed history aims for.", min=0.01, max=0.9),
    _k("compression.protect_first_n", "int", 3, "Messages at the start that are never compressed.", min=0, max=1000),
    _k("compression.summary_input_tokens", "int", 60_000, "Most conversation tokens sent to the summary model.", min=1000),
    _k("compression.enabled", "bool", True, "Compress automatically; false leaves only /compress and overflow recovery."),
    _k("compression.tail_min_messages", "int", 20, "Newest messages always kept verbatim.", min=3, max=10_000),
    _k("compression.min_fidelity", "float", 0.85, "Fidelity score below which the summary is asked again, then facts kept verbatim.",
       min=0, max=1),
    _k("compression.review", "str", "off", "ask: show each handoff note in the REPL to accept, edit or cancel.", choices=("off", "ask")),
    _k("auxiliary.compression.provider", "str", "", "Provider of the summary model; empty: the main provider.",
       plugin_group="hermes.model_providers"),
    _k("auxiliary.compression.model", "str", "", "Summary model; empty: the main model."),
    _k("memory.enabled", "bool", True, "Built-in memory (MEMORY.md, USER.md) and the memory tool."),
    _k("memory.provider", "str", "", "Extra memory provider plugin (hermes.memory_providers); empty: builtin only.",
       plugin_group="hermes.memory_providers"),
    _k("memory.memory_limit", "int", 2200, "Characters MEMORY.md may hold.", min=100),
    _k("memory.user_limit", "int", 1375, "Characters USER.md may hold.", min=100),
    _k("memory.nudge_interval", "int", 10, "User turns between memory reviews; 0 turns them off.", min=0),
    _k("delegation.max_concurrent_children", "int", 3, "Sub-agents that may run at once.", min=1, max=64),
    _k("delegation.max_spawn_depth", "int", 1, "How deep sub-agents may delegate in turn.", min=0, max=5),
    _k("delegation.max_iterations", "int", 50, "Model calls one sub-agent may make.", min=1, max=10_000),
    _k("delegation.timeout", "float", 600.0, "Seconds a sub-agent may run.", min=1),
    _k("delegation.provider", "str", None, "Provider for sub-agents; null: the main provider.", nullable=True,
       plugin_group="hermes.model_providers"),
    _k("delegation.model", "str", None, "Model for sub-agents; null: the main model.", nullable=True),
    _k("skills.external_dirs", "list", [], "Extra folders of SKILL.md skills."),
    _k("skills.disabled", "list", [], "Skill names left out of the index and the tools."),
    _k("skills.review_interval", "int", 15, "Tool-using iterations before the self-improvement review; 0: off.", min=0),
    _k("skills.trusted_sources", "list", [], "Install sources (path or URL prefixes) the skills guard trusts."),
    _k("context_files.enabled", "bool", True, "Put AGENTS.md / .hermes.md of the working folder in the system prompt."),
    _k("context_files.max_chars", "int", 20_000, "Longest context file kept; longer ones are cut.", min=0),
    _k("plugins.disabled", "list", [], "Plugins that never load (entry-point or distribution names)."),
    _k("plugins.hook_timeout", "float", 5.0, "Seconds a before_tool_call / before_approval_request listener may take; later counts as a veto. 0: no limit.",
       min=0, max=3600),
    _k("plugins.advisory", "list", [], "Plugins whose veto hooks fail open: a raise or timeout lets the call through (logged)."),
    _k("sessions.auto_title", "bool", True, "Title new sessions: the REPL asks the auxiliary model after the first exchange; a one-shot uses its first message."),
    _k("sessions.search_time_budget", "float", 10.0, "Seconds the session_search tool searches; then it returns the hits found so far.",
       min=0.1),
    _k("security.redact_tool_output", "bool", True, "Replace secrets in tool output with [REDACTED:kind] before storing or sending."),
    _k("tools.allowed_paths", "list", [], "Folders the file tools may use without approval, besides the working directory."),
    _k("tools.defer.mode", "str", "auto", "Defer deferrable tool schemas behind tool_search: auto past a threshold, always, never.",
       choices=("auto", "always", "never")),
    _k("tools.defer.min_tools", "int", 50, "auto: defer when more tools than this are on offer.", min=0),
    _k("tools.defer.context_share", "float", 0.1, "auto: defer when the tool schemas take more than this share of the context window.",
       min=0, max=1),
    _k("tools.defer.max_results", "int", 5, "Most tools one tool_search call loads.", min=1, max=20),
    _k("approvals.mode", "str", "ask", "ask: the REPL asks and -q refuses; off: approve everything but the deny list (--yolo).",
       choices=("ask", "off")),
    _k("approvals.timeout", "float", 60.0, "Seconds the REPL's approval prompt waits for y or n; no answer counts as no. 0: wait forever.",
       min=0, max=86_400),
    _k("store.backend", "str", "sqlite", "Session store plugin (hermes.session_stores); a store.url scheme overrides it.",
       plugin_group="hermes.session_stores"),
    _k("store.url", "str", None, "Where sessions live: empty for state.db, a path, sqlite:///path or postgresql://...", nullable=True),
    _k("store.synchronous", "str", "NORMAL", "Durability: NORMAL survives a crash, FULL or EXTRA power loss too (PostgreSQL: all but OFF).",
       choices=("OFF", "NORMAL", "FULL", "EXTRA")),
    _k("store.pool_size", "int", 4, "PostgreSQL connections per process.", min=1, max=1000),
    _k("mcp.timeout", "float", 120.0, "Seconds one MCP tool call may take, unless the server sets its own.", min=0.001),
    _k("mcp.connect_timeout", "float", 30.0, "Seconds an MCP server may take to start and list its tools.", min=0.001),
    _k("mcp.max_restarts", "int", 5, "Restarts in a row of an MCP server that keeps dying, then it stays down.", min=0),
    _k("mcp.restart_backoff", "float", 0.5, "First restart delay of a dead MCP server in seconds, doubled each time.", min=0.001),
    _k("mcp.restart_backoff_max", "float", 30.0, "Longest restart delay of a dead MCP server, in seconds.", min=0.001),
    _k("mcp.sampling.enabled", "bool", False, "Let MCP servers ask the model for completions (sampling/createMessage)."),
    _k("mcp.sampling.model", "str", "", "Model for MCP sampling; empty: model.name."),
    _k("mcp.sampling.max_tokens_cap", "int", 1024, "Most tokens one MCP sampling request may ask for.", min=1),
    _k("mcp.sampling.requests_per_minute", "int", 10, "MCP sampling requests allowed per minute; 0: none.", min=0),
    _k("mcp.servers", "map", {}, "MCP servers by name: stdio (command, args, env, cwd) or remote (url, headers, transport)."),
    _k("mcp.servers.*.command", "str", None, "Program that runs a stdio MCP server.", nullable=True),
    _k("mcp.servers.*.args", "list", [], "Arguments of the stdio server's command.", item="any"),
    _k("mcp.servers.*.env", "map", {}, "Environment of a stdio server (${NAME} reads .env); provider keys are never passed otherwise."),
    _k("mcp.servers.*.cwd", "str", None, "Working folder of a stdio server.", nullable=True),
    _k("mcp.servers.*.url", "str", None, "URL of a remote MCP server.", nullable=True),
    _k("mcp.servers.*.headers", "map", {}, "HTTP headers of a remote server (${NAME} reads .env); shown masked."),
    _k("mcp.servers.*.transport", "str", None, "stdio, http (Streamable HTTP) or sse; default from command or url.",
       choices=("stdio", "http", "sse"), nullable=True),
    _k("mcp.servers.*.enabled", "bool", True, "Start this server; `hermes mcp disable NAME` sets it false."),
    _k("mcp.servers.*.timeout", "float", None, "Seconds per call to this server; null: mcp.timeout.", min=0.001, nullable=True),
    _k("mcp.servers.*.connect_timeout", "float", None, "Seconds this server may take to start; null: mcp.connect_timeout.",
       min=0.001, nullable=True),
    _k("mcp.servers.*.include", "list", [], "Only these tool names of the server (empty: all)."),
    _k("mcp.servers.*.exclude", "list", [], "Tool names of the server left out."),
    _k("mcp.servers.*.parallel_safe", "bool", False, "Calls may share a batch with read-only tools."),
    _k("serve.api_keys", "list", [], "Bearer keys, stored hashed; managed by `hermes serve key add|list|revoke`.", item="map"),
    _k("serve.max_concurrent", "int", 8, "Turns hermes serve runs at once.", min=1, max=1024),
    _k("serve.max_queue", "int", 64, "Turns waiting for a worker before hermes serve answers 429.", min=0, max=100_000),
    _k("serve.drain_timeout", "float", 30.0, "Seconds running turns get to finish after SIGTERM.", min=0, max=86_400),
    _k("serve.approvals", "str", "refuse", "Terminal commands that need approval, on a server: refuse, or allow-list (serve.allowed_commands).",
       choices=("refuse", "allow-list")),
    _k("serve.allowed_commands", "list", [], "Glob patterns of commands the allow-list approves."),
    _k("serve.tools", "str", "both", "Tools a request that brings its own `tools` gets: server (the agent's only), "
       "client (the client's only) or both (the client's win a name clash).", choices=("server", "client", "both")),
    _k("serve.toolsets", "list", [], "Toolsets a server's agents get; empty: those of toolsets (all installed when empty) minus terminal.",
       plugin_group="hermes.tools"),
    _k("serve.workspace", "str", "", "Folder the server's file tools are confined to; empty: HERMES_HOME/workspace."),
    _k("serve.requests_per_minute", "int", 0, "Requests per minute per key, for keys that set none; 0: unlimited.", min=0, max=10_000_000),
    _k("serve.cost_per_day", "float", 0.0, "USD per day per key, for keys that set none; 0: unlimited.", min=0, max=10_000_000),
    _k("serve.header_timeout", "float", 10.0, "Seconds a client may take to send a request's headers (from its first byte).",
       min=0.1, max=3600),
    _k("serve.body_timeout", "float", 30.0, "Seconds a request body may stall between two reads before a 408.", min=0.1, max=3600),
    _k("serve.idle_timeout", "float", 5.0, "Seconds a kept-alive connection may sit idle between requests.", min=0.1, max=3600),
    _k("serve.max_connections", "int", 1000, "Open connections hermes serve holds; more are answered 503.", min=1, max=1_000_000),
    _k("serve.max_connections_per_client", "int", 64, "Open connections one client address may hold; more are answered 429.",
       min=1, max=1_000_000),
    _k("serve.allowed_hosts", "list", [], "Host names (name, name:port, *.domain, *) hermes serve answers besides loopback and the bind address."),
    _k("serve.allowed_origins", "list", [], "Web origins (https://app.example) whose pages may call hermes serve; * for any."),
    _k("serve.trust_proxy", "bool", False, "Believe X-Forwarded-Host/-Proto: only behind a reverse proxy that sets them."),
    _k("serve.session_hours", "float", 12.0, "Hours a dashboard sign-in lasts.", min=0.001, max=8760),
    _k("plugins.*", "map", {}, "Settings of one plugin by name (Hermes folder providers keep theirs here)."),
)


def defaults_from(keys: Iterable[ConfigKey]) -> dict[str, Any]:
    """The nested defaults mapping of ``keys`` (``*`` entries describe maps and add nothing)."""
    import copy

    data: dict[str, Any] = {}
    for spec in keys:
        if "*" in spec.key:
            continue
        node = data
        *parents, leaf = spec.key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = copy.deepcopy(spec.default)
    return data


class ConfigSchema:
    """The built-in keys plus those plugins declared; looks keys up with wildcards."""

    __slots__ = ("keys",)

    def __init__(self, keys: dict[str, ConfigKey] | None = None) -> None:
        self.keys: dict[str, ConfigKey] = {} if keys is None else keys

    def __repr__(self) -> str:
        return f"ConfigSchema({len(self.keys)} keys)"

    @classmethod
    def build(cls, extra: Iterable[ConfigKey] = ()) -> ConfigSchema:
        schema = cls({spec.key: spec for spec in SCHEMA})
        for spec in extra:
            schema.keys.setdefault(spec.key, spec)  # a plugin never redefines a kernel key
        return schema

    @classmethod
    def from_host(cls, host: Any) -> ConfigSchema:
        """The schema with every plugin's keys: the ``config_keys`` hook and slot classes' ``config_keys``."""
        declared: list[Any] = list(host.call("config_keys"))
        from .errors import HermesError

        for group in SLOT_GROUPS:
            try:
                declared += [getattr(obj, "config_keys", None) for _, obj in host.implementations(group)]
            except HermesError:  # a slot this kernel does not have yet
                continue
        extra = [spec for result in declared if isinstance(result, (list, tuple))
                 for spec in result if isinstance(spec, ConfigKey)]  # fmt: skip
        return cls.build(extra)

    def find(self, key: str) -> ConfigKey | None:
        """The entry for ``key``: exact, else the most specific ``*`` pattern that matches."""
        if key in self.keys:
            return self.keys[key]
        parts = key.split(".")
        best: tuple[int, ConfigKey] | None = None
        for pattern, spec in self.keys.items():
            pat = pattern.split(".")
            if "*" in pat and len(pat) == len(parts) and all(p in ("*", k) for p, k in zip(pat, parts)):
                exact = sum(p != "*" for p in pat)
                if best is None or exact > best[0]:
                    best = (exact, spec)
        return best[1] if best else None

    def children(self, key: str) -> list[str]:
        """Keys directly or indirectly below ``key`` (``model`` -> model.provider, ...)."""
        prefix = key + "."
        return [k for k in self.keys if k.startswith(prefix) and "*" not in k[len(prefix):]]

    def _pattern_below(self, key: str) -> bool:
        """True when a longer ``*`` pattern passes through ``key`` (``mcp.servers.gh`` of ``mcp.servers.*.command``)."""
        parts = key.split(".")
        for pattern in self.keys:
            pat = pattern.split(".")
            if "*" in pat and len(pat) > len(parts) and all(p in ("*", k) for p, k in zip(pat, parts)):
                return True
        return False

    def is_section(self, key: str) -> bool:
        return (bool(self.children(key)) or self._pattern_below(key)) and self.find(key) is None

    def open_map_parent(self, key: str) -> ConfigKey | None:
        """The ``map`` entry ``key`` lives in when no pattern types it (``pricing.models.x``)."""
        parts = key.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            spec = self.find(".".join(parts[:cut]))
            if spec is not None:
                # A map whose entries are typed (``mcp.servers.*.command``) is not open.
                typed = self._pattern_below(".".join(parts[:cut]))
                return spec if spec.type in ("map", "any") and not typed else None
        return None

    def lookup(self, key: str) -> ConfigKey | None:
        """The entry for ``key`` (None for a section or inside an untyped map); unknown keys raise."""
        spec = self.find(key)
        if spec is not None or self.is_section(key) or self.open_map_parent(key) is not None:
            return spec
        raise ConfigError(f"unknown config key {key!r}{self.suggest(key)}; see `hermes config schema`")

    def suggest(self, key: str) -> str:
        names = [k for k in self.keys if "*" not in k]
        names += sorted({k.rsplit(".", 1)[0] for k in names if "." in k})
        close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
        return f" (did you mean {close[0]}?)" if close else ""

    def validate(
        self, data: Mapping[str, Any], *, where: str = "", strict: bool = False, hint: bool = True
    ) -> dict[str, Any]:
        """A copy of ``data`` with every known key checked and converted.

        Unknown keys are kept (a plugin that is not loaded may own them) unless
        ``strict``; :meth:`unknown` lists them for ``hermes doctor``.
        """
        return self._walk(data, "", where, strict, hint)

    def _walk(self, data: Mapping[str, Any], prefix: str, where: str, strict: bool, hint: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in data.items():
            key = f"{prefix}{name}"
            spec = self.find(key)
            if spec is not None and not (spec.type == "map" and isinstance(value, Mapping)):
                out[name] = spec.check(value, where=where, key=key, hint=hint)
            elif isinstance(value, Mapping):
                out[name] = self._walk(value, key + ".", where, strict, hint)
            elif value is None and self.is_section(key):
                out[name] = {}  # `memory:` with nothing under it: an empty section, as YAML users mean it
            elif self.is_section(key):
                raise ConfigError(f"{where}{key} is a section; it must be a mapping of {', '.join(self.children(key)[:3])}, ...")
            else:
                if strict:
                    self.lookup(key)
                out[name] = value
        return out

    def unknown(self, data: Mapping[str, Any], prefix: str = "") -> list[str]:
        """Dotted keys in ``data`` that no entry describes."""
        found: list[str] = []
        for name, value in data.items():
            key = f"{prefix}{name}"
            spec = self.find(key)
            if spec is not None or self.is_section(key):
                if isinstance(value, Mapping) and (spec is None or spec.type == "map"):
                    found += self.unknown(value, key + ".")
            elif self.open_map_parent(key) is None:
                found.append(key)
        return found

    def check_plugins(self, data: Mapping[str, Any], available: Callable[[str], list[str]]) -> list[str]:
        """Problems with plugin names in ``data`` (not installed), one line each."""
        problems: list[str] = []

        def visit(node: Mapping[str, Any], prefix: str) -> None:
            for name, value in node.items():
                key = f"{prefix}{name}"
                spec = self.find(key)
                if isinstance(value, Mapping) and (spec is None or spec.type == "map"):
                    visit(value, key + ".")
                elif spec is not None and spec.plugin_group:
                    message = plugin_problem(spec, key, value, available(spec.plugin_group))
                    if message:
                        problems.append(message)

        visit(data, "")
        return problems


def plugin_problem(spec: ConfigKey, key: str, value: Any, installed: list[str]) -> str | None:
    """One line when ``value`` names a plugin that is not installed, else None."""
    names = value if isinstance(value, list) else [value]
    for name in names:
        if name in (None, "") or name in installed:
            continue
        close = difflib.get_close_matches(str(name), installed, n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        shown = ", ".join(sorted(installed)) or "none"
        return f"{key}: no {spec.plugin_group} plugin named {name!r}; {hint}installed: {shown}"
    return None


def render_markdown(schema: ConfigSchema | None = None) -> str:
    """docs/config.md: one table row per key (tests keep the file equal to this)."""
    schema = schema or ConfigSchema.build()
    lines = [
        "# Configuration keys",
        "",
        "<!-- Generated from kernel/config_schema.py by `hermes config schema --markdown`; do not edit. -->",
        "",
        "Set a key with `hermes config set KEY VALUE`; the value is checked before it is written, and",
        "`config.yaml` and `.env` are read, changed and replaced under a lock (`.config.yaml.lock`,",
        "`.env.lock`), so commands setting keys at once all land.",
        "Environment: `HERMES_<SECTION>__<KEY>` (for example `HERMES_AGENT__MAX_ITERATIONS=40`).",
        "`*` stands for any name (a provider, a model). Plugins add keys of their own (`hermes config schema`).",
        "",
        "| key | type | default | allowed | description |",
        "|---|---|---|---|---|",
    ]
    for spec in schema.keys.values():
        default = "" if spec.default in ({}, []) else _yaml_scalar(spec.default)
        lines.append(f"| `{spec.key}` | {spec.type} | {default} | {spec.allowed()} | {spec.description} |")
    return "\n".join(lines) + "\n"


def _yaml_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value == "":
        return '""'
    return f"`{value}`"
