"""The plugin host: one pluggy PluginManager plus stevedore managers per slot.

Two mechanisms, one rule each (ARCHITECTURE.md §2):

* stevedore loads *named implementations* from the slot groups
  (``hermes.context_engines``, ``hermes.model_providers``, ...);
* pluggy carries *lifecycle hooks* to every listener: the ``hermes.plugins``
  modules and any live object registered with :meth:`PluginHost.register`.

Discovery goes through one index of installed entry points, filtered by
``HERMES_LOAD_PLUGINS`` and ``plugins.disabled``, so a plugin that is not
allowed is invisible to both mechanisms. Built-ins are the entry points of
the ``hermes-kernel`` distribution itself and are always allowed unless
disabled.
"""

from __future__ import annotations

import functools
import os
import re
from collections import deque
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .entry_index import EntryRecord, installed_entry_points
from .errors import HermesError, PluginLoadError, PluginNotFoundError
from .folder_plugins import (
    AGENT_PLUGINS_GROUP,
    FOLDER_GROUP,
    HERMES_AGENT_GROUPS,
    AgentEntryPoint,
    HermesPackageEntry,
    scan_folders,
    scan_general_folders,
)
from .lazy_log import LazyLogger

if TYPE_CHECKING:
    from .config import Config
    from .hook_manager import HookManager

__all__ = [
    "BUILTIN_DISTRIBUTION",
    "COMMANDS_GROUP",
    "GROUPS",
    "PLUGINS_GROUP",
    "SLOT_GROUPS",
    "FOLDER_GROUP",
    "HookFailure",
    "HookMismatch",
    "LoadedPlugin",
    "PluginHost",
    "PluginInfo",
    "normalize_dist_name",
]

log = LazyLogger(__name__)

BUILTIN_DISTRIBUTION = "hermes-kernel"
PLUGINS_GROUP = "hermes.plugins"
SLOT_GROUPS = (
    "hermes.context_engines",
    "hermes.memory_providers",
    "hermes.model_providers",
    "hermes.credential_strategies",
    "hermes.tools",
    "hermes.skills",
    "hermes.session_stores",
)
#: Front-ends: typer command groups the root CLI lists beside its built-in commands.
COMMANDS_GROUP = "hermes.commands"
GROUPS = (*SLOT_GROUPS, COMMANDS_GROUP, PLUGINS_GROUP)

_USE_ENVIRONMENT: Any = object()
_MAX_HOOK_FAILURES = 200


def normalize_dist_name(name: str) -> str:
    """PEP 503 normalisation, so ``Hermes_Hello`` and ``hermes-hello`` match."""
    return re.sub(r"[-_.]+", "-", name).lower()


class PluginInfo(NamedTuple):
    """One installed entry point in a hermes group, as ``hermes plugin list`` shows it."""

    group: str
    name: str
    value: str
    distribution: str
    version: str
    builtin: bool
    enabled: bool
    error: str | None = None
    #: ``builtin``, ``package`` (a pip-installed distribution) or ``folder`` (HERMES_HOME/plugins/<name>/).
    kind: str = "package"

    def as_dict(self) -> dict[str, Any]:
        return self._asdict()


class LoadedPlugin(NamedTuple):
    """A loaded entry point: its name, distribution and the object it names."""

    name: str
    distribution: str
    obj: Any


class HookFailure(NamedTuple):
    """An implementation that raised during a hook call."""

    hook: str
    plugin: str
    error: str

    def as_dict(self) -> dict[str, Any]:
        return self._asdict()


class HookMismatch(NamedTuple):
    """A hook implementation whose signature does not match its spec (skipped, not fatal)."""

    plugin: str
    hook: str
    mismatch: str

    def as_dict(self) -> dict[str, Any]:
        return self._asdict()


class _Entry:
    """An installed entry point as the host's index holds it (see :mod:`.entry_index`)."""

    kind = "package"

    def __init__(self, record: EntryRecord) -> None:
        self.record = record
        self.name, self.group, self.value = record.name, record.group, record.value
        self.distribution, self.version = record.distribution, record.version

    def load(self) -> Any:
        return self.record.load()

    @functools.cached_property
    def entry_point(self) -> Any:
        """An ``importlib.metadata.EntryPoint`` for stevedore's managers, made only when one loads."""
        import importlib.metadata as metadata

        return metadata.EntryPoint(self.name, self.value, self.group)


