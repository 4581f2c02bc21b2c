"""Hermes Agent's ``config.yaml`` keys, read by hermes-kernel.

Both programs default to ``~/.hermes`` and share ``config.yaml``. Every key
Hermes Agent writes is either *mapped* (:data:`MAPPED`: its value becomes a
kernel key's value at load time) or *unused* (:data:`UNUSED`: the kernel has
no such feature; ``hermes doctor`` names it once, never as a typo).
:func:`translate` turns a raw mapping of both dialects into a kernel-shaped
one plus where each value came from. The kernel's own key always wins over
the Hermes Agent key for the same setting. Nothing here writes a file.

The kernel imports this module only when a ``config.yaml`` holds something
outside its own schema, so a pure kernel config never pays for it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MAPPED",
    "UNUSED",
    "Rule",
    "Translation",
    "hermes_reason",
    "is_hermes_key",
    "kernel_key_for",
    "render_markdown",
    "resolve_auto_provider",
    "translate",
]

# The kernel's two provider plugins, and what each Hermes Agent provider name means to them.
_ANTHROPIC = {"anthropic", "claude", "claude-code"}
_OPENAI_COMPATIBLE = {"openai", "openai-api", "custom", "ollama", "vllm", "llamacpp", "llama.cpp", "llama-cpp",
                      "lmstudio", "lm-studio", "lm_studio", "openrouter"}  # fmt: skip
OPENROUTER_URL = "https://openrouter.ai/api/v1"  # Hermes Agent's endpoint for provider openrouter

# Hermes Agent toolset names -> kernel toolsets. Its presets (hermes-cli, ...) mean "everything".
_KERNEL_TOOLSETS = ["files", "terminal", "todo", "clarify", "session_search", "skills", "delegation", "memory"]
_TOOLSET_NAMES: dict[str, list[str]] = {
    "file": ["files"], "terminal": ["terminal"], "todo": ["todo"], "clarify": ["clarify"],
    "session_search": ["session_search"], "skills": ["skills"], "delegation": ["delegation"],
    "memory": ["memory"], "debugging": ["terminal", "files"], "coding": ["files", "terminal", "todo"],
    "all": _KERNEL_TOOLSETS,
}  # fmt: skip
# Hermes toolsets with no kernel counterpart (dropped from the list, named by doctor).
_FOREIGN_TOOLSETS = {"web", "search", "x_search", "vision", "video", "image_gen", "video_gen", "computer_use", "browser",
                     "cronjob", "tts", "context_engine", "project", "code_execution", "homeassistant", "kanban",
                     "discord", "discord_admin", "yuanbao", "feishu_doc", "feishu_drive", "spotify", "safe",
                     "skills_hub", "messaging", "send_message"}  # fmt: skip


@dataclass(frozen=True)
class Rule:
    """One mapped key: Hermes Agent's dotted name, the kernel key it feeds, and the value conversion."""

    hermes: str
    kernel: str
    convert: Callable[[Any], Any] | None = None
    note: str = ""


def _provider(value: Any) -> Any:
    """A Hermes Agent provider name as a kernel plugin name (auto/main/empty: the main provider)."""
    if not isinstance(value, str):
        return value
    name = value.strip().lower()
    if name in ("", "auto", "main"):
        return ""
    if name in _ANTHROPIC:
        return "anthropic"
    if name in _OPENAI_COMPATIBLE:
        return "openai"
    return value  # another vendor: the kernel reports it as a missing plugin, naming those installed


def _toolsets(value: Any) -> Any:
    """Hermes Agent toolset names as kernel toolsets; names it has no counterpart for are dropped."""
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list):
        return value
    out: list[Any] = []
    for name in value:
        if isinstance(name, str) and (name.startswith("hermes-") or name in _TOOLSET_NAMES):
            out += _KERNEL_TOOLSETS if name.startswith("hermes-") else _TOOLSET_NAMES[name]
        elif not (isinstance(name, str) and name in _FOREIGN_TOOLSETS):
            out.append(name)  # a kernel name, or a typo the kernel's plugin check reports
    return list(dict.fromkeys(out))


