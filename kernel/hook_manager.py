"""The pluggy manager behind :class:`~hermes.kernel.PluginHost`, made on first use.

It lives apart from the host so that a process with no hook listener (``hermes
--help``, most commands) never imports pluggy: the host builds one only when a
plugin or a live object is registered.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any

import pluggy

from . import hookspecs

__all__ = ["HookManager", "required_args"]

log = logging.getLogger("hermes.kernel.host")

#: ``on_mismatch(plugin_name, hook, mismatch)``: told of each implementation left out.
MismatchSink = Callable[[str, str, str], None]


def required_args(func: Any) -> tuple[str, ...]:
    """Parameters a call must supply (pluggy's view: no ``self``, no defaults, no ``*``/``**``)."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return ()
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return tuple(p.name for p in params if p.kind in kinds and p.default is inspect.Parameter.empty)


class HookManager(pluggy.PluginManager):
    """A PluginManager that skips a hook implementation with a wrong signature instead of the whole plugin.

    pluggy refuses the plugin at ``register`` (PluginValidationError) when one
    implementation asks for an argument its spec lacks, so every other hook of
    that plugin went dark without a word. Here that implementation alone is
    left out, with one warning naming the plugin, the hook and the mismatch.
    The kernel's specs are added first, so every later ``register`` is checked.
    """

    def __init__(self, on_mismatch: MismatchSink) -> None:
        super().__init__(hookspecs.PROJECT_NAME)
        self._on_mismatch = on_mismatch
        self._registering = ""
        #: Bumped by every register and unregister, so a cached list of listeners knows it is stale.
        self.generation = 0
        self.add_hookspecs(hookspecs)

    def register(self, plugin: object, name: str | None = None) -> str | None:
        # pluggy's canonical name for an unnamed object is its id(), which no one can read.
        self._registering = name or ""
        self.generation += 1
        try:
            return super().register(plugin, name)
        finally:
            self._registering = ""
            self.generation += 1

    def unregister(self, plugin: object | None = None, name: str | None = None) -> Any:
        self.generation += 1
        try:
            return super().unregister(plugin, name)
        finally:
            self.generation += 1

    def parse_hookimpl_opts(self, plugin: object, name: str) -> Any:
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None:
            return None
        hook = getattr(self.hook, opts.get("specname") or name, None)
        spec = getattr(hook, "spec", None)
        if spec is None:
            return opts
        wanted = required_args(getattr(plugin, name))
        extra = [arg for arg in wanted if arg not in spec.argnames]
        if extra:
            plugin_name = self._registering.partition("@")[0] or type(plugin).__name__
            mismatch = (
                f"it takes ({', '.join(wanted)}) but the spec gives ({', '.join(spec.argnames)}); "
                f"{', '.join(extra)} {'is' if len(extra) == 1 else 'are'} not in the spec"
            )
            self._on_mismatch(plugin_name, spec.name, mismatch)
            log.warning("plugin %r: hook %s skipped: %s; its other hooks still work", plugin_name, spec.name, mismatch)
            return None
        return opts