def _describe(exc: BaseException, limit: int = 300) -> str:
    """One line: the exception type and its message, lines joined, length capped."""
    text = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _scan_entry_points() -> dict[str, list[_Entry]]:
    """Every entry point in a hermes group, once each, from the per-installation index."""
    found: dict[str, list[_Entry]] = {group: [] for group in (*GROUPS, AGENT_PLUGINS_GROUP)}
    hermes_agent = []
    for record in installed_entry_points():
        if record.group == FOLDER_GROUP and normalize_dist_name(record.distribution) != BUILTIN_DISTRIBUTION:
            found[FOLDER_GROUP].append(HermesPackageEntry(record, FOLDER_GROUP))  # type: ignore[arg-type]
        elif record.group in found:
            found[record.group].append(_Entry(record))
        elif record.group in HERMES_AGENT_GROUPS:
            hermes_agent.append(record)
    # Packages written for Hermes Agent: drivers of the slot their group feeds; the kernel's group wins a name.
    for record in hermes_agent:
        slot = HERMES_AGENT_GROUPS[record.group]
        if all(e.name != record.name for e in found[slot]):
            found[slot].append(HermesPackageEntry(record, slot))  # type: ignore[arg-type]
    return found


#: Where pluggy's HookimplMarker keeps its options (``hookspecs.PROJECT_NAME + "_impl"``; a
#: test checks): spelled out so that reading it does not import pluggy.
_IMPL_ATTR = "hermes_impl"


def _inherit_hookimpl_markers(obj: object) -> None:
    """Mark overriding methods as hookimpls when the method they override was one."""
    cls = type(obj)
    for name in dir(cls):
        own = getattr(cls, name, None)
        if not callable(own) or hasattr(own, _IMPL_ATTR):
            continue
        for base in cls.__mro__[1:]:
            inherited = vars(base).get(name)
            if inherited is not None:
                options = getattr(inherited, _IMPL_ATTR, None)
                if options is not None:
                    setattr(own, _IMPL_ATTR, dict(options))
                break