def _approvals(value: Any) -> Any:
    """manual and smart (an LLM judges low-risk commands) both ask; off approves everything."""
    if isinstance(value, bool):  # YAML reads a bare off as false
        return "ask" if value else "off"
    return {"manual": "ask", "smart": "ask"}.get(str(value).lower(), value) if isinstance(value, str) else value


def _empty_is_null(value: Any) -> Any:
    return None if value == "" else value


def _positive_or_skip(value: Any) -> Any:
    """Hermes Agent's 0 means "no limit"; the kernel keeps its default then."""
    if value in (0, None) and not isinstance(value, bool):
        raise _Skip
    return value


def _fallbacks(value: Any) -> Any:
    """Fallback entries keep their shape; provider names are translated."""
    if isinstance(value, Mapping):  # the older single ``fallback_model`` mapping
        value = [value]
    if not isinstance(value, list):
        return value
    return [{**entry, "provider": _provider(entry.get("provider"))} if isinstance(entry, Mapping) else entry
            for entry in value]  # fmt: skip


class _Skip(Exception):
    """The Hermes value means "the default": nothing to map."""


#: Every Hermes Agent key whose value hermes-kernel applies, and the kernel key it becomes.
#: Shared names (same key in both programs) are listed when Hermes Agent's values need translating.
MAPPED: tuple[Rule, ...] = (
    Rule("model.default", "model.name", note="the model name"),
    Rule("model.model", "model.name", note="older spelling of model.default"),
    Rule("model.provider", "model.provider", _provider,
         "auto is resolved from the keys present; custom, openrouter and local servers use the openai plugin"),
    Rule("model.base_url", "model.base_url", _empty_is_null, "wins over OPENAI_BASE_URL, as in Hermes Agent"),
    Rule("model.api_key", "credentials.*", note="becomes the key in credentials.PROVIDER (the openai plugin for auto)"),
    Rule("model.context_length", "model.context_length"),
    Rule("agent.max_turns", "agent.max_iterations"),
    Rule("agent.api_max_retries", "retries.max_attempts"),
    Rule("toolsets", "toolsets", _toolsets, "toolset names translated (hermes-cli: every kernel toolset)"),
    Rule("platform_toolsets.cli", "toolsets", _toolsets, "the CLI's toolsets; names translated as for toolsets"),
    Rule("approvals.mode", "approvals.mode", _approvals, "manual and smart become ask; off stays off"),
    Rule("approvals.timeout", "approvals.timeout", note="seconds the REPL's approval prompt waits; no answer counts as no"),
    Rule("memory.memory_enabled", "memory.enabled"),
    Rule("memory.memory_char_limit", "memory.memory_limit"),
    Rule("memory.user_char_limit", "memory.user_limit"),
    Rule("memory.nudge_interval", "memory.nudge_interval"),
    Rule("memory.provider", "memory.provider"),
    Rule("compression.enabled", "compression.enabled"),
    Rule("compression.threshold", "compression.threshold"),
    Rule("compression.target_ratio", "compression.target_ratio"),
    Rule("compression.protect_first_n", "compression.protect_first_n"),
    Rule("compression.protect_last_n", "compression.tail_min_messages"),
    Rule("auxiliary.compression.provider", "auxiliary.compression.provider", _provider, "auto: the main provider"),
    Rule("auxiliary.compression.model", "auxiliary.compression.model"),
    Rule("auxiliary.title_generation.enabled", "sessions.auto_title"),
    Rule("context.engine", "context.engine"),
    Rule("context_file_max_chars", "context_files.max_chars", _positive_or_skip),
    Rule("delegation.max_iterations", "delegation.max_iterations"),
    Rule("delegation.max_concurrent_children", "delegation.max_concurrent_children"),
    Rule("delegation.max_spawn_depth", "delegation.max_spawn_depth"),
    Rule("delegation.model", "delegation.model", _empty_is_null),
    Rule("delegation.provider", "delegation.provider", lambda v: _empty_is_null(_provider(v))),
    Rule("delegation.child_timeout_seconds", "delegation.timeout", _positive_or_skip),
    Rule("skills.external_dirs", "skills.external_dirs"),
    Rule("skills.creation_nudge_interval", "skills.review_interval"),
    Rule("security.redact_secrets", "security.redact_tool_output"),
    Rule("fallback_providers", "fallback_providers", _fallbacks, "provider names translated"),
    Rule("fallback_model", "fallback_providers", _fallbacks, "older single fallback: a one-entry list"),
    Rule("credential_pool_strategies", "credential_pool_strategies", note="same strategy names"),
    Rule("mcp_servers.*.command", "mcp.servers.*.command"),
    Rule("mcp_servers.*.args", "mcp.servers.*.args"),
    Rule("mcp_servers.*.env", "mcp.servers.*.env"),
    Rule("mcp_servers.*.url", "mcp.servers.*.url"),
    Rule("mcp_servers.*.headers", "mcp.servers.*.headers"),
    Rule("mcp_servers.*.timeout", "mcp.servers.*.timeout"),
    Rule("mcp_servers.*.connect_timeout", "mcp.servers.*.connect_timeout"),
    Rule("mcp_servers.*.enabled", "mcp.servers.*.enabled"),
    Rule("plugins.disabled", "plugins.disabled", note="same meaning: these never load"),
)

