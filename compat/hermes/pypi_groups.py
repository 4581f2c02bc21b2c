"""Packages published for Hermes Agent, read from their entry points as kernel drivers.

Published packages declare providers in groups Hermes Agent 0.19.0 does not
read yet (``hermes_agent.memory_providers``, ``hermes_agent.model_providers``),
and some put a Hermes-format class into the kernel's own
``hermes.memory_providers``. What such an entry point names comes in four
shapes, all seen on PyPI: a provider class, a provider instance, a
``register(ctx)`` function, or a module holding either. Each is turned into a
kernel driver class here; a kernel-native class passes through untouched.

* memory: :func:`memory_driver` gives a :class:`~hermes.compat.hermes.adapter.HermesProviderAdapter`
  subclass whose construction builds the provider inside its
  :class:`~hermes.compat.hermes.standins.ProviderScope` (so ``agent.memory_provider``
  and the other host modules it imports exist).
* models: :func:`model_driver` reads the ``ProviderProfile`` that ``register()``
  hands to ``providers.register_provider`` and gives a subclass of the kernel's
  built-in driver for the profile's wire (``openai`` or ``anthropic``) with the
  profile's base URL, key variable and default model.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from hermes.kernel.errors import PluginLoadError
from hermes.kernel.home import HermesHome, active_home
from hermes.kernel.memory_provider import MemoryProvider as KernelMemoryProvider
from hermes.kernel.providers.base import ModelProvider

from .adapter import HermesProviderAdapter
from .loader import _first_subclass, _RegisterContext
from .standins import OWNED_ROOTS, ProviderScope

__all__ = ["MEMORY_GROUP", "MODEL_GROUP", "ProviderProfile", "memory_driver", "model_driver"]

MEMORY_GROUP = "hermes.memory_providers"
MODEL_GROUP = "hermes.model_providers"
_VALUE = re.compile(r"^\s*(?P<module>[\w.]+)\s*(?::\s*(?P<attr>[\w.]+)\s*)?(?:\[[^\]]*\]\s*)?$")
#: The kernel driver each Hermes ``api_mode`` speaks through (facts from Hermes Agent's providers/base.py).
_WIRES = {"chat_completions": "openai", "anthropic_messages": "anthropic"}


def _resolve(value: str, group: str, name: str) -> Any:
    """Import what the entry point ``value`` names (``module`` or ``module:attr.sub``)."""
    match = _VALUE.match(value)
    if match is None:
        raise PluginLoadError(group, name, f"entry point value {value!r} is malformed")
    obj: Any = importlib.import_module(match["module"])
    for part in match["attr"].split(".") if match["attr"] else ():
        obj = getattr(obj, part)
    return obj


def _identifier(name: str) -> str:
    return re.sub(r"\W", "_", name)


def _hermes_style(obj: Any) -> bool:
    """A Hermes-format provider class or instance: it has the Hermes contract's methods."""
    return all(callable(getattr(obj, m, None)) for m in ("initialize", "get_tool_schemas", "handle_tool_call"))


def _kernel_native(obj: Any) -> bool:
    return (isinstance(obj, type) and issubclass(obj, KernelMemoryProvider)) or isinstance(obj, KernelMemoryProvider)


def _provider_from(obj: Any, name: str) -> Any:
    """A Hermes provider instance from any of the four shapes (call inside the provider's scope)."""
    if isinstance(obj, type):
        return obj()
    if isinstance(obj, ModuleType):
        register = getattr(obj, "register", None)
        if callable(register):
            obj = register
        else:
            found = _first_subclass(obj)
            if found is not None:
                return found
            raise PluginLoadError(MEMORY_GROUP, name, f"module {obj.__name__} has neither register(ctx) nor a MemoryProvider subclass")
    if _hermes_style(obj):
        return obj
    if callable(obj):
        ctx = _RegisterContext(name)
        result = obj(ctx)
        provider = ctx.provider if ctx.provider is not None else result
        if provider is not None and _hermes_style(provider):
            return provider
        raise PluginLoadError(MEMORY_GROUP, name, "register(ctx) did not call ctx.register_memory_provider(...)")
    raise PluginLoadError(MEMORY_GROUP, name, f"{type(obj).__name__} is neither a memory provider nor register(ctx)")