class PluginHost:
    """Owns the hook manager and the slot managers of one hermes process.

    :param load_plugins: which third-party distributions may load: None for
        all, ``""`` for none, ``"a,b"`` for those. Defaults to the
        ``HERMES_LOAD_PLUGINS`` environment variable (unset: all).
    :param disabled: entry-point or distribution names from ``plugins.disabled``.
    :param plugin_dirs: folders whose ``<name>/`` sub-folders holding a Hermes-format
        memory provider become drivers of ``hermes.memory_providers`` (or a
        callable giving them, asked when the index is first needed). A folder's
        name counts as its distribution name for ``HERMES_LOAD_PLUGINS``.
    """

    def __init__(
        self,
        *,
        load_plugins: str | None = _USE_ENVIRONMENT,
        disabled: Collection[str] = (),
        plugin_dirs: Sequence[Path] | Callable[[], Sequence[Path]] = (),
    ) -> None:
        if load_plugins is _USE_ENVIRONMENT:
            load_plugins = os.environ.get("HERMES_LOAD_PLUGINS")
        self._allowed_dists: frozenset[str] | None = (
            None
            if load_plugins is None
            else frozenset(
                normalize_dist_name(n) for n in load_plugins.split(",") if n.strip()
            )
        )
        self._disabled = frozenset(disabled)
        self._plugin_dirs = plugin_dirs
        self._index: dict[str, list[_Entry]] | None = None
        self._plugins_loaded = False
        self.load_failures: dict[tuple[str, str], str] = {}
        self.hook_failures: deque[HookFailure] = deque(maxlen=_MAX_HOOK_FAILURES)
        #: Hook implementations skipped because their signature does not match the spec.
        self.hook_mismatches: list[HookMismatch] = []
        self._pm: HookManager | None = None
        self._listeners: dict[str, tuple[int, tuple[Any, ...]]] = {}  # hook -> (pm.generation, listeners)

    @property
    def pm(self) -> HookManager:
        """The pluggy manager, made (and pluggy imported) the first time anything needs it."""
        if self._pm is None:
            from .hook_manager import HookManager

            def mismatch(plugin: str, hook: str, why: str) -> None:
                self.hook_mismatches.append(HookMismatch(plugin, hook, why))

            self._pm = HookManager(mismatch)
        return self._pm

    @classmethod
    def from_config(cls, config: Config) -> PluginHost:
        """A host honouring ``plugins.disabled`` and ``HERMES_LOAD_PLUGINS``."""
        return cls(disabled=config.disabled_plugins)

    # --- discovery --------------------------------------------------------------

    def _entries(self, group: str) -> list[_Entry]:
        if group not in GROUPS:
            raise HermesError(f"unknown entry-point group {group!r}; known: {', '.join(GROUPS)}")
        if self._index is None:
            index = _scan_entry_points()
            dirs = self._plugin_dirs() if callable(self._plugin_dirs) else self._plugin_dirs
            # One discovery path: a provider folder is one more driver of the memory slot.
            taken = {e.name for e in index[FOLDER_GROUP]}
            index[FOLDER_GROUP] = index[FOLDER_GROUP] + scan_folders(dirs, taken)  # type: ignore[operator]
            # Hermes Agent's general plugins listen like any hermes.plugins module.
            agent = [AgentEntryPoint(e.record) for e in index.pop(AGENT_PLUGINS_GROUP, [])]
            taken = {e.name for e in index[PLUGINS_GROUP]}
            agent = [e for e in agent if e.name not in taken]
            taken |= {e.name for e in agent}
            index[PLUGINS_GROUP] = index[PLUGINS_GROUP] + agent + scan_general_folders(dirs, taken)  # type: ignore[operator]
            self._index = index
        return self._index[group]

    def refresh(self) -> None:
        """Forget the entry-point index (after a ``pip install`` in this process)."""
        import importlib

        importlib.invalidate_caches()
        self._index = None

    def is_builtin(self, entry: _Entry) -> bool:
        return normalize_dist_name(entry.distribution) == BUILTIN_DISTRIBUTION

    def _permitted(self, entry: _Entry) -> bool:
        """Allowed by HERMES_LOAD_PLUGINS (built-ins always are)."""
        if self.is_builtin(entry) or self._allowed_dists is None:
            return True
        return normalize_dist_name(entry.distribution) in self._allowed_dists

    def is_disabled(self, entry: _Entry) -> bool:
        return (
            entry.name in self._disabled
            or entry.distribution in self._disabled
            or normalize_dist_name(entry.distribution) in self._disabled
        )

    def _allowed(self, entry: _Entry) -> bool:
        return self._permitted(entry) and not self.is_disabled(entry)

    def available(self, group: str) -> list[str]:
        """Names that can be loaded from ``group`` right now."""
        return sorted({e.name for e in self._entries(group) if self._allowed(e)})

    def installed(
        self,
        group: str | None = None,
        *,
        include_builtin: bool = True,
        check: bool = False,
        everything: bool = False,
    ) -> list[PluginInfo]:
        """Every permitted entry point per group, with distribution and version.

        With ``check``, each slot entry point is imported to surface load
        errors (``hermes.plugins`` errors are recorded by :meth:`load_plugins`).
        With ``everything``, entry points excluded by HERMES_LOAD_PLUGINS are
        listed too (for commands that manage installs, not for loading).
        """
        rows = []
        for grp in [group] if group else GROUPS:
            for entry in self._entries(grp):
                builtin = self.is_builtin(entry)
                if not (everything or self._permitted(entry)) or (builtin and not include_builtin):
                    continue
                enabled = not self.is_disabled(entry)
                if check and enabled and grp != PLUGINS_GROUP:
                    self._try_load(entry)
                rows.append(
                    PluginInfo(
                        group=grp,
                        name=entry.name,
                        value=entry.value,
                        distribution=entry.distribution,
                        version=entry.version,
                        builtin=builtin,
                        enabled=enabled,
                        error=self.load_failures.get((grp, entry.name)),
                        kind="builtin" if builtin else entry.kind,
                    )
                )
        return sorted(rows, key=lambda r: (r.group, r.name, r.distribution))

    def _try_load(self, entry: _Entry) -> Any:
        try:
            return entry.load()
        except Exception as exc:  # a broken optional plugin is recorded, never fatal
            self._record_load_failure(entry.group, entry.name, exc)
            return None

    def _record_load_failure(self, group: str, name: str, exc: BaseException) -> None:
        reason = _describe(exc)
        self.load_failures[(group, name)] = reason
        log.warning("could not load %s plugin %r: %s", group, name, reason)
        log.debug("load failure of %s:%s", group, name, exc_info=exc)

    # --- slots (stevedore) ------------------------------------------------------

    def _manager_class(self, base: type) -> type:
        host = self

        class _Filtered(base):  # type: ignore[misc, valid-type]
            # Discovery from the host's filtered index instead of stevedore's
            # process-wide cache, so HERMES_LOAD_PLUGINS, plugins.disabled and a
            # pip install earlier in this process are all honoured.
            def list_entry_points(self) -> list[Any]:
                return [e.entry_point for e in host._entries(self.namespace) if host._allowed(e)]

        return _Filtered

    def _on_load_failure(self, manager: Any, ep: Any, exc: BaseException) -> None:
        self._record_load_failure(manager.namespace, ep.name, exc)

    def driver(self, group: str, name: str) -> Any:
        """Load the one implementation ``name`` of slot ``group`` (the class or object).

        Raises PluginNotFoundError (naming the group, the name and the names
        available) or PluginLoadError when it exists but fails to import.
        """
        from stevedore import driver as sd_driver
        from stevedore.exception import MultipleMatches, NoMatches

        if name not in self.available(group):
            raise PluginNotFoundError(group, name, self.available(group))
        self.load_failures.pop((group, name), None)
        try:
            manager = self._manager_class(sd_driver.DriverManager)(
                group, name, on_load_failure_callback=self._on_load_failure
            )
        except NoMatches:  # ``name`` is available, so its import failed and _on_load_failure recorded why
            raise PluginLoadError(group, name, self.load_failures[(group, name)]) from None
        except MultipleMatches:
            dists = sorted(e.distribution for e in self._entries(group) if e.name == name)
            raise PluginLoadError(
                group, name, f"installed by several distributions ({', '.join(dists)}); remove one"
            ) from None
        return manager.driver

    def load(self, group: str, name: str) -> Any:
        """Import the allowed entry point ``name`` of ``group`` directly, without stevedore.

        Cheap enough for ``hermes --help``. Raises PluginNotFoundError, or
        PluginLoadError naming the distribution (the reason is also recorded in
        :attr:`load_failures`).
        """
        entries = [e for e in self._entries(group) if e.name == name and self._allowed(e)]
        if not entries:
            raise PluginNotFoundError(group, name, self.available(group))
        if len(entries) > 1:
            dists = ", ".join(sorted(e.distribution for e in entries))
            raise PluginLoadError(group, name, f"installed by several distributions ({dists}); remove one")
        try:
            obj = entries[0].load()
        except Exception as exc:  # a broken plugin: one line for the caller, the trace in the debug log
            self.load_failures[(group, name)] = reason = _describe(exc)
            log.debug("load failure of %s:%s", group, name, exc_info=exc)
            raise PluginLoadError(group, name, f"{reason} (from {entries[0].distribution or 'an unknown distribution'})") from None
        self.load_failures.pop((group, name), None)
        return obj

    def implementations(self, group: str) -> list[tuple[str, Any]]:
        """Every allowed implementation of ``group``, imported; one that fails is recorded and skipped."""
        found = []
        for entry in self._entries(group):
            if self._allowed(entry):
                obj = self._try_load(entry)
                if obj is not None:
                    found.append((entry.name, obj))
        return found

    def extensions(self, group: str, names: Iterable[str] | None = None) -> list[LoadedPlugin]:
        """Load every allowed implementation in ``group``, or only ``names`` in that order.

        Broken ones are recorded in :attr:`load_failures` and skipped; unknown
        ``names`` raise PluginNotFoundError.
        """
        from stevedore import extension as sd_extension
        from stevedore import named as sd_named

        if names is None:
            manager = self._manager_class(sd_extension.ExtensionManager)(
                group, on_load_failure_callback=self._on_load_failure
            )
        else:
            wanted = list(names)
            available = self.available(group)
            for name in wanted:
                if name not in available:
                    raise PluginNotFoundError(group, name, available)
            manager = self._manager_class(sd_named.NamedExtensionManager)(
                group,
                names=wanted,
                name_order=True,
                on_load_failure_callback=self._on_load_failure,
            )
        dists = {e.name: e.distribution for e in self._entries(group)}
        return [LoadedPlugin(ext.name, dists[ext.name], ext.plugin) for ext in manager]

    # --- hooks (pluggy) -----------------------------------------------------------

    def load_plugins(self) -> None:
        """Register every allowed ``hermes.plugins`` module; idempotent.

        A module that fails to import or to register is recorded and skipped.
        """
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        for entry in self._entries(PLUGINS_GROUP):
            if not self._allowed(entry) or (self._pm is not None and self._pm.has_plugin(entry.name)):
                continue
            obj = self._try_load(entry)
            if obj is None:
                continue
            before = len(self.hook_mismatches)
            try:
                self.pm.register(obj, name=entry.name)
            except Exception as exc:  # e.g. a wrapper that is not a generator
                self._record_load_failure(PLUGINS_GROUP, entry.name, exc)
                continue
            skipped = [f"hook {m.hook} skipped: {m.mismatch}" for m in self.hook_mismatches[before:]]
            # A Hermes Agent plugin that loaded but lost a part (an unknown hook, a taken tool name).
            skipped += [str(n) for n in getattr(obj, "hermes_load_notes", None) or ()]
            if skipped:  # shown by `hermes plugin list` and `hermes doctor`
                self.load_failures[(PLUGINS_GROUP, entry.name)] = "; ".join(skipped)

    def register(self, obj: object, name: str | None = None) -> str:
        """Make a live object (active engine, memory provider, ...) a hook listener.

        A method that overrides a base-class ``@hookimpl`` stays a listener even
        without repeating the decorator: a contract (ContextEngine,
        MemoryProvider) promises that overriding a lifecycle method is enough.
        """
        _inherit_hookimpl_markers(obj)
        try:
            registered = self.pm.register(obj, name=name)
        except ValueError:  # pluggy: that name or object is already registered
            registered = None
        if registered is None:
            raise HermesError(f"plugin {name or type(obj).__name__!r} is already registered or blocked")
        return registered

    def registered(self) -> list[tuple[str, object]]:
        """``(name, object)`` of every registered hook listener; none before the first registers."""
        return [] if self._pm is None else list(self._pm.list_name_plugin())

    def unregister(self, obj: object) -> None:
        """Stop ``obj`` from receiving hooks (no-op if it was not registered)."""
        if self._pm is not None and self._pm.is_registered(obj):
            self._pm.unregister(obj)

    def call(self, hook: str, **kwargs: Any) -> list[Any]:
        """Call ``hook`` on every implementation, each isolated from the others.

        Returns the non-None results in pluggy's call order. An implementation
        that raises is logged and recorded in :attr:`hook_failures`; the rest
        still run. With no listener registered yet there is no manager and
        nothing to call (tests/kernel/test_hook_calls.py checks every call site
        against the specs, so a wrong name cannot hide behind that).
        """
        if self._pm is None:
            return []
        caller = getattr(self._pm.hook, hook, None)
        if caller is None or caller.spec is None:
            raise HermesError(f"unknown hook {hook!r}")
        expected = set(caller.spec.argnames)
        if set(kwargs) != expected:
            raise TypeError(f"hook {hook} takes {sorted(expected)}, got {sorted(kwargs)}")
        results = []
        # get_hookimpls() lists implementations in registration order with
        # tryfirst/trylast applied; pluggy calls them last-to-first.
        for impl in reversed(caller.get_hookimpls()):
            if impl.hookwrapper or impl.wrapper:
                log.warning("hook %s: wrapper in %r is not supported, skipped", hook, impl.plugin_name)
                continue
            try:
                result = impl.function(*[kwargs[arg] for arg in impl.argnames])
            except Exception as exc:
                self.record_hook_failure(hook, impl.plugin_name, exc)
                continue
            if result is not None:
                results.append(result)
        return results

    def listeners(self, hook: str) -> tuple[Any, ...]:
        """The implementations of ``hook`` in call order; empty (and no pluggy) when nothing listens.

        :mod:`.hook_calls` asks this first, so a hook without listeners costs one dict look-up:
        the lists are cached until the next register or unregister.
        """
        pm = self._pm
        if pm is None:
            return ()
        cached = self._listeners.get(hook)
        if cached is not None and cached[0] == pm.generation:
            return cached[1]
        caller = getattr(pm.hook, hook, None)
        if caller is None or caller.spec is None:
            raise HermesError(f"unknown hook {hook!r}")
        # pluggy calls them last-to-first; wrappers are not supported (see call)
        found = tuple(impl for impl in reversed(caller.get_hookimpls()) if not (impl.hookwrapper or impl.wrapper))
        self._listeners[hook] = (pm.generation, found)
        return found

    def record_hook_failure(self, hook: str, plugin: str, error: BaseException | str) -> HookFailure:
        """Log and record that ``plugin``'s ``hook`` failed (shown by ``plugin list`` and ``doctor``)."""
        failure = HookFailure(hook, plugin, error if isinstance(error, str) else _describe(error))
        self.hook_failures.append(failure)
        log.warning("hook %s: plugin %r raised %s", hook, plugin, failure.error)
        if isinstance(error, BaseException):
            log.debug("hook failure in %s", plugin, exc_info=error)
        return failure