_GATEWAY = "messaging-platform behaviour; hermes gateway has its own gateway.* settings"
_UI = "Hermes Agent's terminal and desktop UI; hermes-kernel's REPL has no themes, banners or panels"
_NO = "hermes-kernel has no such feature"

#: Hermes Agent keys (or whole sections, written as a prefix) hermes-kernel does not use, and why.
UNUSED: dict[str, str] = {
    "_config_version": "Hermes Agent's own layout version; the kernel's is config_version",
    "model.streaming": "hermes-kernel always streams in the REPL",
    "model.api_mode": "the provider plugin picks the wire protocol",
    "model.api": "older spelling of model.api_key; set credentials.<provider> or the provider's *_API_KEY",
    "model.ollama_num_ctx": "Ollama-specific request field; set model.context_length",
    "model.default_headers": "custom HTTP headers are not supported by the kernel's providers",
    "model.extra_headers": "custom HTTP headers are not supported by the kernel's providers",
    "model.auth_mode": "Azure Entra ID sign-in; the kernel uses API keys",
    "model.entra": "Azure Entra ID sign-in; the kernel uses API keys",
    "model.reasoning_effort": "reasoning effort is not a kernel setting",
    "providers": "named endpoints; use model.base_url or fallback_providers entries with base_url",
    "custom_providers": "named endpoints; use model.base_url or fallback_providers entries with base_url",
    "model_aliases": "/model aliases of Hermes Agent's REPL",
    "model_catalog": "Hermes Agent's online model list; `hermes models list` uses the kernel's table",
    "provider_routing": "OpenRouter routing preferences are not sent by the kernel",
    "openrouter": "OpenRouter response caching is not sent by the kernel",
    "bedrock": "no AWS Bedrock provider plugin", "vertex": "no Google Vertex provider plugin",
    "prompt_caching": "the kernel marks the cache prefix with the provider's default TTL (model.prompt_caching)",
    **{f"agent.{k}": "a Hermes Agent loop or gateway setting the kernel's loop does not have" for k in (
        "gateway_timeout", "restart_drain_timeout", "service_tier", "fast_auto_seconds", "tool_use_enforcement",
        "intent_ack_continuation", "task_completion_guidance", "parallel_tool_call_guidance", "environment_probe",
        "environment_hint", "coding_context", "coding_instructions", "verify_guidance", "max_verify_nudges",
        "verify_on_stop", "gateway_timeout_warning", "clarify_timeout", "gateway_notify_interval",
        "gateway_auto_continue_freshness", "local_stream_stale_timeout", "image_input_mode", "disabled_toolsets",
        "reasoning_overrides", "reasoning_effort", "verbose", "personalities", "system_prompt", "gateway_turn_lease_timeout",
        "session_stall_timeout", "sanitizer_heal_escalation_threshold", "cron_drain_timeout",
        "restart_after_turn_timeout", "build_wait_timeout", "auto_recovery_cycles")},
    **{f"compression.{k}": "a Hermes Agent compressor option the kernel's compressor does not have" for k in (
        "abort_on_summary_failure", "codex_gpt55_autoraise", "codex_gpt55_autoraise_notice", "codex_app_server_auto",
        "in_place", "hygiene_hard_message_limit", "checkpoint_required", "progress_notices", "model_thresholds",
        "threshold_tokens", "min_tail_user_messages", "max_attempts", "codex_responses_native",
        "codex_responses_compact_threshold", "idle_compact_after_seconds", "hygiene_max_turn_hold_seconds",
        "proactive_prune_tokens", "proactive_prune_min_result_chars", "proactive_prune_min_reclaim_tokens",
        "context_timeout_seconds", "context_total_ceiling_seconds")},
    **{f"auxiliary.compression.{k}": "the summary model uses the main provider's endpoint and key" for k in (
        "base_url", "api_key", "timeout", "extra_body", "reasoning_effort", "max_concurrency", "no_progress_timeout")},
    **{f"auxiliary.{k}": "an auxiliary task hermes-kernel does not run" for k in (
        "approval", "background_review", "curator", "goal_judge", "kanban_decomposer", "mcp", "memory_query_rewrite",
        "moa_aggregator", "moa_reference", "monitor", "profile_describer", "skills_hub", "transient_retries",
        "triage_specifier", "tts_audio_tags", "tts_rewrite", "vision", "web_extract", "session_search", "flush_memories")},
    "auxiliary.title_generation": "only title_generation.enabled is used (sessions.auto_title); titles use the main model",
    **{f"memory.{k}": "the kernel's memory has one switch (memory.enabled) and no write approval" for k in (
        "user_profile_enabled", "write_approval")},
    **{f"delegation.{k}": "sub-agents share the main provider's endpoint and key; this option does not exist" for k in (
        "base_url", "api_key", "api_mode", "inherit_mcp_toolsets", "max_async_children", "max_summary_chars",
        "reasoning_effort", "orchestrator_enabled", "subagent_auto_approve", "fallback_providers")},
    **{f"skills.{k}": "a Hermes Agent skills option the kernel does not have" for k in (
        "template_vars", "inline_shell", "inline_shell_timeout", "guard_agent_created", "write_approval")},
    **{f"security.{k}": "a Hermes Agent security scanner or list the kernel does not have" for k in (
        "allow_private_urls", "tirith_enabled", "tirith_path", "tirith_timeout", "tirith_fail_open",
        "website_blocklist", "acked_advisories", "allow_lazy_installs", "approval", "protected_instruction_files",
        "protected_instruction_extra_patterns")},
    **{f"sessions.{k}": "hermes-kernel never prunes sessions on its own (`hermes sessions delete`)" for k in (
        "auto_prune", "retention_days", "vacuum_after_prune", "min_interval_hours", "min_vacuum_interval_days",
        "write_json_snapshots")},
    "tools.tool_search": "the kernel always sends the loaded tools' schemas",
    **{f"approvals.{k}": "the kernel asks in the REPL and refuses in -q; no extra confirmations" for k in (
        "cron_mode", "deny", "mcp_reload_confirm", "destructive_slash_confirm")},
    "command_allowlist": "approved command patterns are per session in the kernel (serve: serve.allowed_commands)",
    "mcp.auto_reload_on_config_change": "MCP servers are read when a session starts",
    "mcp_discovery_timeout": "set mcp.connect_timeout",
    "mcp_servers": "this per-server option has no kernel counterpart",
    "plugins": "Hermes Agent's plugin installer settings; the kernel loads every installed plugin but plugins.disabled",
    "platform_toolsets": "toolsets of messaging platforms; only platform_toolsets.cli is used",
    "terminal": "terminal backends (docker, ssh, modal, ...); the kernel's terminal tool runs commands locally",
    "display": _UI, "skin": _UI, "paste_collapse_threshold": _UI, "paste_collapse_threshold_fallback": _UI,
    "paste_collapse_char_threshold": _UI, "desktop": _UI, "onboarding": _UI, "quick_commands": _UI,
    "personalities": _UI, "voice": _UI, "wake_word": _UI,
    "tts": "no text-to-speech", "stt": "no speech-to-text", "image_gen": "no image generation",
    "browser": "no browser tool", "web": "no web search tool", "x_search": "no X search tool",
    "computer_use": "no computer-use tool", "code_execution": "no code-execution sandbox",
    "checkpoints": "no file checkpoints", "lsp": "no language-server diagnostics", "cron": "no scheduled jobs",
    "kanban": "no kanban board", "curator": "no skill curator", "goals": "no goals", "moa": "no mixture of agents",
    "honcho": "Honcho is a memory provider plugin; install it and set memory.provider",
    "file_read_max_chars": "the kernel's file tool has its own read limit",
    "tool_output": "large tool outputs go to HERMES_HOME/results by the kernel's own budget",
    "tool_budget": "large tool outputs go to HERMES_HOME/results by the kernel's own budget",
    "tool_loop_guardrails": "the kernel's loop stops at agent.max_iterations",
    "timeouts": "per-operation deadlines are the kernel's own (model.timeout, mcp.timeout, delegation.timeout)",
    "gateway": _GATEWAY, "discord": _GATEWAY, "telegram": _GATEWAY, "slack": _GATEWAY, "matrix": _GATEWAY,
    "mattermost": _GATEWAY, "whatsapp": _GATEWAY, "platforms": _GATEWAY, "streaming": _GATEWAY,
    "human_delay": _GATEWAY, "platform_hints": _GATEWAY, "group_sessions_per_user": _GATEWAY,
    "max_concurrent_sessions": "hermes serve limits turns with serve.max_concurrent",
    "max_live_sessions": "hermes serve limits turns with serve.max_concurrent",
    "dashboard": "hermes serve has its own dashboard and keys (serve.*)",
    "secrets": "external secret managers; put keys in .env or `hermes auth add`",
    "auth": "Hermes Agent's login policy; the kernel's keys live in .env and auth.json",
    "logging": "the kernel logs warnings to stderr", "updates": "hermes-kernel updates through pip",
    "privacy": _NO, "timezone": _NO, "network": _NO, "hooks": "shell hooks; kernel hooks are Python plugins",
    "hooks_auto_accept": "shell hooks; kernel hooks are Python plugins", "prefill_messages_file": _NO,
    "database": "state.db settings; the kernel's are store.*", "runtime": _NO, "attachments": _UI,
    "telemetry": "hermes-kernel sends no telemetry", "worktree": _NO, "worktree_sync": _NO,
}


