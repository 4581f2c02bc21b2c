"""Import a Hermes provider folder as ``plugins.memory.<name>`` and get its provider instance."""

from __future__ import annotations

import importlib.util
import logging
import sys
from pathlib import Path
from typing import Any

from hermes.kernel.errors import PluginLoadError

from . import memory_provider
from .standins import ProviderScope

__all__ = ["import_provider", "read_manifest"]

log = logging.getLogger(__name__)

GROUP = "hermes.memory_providers"


def read_manifest(folder: Path) -> dict[str, Any]:
    """The folder's ``plugin.yaml`` (name, version, description, ...); {} when absent or unreadable."""
    path = folder / "plugin.yaml"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        log.warning("%s is not valid YAML; ignoring it", path)
        return {}
    return data if isinstance(data, dict) else {}


class _RegisterContext:
    """What ``register(ctx)`` receives: keeps the memory provider, ignores the rest with a note."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.provider: Any = None
        self.ignored: list[str] = []

    def register_memory_provider(self, provider: Any) -> None:
        self.provider = provider

    def __getattr__(self, attr: str) -> Any:
        if not attr.startswith("register_"):
            raise AttributeError(attr)

        def ignored(*args: Any, **kwargs: Any) -> None:
            self.ignored.append(attr)
            log.info("folder plugin %r: ctx.%s is not supported by hermes-kernel; ignored", self.name, attr)

        return ignored


def _first_subclass(module: Any) -> Any:
    """An instance of the module's first concrete Hermes MemoryProvider subclass (its own before imported ones)."""
    base = memory_provider.MemoryProvider
    found = [
        value for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, base) and value is not base
        and not getattr(value, "__abstractmethods__", None)
    ]  # fmt: skip
    found.sort(key=lambda cls: not cls.__module__.startswith(module.__name__))
    return found[0]() if found else None


def import_provider(folder: Path, scope: ProviderScope) -> Any:
    """Import ``folder`` as ``plugins.memory.<name>`` inside ``scope`` and return its provider instance.

    ``register(ctx)`` calling ``ctx.register_memory_provider(instance)`` wins;
    otherwise the first ``MemoryProvider`` subclass in the module is
    instantiated. Raises PluginLoadError when neither gives a provider.
    """
    name = folder.name
    module_name = f"plugins.memory.{name}"
    init = folder / "__init__.py"
    with scope.active():
        spec = importlib.util.spec_from_file_location(module_name, init, submodule_search_locations=[str(folder)])
        if spec is None or spec.loader is None:
            raise PluginLoadError(GROUP, name, f"cannot import {init}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module  # so the module can import itself (and its submodules) by that name
        setattr(sys.modules["plugins.memory"], name, module)
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(module_name, None)
            raise
        provider = None
        register = getattr(module, "register", None)
        if callable(register):
            ctx = _RegisterContext(name)
            register(ctx)
            provider = ctx.provider
        if provider is None:
            provider = _first_subclass(module)
    if provider is None:
        raise PluginLoadError(
            GROUP, name,
            f"{init} registers no memory provider: define register(ctx) calling ctx.register_memory_provider(...) "
            "or a subclass of agent.memory_provider.MemoryProvider",
        )  # fmt: skip
    return provider
