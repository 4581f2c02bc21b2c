"""A Hermes-format memory provider behind the kernel's MemoryProvider contract.

Every call is translated (keyword-only ``session_id``, ``turn_number``,
``hermes_home`` as a path string, a delegation result as text, ...) and made
inside the provider's :class:`~hermes.compat.hermes.standins.ProviderScope`.
Optional arguments a provider's method does not declare (``session_id``,
``messages``, ``metadata`` in older providers) are left out, found by
inspecting its signature.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes.kernel.errors import PluginDependencyError, PluginLoadError
from hermes.kernel.home import HermesHome, active_home
from hermes.kernel.hookspecs import hookimpl
from hermes.kernel.memory_provider import MemoryProvider

from .loader import GROUP, import_provider, read_manifest
from .standins import FeatureUnavailable, ProviderScope

__all__ = ["HermesProviderAdapter", "load_folder_provider"]

#: Kernel agent contexts in Hermes's words (its background memory writer is ``flush``).
_CONTEXTS = {"primary": "primary", "subagent": "subagent", "review": "flush"}
#: Session switches that start a new conversation (Hermes's ``reset``) rather than continue one.
_RESETS = ("new", "reset")


@functools.lru_cache(maxsize=512)
def _accepts(func: Callable[..., Any]) -> frozenset[str] | None:
    """Keyword names ``func`` takes, or None when it takes any (``**kwargs``)."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return frozenset(
        p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    )