@dataclass
class Translation:
    """The kernel-shaped mapping of a config.yaml and what happened to each Hermes Agent key."""

    data: dict[str, Any]
    origins: dict[str, str] = field(default_factory=dict)  # kernel key -> "config.yaml via the Hermes Agent key X"
    unused: dict[str, str] = field(default_factory=dict)  # Hermes key -> why the kernel does not use it
    shadowed: dict[str, str] = field(default_factory=dict)  # Hermes key -> the kernel key that wins
    problems: list[str] = field(default_factory=list)  # Hermes values the kernel cannot use, one line each
    deferred: dict[str, str] = field(default_factory=dict)  # kernel key -> error raised when it is needed


def _matches(pattern: str, key: str) -> bool:
    pat, parts = pattern.split("."), key.split(".")
    return len(pat) == len(parts) and all(p in ("*", k) for p, k in zip(pat, parts))


def _rule(key: str) -> Rule | None:
    return next((rule for rule in MAPPED if _matches(rule.hermes, key)), None)


def hermes_reason(key: str) -> str | None:
    """Why hermes-kernel does not use the Hermes Agent key ``key`` (itself or a section above it), else None."""
    parts = key.split(".")
    for cut in range(len(parts), 0, -1):
        reason = UNUSED.get(".".join(parts[:cut]))
        if reason is not None:
            return reason
    return None


