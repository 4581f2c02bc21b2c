"""hermes.kernel: hook specs, plugin host, contracts, config and the CLI.

Plugins import only what ``__all__`` names here.
"""

from ._version import __version__
from .config import Config, load_config
from .errors import ConfigError, HermesError, PluginLoadError, PluginNotFoundError
from .home import HermesHome, atomic_write, resolve_home
from .hookspecs import hookimpl, hookspec
from .host import HookFailure, LoadedPlugin, PluginHost, PluginInfo
from .tools import Tool, ToolContext, tools_from_plugin
from .usage import CanonicalUsage, CostResult

__all__ = [
    "CanonicalUsage",
    "Config",
    "ConfigError",
    "CostResult",
    "HermesError",
    "HermesHome",
    "HookFailure",
    "LoadedPlugin",
    "PluginHost",
    "PluginInfo",
    "PluginLoadError",
    "PluginNotFoundError",
    "Tool",
    "ToolContext",
    "__version__",
    "atomic_write",
    "hookimpl",
    "hookspec",
    "load_config",
    "resolve_home",
    "tools_from_plugin",
]