class _EntryProviderAdapter(HermesProviderAdapter):
    """A Hermes provider from an installed package's entry point (no folder)."""

    entry_value: str = ""
    distribution: str = ""

    def __init__(self, inner: Any = None, *, home: HermesHome | None = None) -> None:
        self.scope = ProviderScope(home or active_home())
        if inner is None:
            try:
                with self.scope.active():
                    inner = _provider_from(_resolve(self.entry_value, MEMORY_GROUP, self.name), self.name)
            except PluginLoadError:
                raise
            except Exception as exc:  # its code failed to import or to construct: one clear line
                text = " ".join(str(exc).split())[:300]
                raise PluginLoadError(MEMORY_GROUP, self.name, f"{type(exc).__name__}: {text} (from {self.distribution})") from exc
        self.inner = inner

    def describe(self, hermes_home: Any, config: Any) -> dict[str, Any]:
        return {"summary": f"Hermes Agent provider {self.entry_value} from the package {self.distribution}"}


def memory_driver(value: str, name: str, distribution: str) -> Any:
    """The kernel driver class for memory entry point ``name = value`` of ``distribution``.

    A kernel-native class or instance (and an object of neither kind, which the
    memory manager refuses by name) is returned as it is; anything written for
    Hermes Agent is wrapped. The module is imported here (inside a provider scope, as
    Hermes-format modules import host modules at their top); the provider
    itself is built when the driver is instantiated.
    """
    # An import that fails is the host's to record, like any entry point's (``ModuleNotFoundError: ...``).
    try:  # a kernel-native module imports as it is, outside any scope
        obj = _resolve(value, MEMORY_GROUP, name)
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] not in OWNED_ROOTS:
            raise
        with ProviderScope(active_home()).active():  # it imports Hermes Agent's host modules
            obj = _resolve(value, MEMORY_GROUP, name)
    if _kernel_native(obj) or not (_hermes_style(obj) or inspect.ismodule(obj) or inspect.isfunction(obj)):
        return obj  # the kernel's own contract, or a wrong type its memory manager names
    attrs = {"entry_value": value, "distribution": distribution, "name": name, "manifest": {}, "__module__": __name__}
    return type("HermesEntry_" + _identifier(name), (_EntryProviderAdapter,), attrs)


# --- model providers --------------------------------------------------------------------


class ProviderProfile:
    """Hermes Agent's provider description, as ``providers.base.ProviderProfile`` offers it to plugins.

    The fields the kernel uses are attributes; every other keyword a profile
    passes is kept in ``extra``.
    """

    def __init__(self, name: str, **kwargs: Any) -> None:
        self.name = name
        self.api_mode: str = kwargs.pop("api_mode", None) or "chat_completions"
        self.aliases: tuple[str, ...] = tuple(kwargs.pop("aliases", None) or ())
        self.display_name: str = kwargs.pop("display_name", None) or ""
        self.env_vars: tuple[str, ...] = tuple(kwargs.pop("env_vars", None) or ())
        self.base_url: str = kwargs.pop("base_url", None) or ""
        self.fallback_models: tuple[str, ...] = tuple(kwargs.pop("fallback_models", None) or ())
        self.extra: dict[str, Any] = kwargs

    def __repr__(self) -> str:
        return f"ProviderProfile(name={self.name!r}, api_mode={self.api_mode!r}, base_url={self.base_url!r})"


_profiles_lock = threading.Lock()