def _fit(func: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    accepted = _accepts(getattr(func, "__func__", func))
    return kwargs if accepted is None else {k: v for k, v in kwargs.items() if k in accepted}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


class HermesProviderAdapter(MemoryProvider):
    """Wraps one Hermes provider instance; ``folder`` (a class attribute) says where it lives.

    Constructing it imports the folder: the active profile's home
    (:func:`hermes.kernel.active_home`) is what ``get_hermes_home()`` reports
    until :meth:`initialize` names the home to use.
    """

    folder: Path
    manifest: dict[str, Any] = {}

    def __init__(self, inner: Any = None, *, home: HermesHome | None = None) -> None:
        self.scope = ProviderScope(home or active_home())
        if inner is None:
            try:
                inner = import_provider(self.folder, self.scope)
            except PluginLoadError:
                raise
            except (ImportError, FeatureUnavailable) as exc:  # a package it needs is not installed
                text = " ".join(str(exc).split())[:300]
                raise PluginDependencyError(
                    GROUP, self.folder.name, f"a package it needs is not installed ({type(exc).__name__}: {text})"
                ) from exc
            except Exception as exc:  # its code failed to import or to construct: one clear line
                text = " ".join(str(exc).split())[:300]
                raise PluginLoadError(GROUP, self.folder.name, f"{self.folder}: {type(exc).__name__}: {text}") from exc
        self.inner = inner

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """``inner.method(*args, **kwargs)`` minus the keywords it does not take, inside the scope."""
        func = getattr(self.inner, method, None)
        if not callable(func):
            return None
        with self.scope.active():
            return func(*args, **_fit(func, kwargs))

    @property
    def _home_path(self) -> str:
        return str(self.scope.home.path)

    # --- the plain methods ------------------------------------------------------------

    def is_available(self) -> bool:
        """The provider's answer; a configured provider whose SDK is missing raises FeatureUnavailable.

        Hermes Agent installs the SDK during ``initialize``; hermes-kernel never
        does, so the missing package is named here, before the provider's
        tools are offered to the model.
        """
        if not self._call("is_available"):
            return False
        folder = getattr(self, "folder", None)
        if folder is not None:
            with self.scope.active():
                self.scope.ensure_if_known(f"memory.{folder.name}")
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        home = kwargs.get("hermes_home")
        if isinstance(home, HermesHome):
            self.scope.use_home(home)
        self._platform = str(kwargs.get("platform") or "cli")
        extra = {
            "hermes_home": self._home_path,
            "platform": self._platform,
            "agent_context": _CONTEXTS.get(str(kwargs.get("agent_context") or "primary"), "primary"),
            "agent_identity": self.scope.home.profile,
        }
        if kwargs.get("user_id"):
            # A server's tenant: Hermes Agent's providers scope by user_id, and those that keep
            # files under hermes_home get the tenant's own folder.
            extra["user_id"] = str(kwargs["user_id"])
            extra["hermes_home"] = str(getattr(home, "tenant_path", self._home_path))
        self._call("initialize", session_id, **extra)
        if self.scope.unavailable is not None:  # it asked for a package that is not installed
            raise self.scope.unavailable

    def system_prompt_block(self) -> str | None:
        return _text(self._call("system_prompt_block"))

    def prefetch(self, query: str, session_id: str) -> str | None:
        return _text(self._call("prefetch", query, session_id=session_id))

    def queue_prefetch(self, query: str, session_id: str) -> None:
        self._call("queue_prefetch", query, session_id=session_id)

    def sync_turn(
        self, user_content: str, assistant_content: str, session_id: str, messages: list[dict[str, Any]] | None = None
    ) -> None:
        self._call("sync_turn", user_content, assistant_content, session_id=session_id, messages=messages)

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return list(self._call("get_tool_schemas") or [])

    def handle_tool_call(self, name: str, args: dict[str, Any]) -> str:
        result = self._call("handle_tool_call", name, args)
        return result if isinstance(result, str) else str(result)

    def shutdown(self) -> None:
        self._call("shutdown")

    def describe(self, hermes_home: Any, config: Any) -> dict[str, Any]:
        folder = getattr(self, "folder", None)
        what = str(self.manifest.get("description") or "").strip()
        where = f"Hermes provider folder {folder}" if folder else "Hermes provider"
        return {"summary": f"{where}: {what}" if what else where}

    def get_config_schema(self) -> list[dict[str, Any]]:
        return list(self._call("get_config_schema") or [])

    def save_config(self, values: dict[str, Any]) -> None:
        self._call("save_config", values, self._home_path)

    def own_setup(self, hermes_home: HermesHome) -> bool:
        """Run the provider's own setup wizard (Hermes's ``post_setup``) instead of the schema's questions.

        False when it has none (the caller walks the schema). The wizard asks
        and writes by itself, as on Hermes Agent; a wizard cancelled halfway
        (Ctrl-C, end of input) or failing has every file of the home put back
        as it was, and raises (KeyboardInterrupt for a cancel).
        """
        if not callable(getattr(self.inner, "post_setup", None)):
            return False
        from hermes.kernel.config import read_config_file

        from .host.setup import HomeSnapshot

        self.scope.use_home(hermes_home)
        snapshot = HomeSnapshot(hermes_home.path)
        config = read_config_file(hermes_home.config_path)
        try:
            self._call("post_setup", str(hermes_home.path), config)
        except (KeyboardInterrupt, EOFError):
            snapshot.restore()
            raise KeyboardInterrupt from None
        except BaseException:  # a wizard that fails halfway leaves nothing half-written either
            snapshot.restore()
            raise
        return True

    def backup_paths(self) -> list[str]:
        return [str(p) for p in self._call("backup_paths") or []]

    # --- kernel hooks, translated --------------------------------------------------------

    @hookimpl
    def on_turn_start(self, session_id: str, turn: int, message: str) -> None:
        self._call("on_turn_start", turn, message, session_id=session_id, platform=getattr(self, "_platform", "cli"))

    @hookimpl
    def on_pre_compress(self, session_id: str, messages: list[dict[str, Any]]) -> str | None:
        return _text(self._call("on_pre_compress", messages))

    @hookimpl
    def on_session_switch(self, old_session_id: str | None, new_session_id: str, reason: str) -> None:
        reset = reason in _RESETS
        parent = "" if reset else (old_session_id or "")
        self._call("on_session_switch", new_session_id, parent_session_id=parent, reset=reset, rewound=False)

    @hookimpl
    def on_session_end(self, session_id: str, messages: list[dict[str, Any]], reason: str) -> None:
        self._call("on_session_end", messages)

    @hookimpl
    def on_memory_write(self, action: str, target: str, content: str) -> None:
        metadata = {"write_origin": "memory_tool", "tool_name": "memory", "platform": getattr(self, "_platform", "cli")}
        self._call("on_memory_write", action, target, content, metadata=metadata)

    @hookimpl
    def on_delegation(self, parent_session_id: str, task: str, result: dict[str, Any]) -> None:
        text = result.get("summary") if isinstance(result, dict) else result
        child = str(result.get("session_id") or "") if isinstance(result, dict) else ""
        self._call("on_delegation", task, str(text or ""), child_session_id=child)


def load_folder_provider(folder: Path) -> type[HermesProviderAdapter]:
    """The kernel driver class for the Hermes provider in ``folder`` (imported when instantiated).

    Its ``__init__.py`` is compiled (never run) here, so ``hermes plugin list``
    and ``hermes doctor`` show a syntax error without running provider code.
    """
    init = folder / "__init__.py"
    try:
        compile(init.read_bytes(), str(init), "exec")
    except (OSError, SyntaxError, ValueError) as exc:
        raise PluginLoadError(GROUP, folder.name, f"{init}: {type(exc).__name__}: {exc}") from None
    attrs = {"folder": folder, "name": folder.name, "manifest": read_manifest(folder), "__module__": __name__}
    return type(f"HermesFolder_{folder.name}", (HermesProviderAdapter,), attrs)
