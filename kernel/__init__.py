"""hermes.kernel: hook specs, plugin host, contracts, config and the CLI.

Plugins import only what ``__all__`` names here.
"""

from typing import TYPE_CHECKING, Any

from ._version import __version__
from .errors import ConfigError, HermesError, PluginLoadError, PluginNotFoundError

__all__ = [
    "CARRY_OVER_KEY",
    "Agent",
    "AgentEvent",
    "ArgumentsError",
    "CanonicalUsage",
    "ClassifiedError",
    "Config",
    "ConfigError",
    "ConfigKey",
    "ContextEngine",
    "CostResult",
    "Credential",
    "CredentialPool",
    "CredentialStatus",
    "CredentialStrategy",
    "CredentialsExhaustedError",
    "HermesError",
    "HermesHome",
    "HookFailure",
    "IterationBudget",
    "LoadedPlugin",
    "MemoryManager",
    "MemoryProvider",
    "ModelClient",
    "ModelProvider",
    "ModelRoute",
    "ModelRequest",
    "ModelResponse",
    "NoCredentialsError",
    "PluginHost",
    "PluginInfo",
    "PluginLoadError",
    "PluginNotFoundError",
    "ProviderError",
    "RetryPolicy",
    "SearchHit",
    "SessionNotFoundError",
    "SessionStore",
    "StreamDelta",
    "StreamItem",
    "TENANT_SERVICE",
    "CLIENT_WRAPPER_SERVICE",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "ToolResult",
    "ToolSource",
    "Veto",
    "__version__",
    "active_home",
    "atomic_write",
    "classify_exception",
    "compute_cost",
    "decode_arguments",
    "estimate_tokens",
    "file_lock",
    "hookimpl",
    "hookspec",
    "load_config",
    "lock_file_for",
    "normalize_anthropic_usage",
    "normalize_openai_usage",
    "open_model_client",
    "resolve_home",
    "tools_from_plugin",
]

# Everything but what the command line needs loads on first use, so `hermes --help`
# pays for none of it (tests/test_startup.py).
_LAZY = {
    **dict.fromkeys(["Config", "load_config"], ".config"),
    "ConfigKey": ".config_schema",
    **dict.fromkeys(
        ["HermesHome", "active_home", "atomic_write", "file_lock", "lock_file_for", "resolve_home"], ".home"
    ),
    # pluggy loads with the first listener, not with the package (kernel/hook_manager.py).
    **dict.fromkeys(["hookimpl", "hookspec"], ".hookspecs"),
    **dict.fromkeys(["HookFailure", "LoadedPlugin", "PluginHost", "PluginInfo"], ".host"),
    **dict.fromkeys(
        ["CARRY_OVER_KEY", "CLIENT_WRAPPER_SERVICE", "TENANT_SERVICE", "Tool", "ToolContext", "ToolError", "ToolSource", "tools_from_plugin"], ".tools"
    ),
    **dict.fromkeys(["CanonicalUsage", "CostResult"], ".usage"),
    **dict.fromkeys(["ToolCall", "ToolRegistry", "ToolResult"], ".tool_registry"),
    **dict.fromkeys(["Agent", "AgentEvent", "ModelRoute"], ".agent"),
    **dict.fromkeys(["ArgumentsError", "decode_arguments"], ".arguments"),
    "IterationBudget": ".budget",
    "Veto": ".veto",
    "ContextEngine": ".context_engine",
    "estimate_tokens": ".context_engine",
    "MemoryProvider": ".memory_provider",
    "MemoryManager": ".memory",
    **dict.fromkeys(
        ["Credential", "CredentialPool", "CredentialStatus", "CredentialStrategy",
         "CredentialsExhaustedError", "NoCredentialsError"],
        ".credentials",
    ),
    **dict.fromkeys(
        ["ClassifiedError", "ModelProvider", "ModelRequest", "ModelResponse", "ProviderError", "StreamDelta",
         "StreamItem", "classify_exception", "compute_cost", "normalize_anthropic_usage", "normalize_openai_usage"],
        ".providers",
    ),
    "ModelClient": ".providers.client",
    "open_model_client": ".providers.client",
    "RetryPolicy": ".providers.retry",
    # The session store: `hermes --help` never pays for sqlite3.
    **dict.fromkeys(["SearchHit", "SessionNotFoundError", "SessionStore"], ".store"),
}

if TYPE_CHECKING:
    from .config import Config, load_config
    from .config_schema import ConfigKey
    from .home import HermesHome, active_home, atomic_write, file_lock, lock_file_for, resolve_home
    from .hookspecs import hookimpl, hookspec
    from .host import HookFailure, LoadedPlugin, PluginHost, PluginInfo
    from .agent import Agent, AgentEvent, ModelRoute
    from .arguments import ArgumentsError, decode_arguments
    from .budget import IterationBudget
    from .context_engine import ContextEngine, estimate_tokens
    from .memory import MemoryManager
    from .memory_provider import MemoryProvider
    from .tool_registry import ToolCall, ToolRegistry, ToolResult
    from .tools import CARRY_OVER_KEY, CLIENT_WRAPPER_SERVICE, TENANT_SERVICE, Tool, ToolContext, ToolError, ToolSource, tools_from_plugin
    from .usage import CanonicalUsage, CostResult
    from .veto import Veto
    from .credentials import (
        Credential,
        CredentialPool,
        CredentialStatus,
        CredentialStrategy,
        CredentialsExhaustedError,
        NoCredentialsError,
    )
    from .providers import (
        ClassifiedError,
        ModelProvider,
        ModelRequest,
        ModelResponse,
        ProviderError,
        StreamDelta,
        StreamItem,
        classify_exception,
        compute_cost,
        normalize_anthropic_usage,
        normalize_openai_usage,
    )
    from .providers.client import ModelClient, open_model_client
    from .providers.retry import RetryPolicy
    from .store import SearchHit, SessionNotFoundError, SessionStore


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