@contextmanager
def _providers_module(found: list[ProviderProfile]) -> Iterator[None]:
    """``providers`` and ``providers.base`` importable for the duration, collecting registrations."""
    package = ModuleType("providers", "Hermes Agent's provider registry, as a plugin sees it (hermes-kernel).")
    package.__path__ = []  # type: ignore[attr-defined]
    base = ModuleType("providers.base")
    base.ProviderProfile = ProviderProfile  # type: ignore[attr-defined]
    package.base = base  # type: ignore[attr-defined]
    package.ProviderProfile = ProviderProfile  # type: ignore[attr-defined]
    package.register_provider = found.append  # type: ignore[attr-defined]
    saved = {k: sys.modules.get(k) for k in ("providers", "providers.base")}
    with _profiles_lock:
        sys.modules.update({"providers": package, "providers.base": base})
        try:
            yield
        finally:
            for key, module in saved.items():
                if module is None:
                    sys.modules.pop(key, None)
                else:
                    sys.modules[key] = module


def _profile_of(value: str, name: str, distribution: str) -> ProviderProfile:
    found: list[ProviderProfile] = []
    try:
        with _providers_module(found):
            obj = _resolve(value, MODEL_GROUP, name)
            if isinstance(obj, ModuleType) and callable(getattr(obj, "register", None)):
                obj = obj.register
            if isinstance(obj, ProviderProfile):
                found.append(obj)
            elif callable(obj) and not isinstance(obj, type):
                params = inspect.signature(obj).parameters
                result = obj(_RegisterContext(name)) if params else obj()
                if isinstance(result, ProviderProfile):
                    found.append(result)
    except PluginLoadError:
        raise
    except Exception as exc:
        text = " ".join(str(exc).split())[:300]
        raise PluginLoadError(MODEL_GROUP, name, f"{type(exc).__name__}: {text} (from {distribution})") from exc
    if not found:
        raise PluginLoadError(MODEL_GROUP, name, f"{value} registered no ProviderProfile (from {distribution})")
    return next((p for p in found if p.name == name or name in p.aliases), found[-1])


def _env_names(profile: ProviderProfile) -> tuple[str | None, str | None]:
    """The profile's key variable and base-URL variable, from its ``env_vars``."""
    urls = [v for v in profile.env_vars if v.upper().endswith(("BASE_URL", "_URL"))]
    keys = [v for v in profile.env_vars if v not in urls]
    return (keys[0] if keys else None), (urls[0] if urls else None)


def model_driver(value: str, name: str, distribution: str) -> type[ModelProvider]:
    """The kernel driver class for model entry point ``name = value`` (a Hermes provider profile)."""
    from hermes.kernel.host import PluginHost

    try:
        obj = _resolve(value, MODEL_GROUP, name)
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] != "providers":
            raise  # recorded by the host like any entry point's import error
        obj = None  # a Hermes module importing ``providers`` at its top: read as a profile below
    if isinstance(obj, type) and issubclass(obj, ModelProvider):
        return obj
    profile = _profile_of(value, name, distribution)
    wire = _WIRES.get(profile.api_mode)
    if wire is None:
        raise PluginLoadError(
            MODEL_GROUP, name,
            f"api_mode {profile.api_mode!r} of {distribution} is not supported by hermes-kernel "
            f"(supported: {', '.join(sorted(_WIRES))})",
        )  # fmt: skip
    base = PluginHost(load_plugins="").load(MODEL_GROUP, wire)
    key_var, url_var = _env_names(profile)
    attrs: dict[str, Any] = {
        "name": name,
        "env_key": key_var or base.env_key,
        "env_base_url": url_var,
        "default_model": profile.fallback_models[0] if profile.fallback_models else base.default_model,
        "profile": profile,
        "__module__": __name__,
        "__doc__": f"{profile.display_name or name} (a Hermes Agent provider profile from {distribution}).",
    }
    cls = type("HermesProfile_" + _identifier(name), (base,), attrs)
    default_url = profile.base_url

    def __init__(self: Any, **kwargs: Any) -> None:
        if not kwargs.get("base_url"):
            kwargs["base_url"] = default_url or None
        base.__init__(self, **kwargs)

    cls.__init__ = __init__  # type: ignore[misc]
    return cls
