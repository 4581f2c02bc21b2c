"""Memory providers written for Hermes Agent, run unchanged on hermes-kernel.

A provider folder (``plugin.yaml`` + ``__init__.py``) in ``HERMES_HOME/plugins/``
is found by the plugin host and becomes a driver of ``hermes.memory_providers``;
loading that driver calls :func:`load_folder_provider`, whose class wraps the
provider in :class:`HermesProviderAdapter`. :class:`MemoryProvider` is the
Hermes contract a provider subclasses (imported as ``agent.memory_provider``).
"""

from . import config_map  # stdlib only: Hermes Agent's config.yaml keys (imported by the kernel when a file needs it)
from .adapter import HermesProviderAdapter, load_folder_provider
from .loader import import_provider, read_manifest
from .memory_provider import MemoryProvider
from .standins import FeatureUnavailable, ProviderScope

__all__ = [
    "FeatureUnavailable",
    "HermesProviderAdapter",
    "MemoryProvider",
    "ProviderScope",
    "config_map",
    "import_provider",
    "load_folder_provider",
    "read_manifest",
]