def is_hermes_key(key: str) -> bool:
    """True for a key Hermes Agent writes: mapped or listed as unused."""
    return _rule(key) is not None or hermes_reason(key) is not None


def kernel_key_for(key: str) -> str | None:
    """The kernel key a mapped Hermes Agent key feeds (``agent.max_turns`` -> ``agent.max_iterations``)."""
    rule = _rule(key)
    if rule is None:
        return None
    if "*" not in rule.hermes:
        return rule.kernel
    parts, pat = key.split("."), rule.hermes.split(".")
    names = iter(k for p, k in zip(pat, parts) if p == "*")
    return ".".join(next(names) if part == "*" else part for part in rule.kernel.split("."))


def _usable(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def resolve_auto_provider(
    environ: Mapping[str, str], base_url: Any, credentials: Mapping[str, Any] | None = None
) -> tuple[str, str] | None:
    """(kernel provider, why) for Hermes Agent's ``provider: auto``, or None when nothing points anywhere.

    Hermes Agent's order: an OpenAI-style key first (its endpoint is
    model.base_url when set), then an Anthropic key (a config base_url is not
    applied to it), and a base URL alone is an OpenAI-compatible endpoint.
    """
    creds = credentials or {}
    if _usable(environ.get("OPENAI_API_KEY")) or creds.get("openai"):
        return "openai", "OPENAI_API_KEY" if _usable(environ.get("OPENAI_API_KEY")) else "credentials.openai"
    if _usable(environ.get("ANTHROPIC_API_KEY")) or creds.get("anthropic"):
        return "anthropic", "ANTHROPIC_API_KEY" if _usable(environ.get("ANTHROPIC_API_KEY")) else "credentials.anthropic"
    if _usable(base_url):
        return "openai", "model.base_url (an OpenAI-compatible endpoint)"
    return None


def _get(data: Mapping[str, Any], key: str) -> Any:
    node: Any = data
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _ABSENT
        node = node[part]
    return node


def _put(data: dict[str, Any], key: str, value: Any) -> None:
    *parents, leaf = key.split(".")
    node = data
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[leaf] = value


def _drop(data: dict[str, Any], key: str) -> None:
    *parents, leaf = key.split(".")
    trail: list[tuple[dict[str, Any], str]] = []
    node: Any = data
    for part in parents:
        if not isinstance(node.get(part), dict):
            return
        trail.append((node, part))
        node = node[part]
    node.pop(leaf, None)
    for parent, name in reversed(trail):  # a section left empty goes too
        if parent[name]:
            break
        parent.pop(name)


_ABSENT = object()


def translate(
    raw: Mapping[str, Any],
    schema: Any,
    *,
    environ: Mapping[str, str] | None = None,
    env_origin: Callable[[str], str] | None = None,
    where: str = "config.yaml",
) -> Translation:
    """Split ``raw`` (a config.yaml mapping of either dialect) into kernel data and notes.

    ``schema`` is the kernel's ConfigSchema; ``environ`` the merged .env and
    environment (read for ``provider: auto``), ``env_origin`` names where a
    variable came from. A kernel key is kept untouched and wins over the
    Hermes Agent key for the same setting.
    """
    env = environ or {}
    data: dict[str, Any] = copy.deepcopy(dict(raw))
    out = Translation(data)
    hermes_values: dict[str, tuple[str, Any]] = {}  # kernel key -> (Hermes key, value) of mapped keys
    if isinstance(raw.get("model"), str):  # Hermes Agent's short form: `model: NAME`
        data.pop("model")
        hermes_values["model.name"] = ("model", raw["model"])
    _walk(raw if not isinstance(raw.get("model"), str) else {k: v for k, v in raw.items() if k != "model"},
          "", schema, data, out, hermes_values)  # fmt: skip
    for kernel_key, (hermes_key, value) in hermes_values.items():
        _apply(kernel_key, hermes_key, value, raw, schema, out, where)
    _resolve_provider(raw, out, env, env_origin or (lambda name: "the environment"), where)
    return out


def _walk(node: Mapping[str, Any], prefix: str, schema: Any, data: dict[str, Any], out: Translation,
          hermes_values: dict[str, tuple[str, Any]]) -> None:  # fmt: skip
    for name, value in node.items():
        key = f"{prefix}{name}"
        rule = _rule(key)
        spec = schema.find(key)
        if rule is not None and (rule.kernel != key or rule.convert is not None):
            _drop(data, key)  # re-added below, converted, unless the kernel's own key is set
            target = kernel_key_for(key)
            assert target is not None
            if target == key or target.split(".")[0] == "credentials":
                if target in hermes_values:  # another Hermes key for it came first; the shared name wins
                    out.shadowed[hermes_values[target][0]] = target
                hermes_values[target] = (key, value)
            elif _get(data, target) is not _ABSENT or target in hermes_values:
                out.shadowed[key] = target
            else:
                hermes_values[target] = (key, value)
        elif spec is not None and not (spec.type == "map" and isinstance(value, Mapping)):
            # `plugins.enabled: [..]` is Hermes Agent's list, not an entry of the kernel's plugins.* map.
            if rule is None and hermes_reason(key) and _bad(spec, value):
                _drop(data, key)
                out.unused[key] = hermes_reason(key) or ""
        elif isinstance(value, Mapping) and (spec is not None or schema.is_section(key) or _has_rule_below(key)):
            _walk(value, key + ".", schema, data, out, hermes_values)
        elif spec is None and not schema.is_section(key) and schema.open_map_parent(key) is None and hermes_reason(key):
            _drop(data, key)
            out.unused[key] = hermes_reason(key) or ""
        elif isinstance(value, Mapping):
            _walk(value, key + ".", schema, data, out, hermes_values)
        # else: an unknown key; the kernel lists it as a possible typo


def _has_rule_below(key: str) -> bool:
    parts = key.split(".")
    return any(len(r.hermes.split(".")) > len(parts) and _matches(".".join(r.hermes.split(".")[:len(parts)]), key)
               for r in MAPPED)  # fmt: skip


def _bad(spec: Any, value: Any) -> bool:
    try:
        spec.check(value)
    except Exception:  # noqa: BLE001 - any refusal means "not a kernel value"
        return True
    return False


def _apply(kernel_key: str, hermes_key: str, value: Any, raw: Mapping[str, Any], schema: Any, out: Translation,
           where: str) -> None:  # fmt: skip
    rule = _rule(hermes_key) if hermes_key != "model" else Rule("model", "model.name")
    assert rule is not None
    if kernel_key.startswith("credentials."):
        return _apply_key(hermes_key, value, raw, out)
    try:
        converted = rule.convert(value) if rule.convert else value
    except _Skip:
        return
    spec = schema.find(kernel_key)
    if spec is not None and kernel_key != hermes_key:
        # A renamed key is Hermes Agent's alone: a bad value is one line, and the kernel default stays.
        # A shared name is the kernel's own key too, so the kernel's validation judges it (and may refuse).
        try:
            converted = spec.check(converted, key=kernel_key)
        except Exception as exc:  # noqa: BLE001 - ConfigError
            detail = str(exc).split(": ", 1)[-1]
            out.problems.append(
                f"{where}: Hermes Agent key {hermes_key}: {detail}; {kernel_key} keeps its default until you fix "
                f"it in the file or run `hermes config set {kernel_key} VALUE`"
            )
            return
    _put(out.data, kernel_key, converted)
    if kernel_key != hermes_key or converted != value:
        out.origins[kernel_key] = hermes_key


def _apply_key(hermes_key: str, value: Any, raw: Mapping[str, Any], out: Translation) -> None:
    """model.api_key becomes the main provider's key unless credentials.<provider> is set."""
    if not _usable(value) or str(value).startswith("${"):
        return
    provider = _get(out.data, "model.provider")
    provider = provider if isinstance(provider, str) and provider not in ("", "auto") else "openai"
    target = f"credentials.{provider}"
    if _get(out.data, target) not in (_ABSENT, [], None):
        out.shadowed[hermes_key] = target
        return
    _put(out.data, target, [str(value)])
    out.origins[target] = hermes_key


def _resolve_provider(raw: Mapping[str, Any], out: Translation, env: Mapping[str, str],
                      env_origin: Callable[[str], str], where: str) -> None:  # fmt: skip
    """``provider: auto`` (or a Hermes name meaning openrouter) becomes a kernel plugin name."""
    given = _get(raw, "model.provider")
    if not isinstance(given, str):
        return
    name = given.strip().lower()
    if name == "openrouter" and _get(out.data, "model.base_url") in (_ABSENT, None, ""):
        _put(out.data, "model.base_url", OPENROUTER_URL)
        out.origins["model.base_url"] = "model.provider (openrouter's endpoint)"
    if name != "auto":
        return
    base_url = _get(out.data, "model.base_url")
    creds = _get(out.data, "credentials")
    found = resolve_auto_provider(env, base_url if base_url is not _ABSENT else None,
                                  creds if isinstance(creds, Mapping) else None)  # fmt: skip
    if found is None:
        _put(out.data, "model.provider", "auto")
        out.deferred["model.provider"] = (
            f"{where}: model.provider is auto (a Hermes Agent setting) but no OPENAI_API_KEY, ANTHROPIC_API_KEY "
            "or model.base_url was found; set a key (`hermes config set ANTHROPIC_API_KEY KEY`) or choose a "
            "provider (`hermes config set model.provider anthropic`)"
        )
        return
    provider, why = found
    _put(out.data, "model.provider", provider)
    source = f"{why} in {env_origin(why)}" if why.isupper() else why
    out.origins["model.provider"] = f"model.provider (auto: {source})"
    if provider == "anthropic" and _get(out.data, "model.base_url") not in (_ABSENT, None):
        # Hermes Agent applies a config base_url to Anthropic only when the provider is named anthropic.
        _drop(out.data, "model.base_url")
        out.unused["model.base_url"] = "with provider auto it applies only to an OpenAI-compatible endpoint"


def render_markdown() -> str:
    """docs/hermes-agent-config.md's key table: each Hermes Agent key, its kernel key or why it is not used."""
    lines = ["| Hermes Agent key | hermes-kernel key | note |", "|---|---|---|",
             "| `model` (a name, not a section) | `model.name` | Hermes Agent's short form `model: NAME` |"]
    for rule in MAPPED:
        lines.append(f"| `{rule.hermes}` | `{rule.kernel}` | {rule.note} |")
    for key, reason in UNUSED.items():
        lines.append(f"| `{key}` | not used | {reason} |")  # an entry covers every key below it
    return "\n".join(lines) + "\n"
