"""Memory providers and general plugins written for Hermes Agent, run unchanged on hermes-kernel.

A provider folder (``plugin.yaml`` + ``__init__.py``) in ``HERMES_HOME/plugins/``
is found by the plugin host and becomes a driver of ``hermes.memory_providers``;
loading that driver calls :func:`load_folder_provider`, whose class wraps the
provider in :class:`HermesProviderAdapter`. A general plugin folder (``plugin.yaml``
+ ``register(ctx)``) or ``hermes_agent.plugins`` entry point becomes a
``hermes.plugins`` listener through :func:`load_general_folder` /
:func:`load_general_entry_point`. :class:`MemoryProvider` is the
Hermes contract a provider subclasses (imported as ``agent.memory_provider``).
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import config_map
    from .adapter import HermesProviderAdapter, load_folder_provider
    from .general_plugins import load_general_entry_point, load_general_folder
    from .loader import import_provider, read_manifest
    from .memory_provider import MemoryProvider
    from .pypi_groups import memory_driver, model_driver
    from .standins import FeatureUnavailable, ProviderScope

__all__ = [
    "FeatureUnavailable",
    "HermesProviderAdapter",
    "MemoryProvider",
    "ProviderScope",
    "config_map",
    "import_provider",
    "load_folder_provider",
    "load_general_entry_point",
    "load_general_folder",
    "memory_driver",
    "model_driver",
    "read_manifest",
]

# Each name loads on first use: `hermes --help` imports `.import_cmd` (the `import` front-end)
# for its help line and must not pay for the adapter and the loader.
_LAZY = {
    "config_map": ".config_map",  # stdlib only: Hermes Agent's config.yaml keys
    **dict.fromkeys(["HermesProviderAdapter", "load_folder_provider"], ".adapter"),
    **dict.fromkeys(["import_provider", "read_manifest"], ".loader"),
    **dict.fromkeys(["load_general_entry_point", "load_general_folder"], ".general_plugins"),
    "MemoryProvider": ".memory_provider",
    **dict.fromkeys(["memory_driver", "model_driver"], ".pypi_groups"),
    **dict.fromkeys(["FeatureUnavailable", "ProviderScope"], ".standins"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = import_module(_LAZY[name], __name__)
    value = module if name == "config_map" else getattr(module, name)
    globals()[name] = value
    return value
