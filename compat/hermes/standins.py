"""Stand-ins for the Hermes Agent modules a provider imports, present only while it loads and runs.

A Hermes provider imports host modules by their top-level names
(``agent.memory_provider``, ``tools.registry``, ``hermes_constants``,
``hermes_cli.config``, ``hermes_state``, ``utils``, ``tools.lazy_deps``) and is itself imported
as ``plugins.memory.<name>``. :class:`ProviderScope` puts small modules of our
own under those names into ``sys.modules`` for the duration of one call into
the provider and takes them out again afterwards, together with the
provider's own module tree, so nothing named ``agent``, ``tools``, ``utils``
or ``plugins`` stays importable in the process between calls.

Scopes of different providers never overlap: a call waits until another
provider's call has returned. Calls into the same provider from several
threads (the agent's thread and the memory worker) share its scope.
"""

from __future__ import annotations

import importlib.metadata as metadata
import json
import logging
import os
import stat
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from hermes.kernel.home import HermesHome, atomic_write

from . import memory_provider
from .host import text as host_text
from .host.profiles import ProfileInfo, Profiles
from .host import setup as host_setup
from .host.runtime import SingletonSlot, get_read_block_error, raise_if_read_blocked, safe_schedule_threadsafe

__all__ = ["FeatureUnavailable", "OWNED_ROOTS", "ProviderScope"]

log = logging.getLogger(__name__)

#: Top-level module names the scope owns while it is active.
OWNED_ROOTS = frozenset({"agent", "tools", "utils", "hermes_constants", "hermes_cli", "hermes_state", "plugins"})

#: Packages behind Hermes's optional memory features (facts from its lazy-dependency table).
_FEATURE_PACKAGES = {
    "memory.honcho": ("honcho-ai",),
    "memory.supermemory": ("supermemory",),
    "memory.mem0": ("mem0ai",),
    "memory.hindsight": ("hindsight-client",),
}

#: Folders of a home that are not provider data: other profiles' homes and plugin code.
_NOT_PROVIDER_DATA = frozenset({"profiles", "plugins", "skills"})

_MISSING = object()
_switch = threading.Condition()
_active: ProviderScope | None = None


class FeatureUnavailable(RuntimeError):
    """An optional dependency is not installed; hermes-kernel never installs packages at run time."""

    def __init__(self, feature: str, packages: tuple[str, ...]) -> None:
        self.feature = feature
        self.missing = packages
        what = " ".join(packages) if packages else "the package(s) it needs"
        super().__init__(
            f"feature {feature!r} is not installed: install {what} into hermes's environment "
            f"(`{sys.executable} -m pip install {what}`) and start hermes again"
        )


def _owned_names() -> list[str]:
    """Every module in ``sys.modules`` under an owned top-level name."""
    return [name for name in list(sys.modules) if name.partition(".")[0] in OWNED_ROOTS]


def _package(name: str, path: list[str] | None = None) -> ModuleType:
    module = ModuleType(name)
    module.__path__ = path or []  # a package: submodules can be imported under it
    module.__package__ = name
    return module


def _module(name: str, doc: str, **attrs: Any) -> ModuleType:
    module = ModuleType(name, doc)
    module.__dict__.update(attrs)
    return module


# --- the functions the stand-ins offer ------------------------------------------------


def tool_error(message: Any, **extra: Any) -> str:
    """A tool result that reports an error, as JSON."""
    return json.dumps({"error": str(message), **extra}, ensure_ascii=False)


def tool_result(data: Any = None, **fields: Any) -> str:
    """A tool result as JSON: ``data`` (a mapping or any value) plus ``fields``."""
    payload = dict(data) if isinstance(data, dict) else ({} if data is None else {"result": data})
    payload.update(fields)
    return json.dumps(payload, ensure_ascii=False, default=str)


def cfg_get(config: Any, *keys: str, default: Any = None) -> Any:
    """``config[k1][k2]...``, or ``default`` where a level is missing or not a mapping."""
    node = config
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return default
        node = node[key]
    return node


def is_truthy_value(value: Any, default: bool = False) -> bool:
    """``true``/``yes``/``on``/``1`` (any case) and truthy non-strings are true."""
    if value is None:
        return default
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on", "y")
    return bool(value)


def atomic_json_write(
    path: Any, data: Any, *, indent: int | None = 2, mode: int | None = None, **dump_kwargs: Any
) -> None:
    """Write ``data`` as JSON so readers see the old or the new file, never half of one.

    ``mode`` is the file's permission bits (every upstream caller passes one);
    without it the file is private to the user (0600), as all provider data is.
    """
    text = json.dumps(data, indent=indent, ensure_ascii=False, **dump_kwargs)
    atomic_write(Path(path), text + "\n", mode=0o600 if mode is None else mode)


def env_var_enabled(name: str, default: str = "") -> bool:
    """The environment variable ``name`` (or ``default``) is a true value."""
    return is_truthy_value(os.environ.get(name, default))


def atomic_yaml_write(path: Any, data: Any, **dump_kwargs: Any) -> None:
    """Write ``data`` as YAML, atomically."""
    import yaml

    dump_kwargs.setdefault("sort_keys", False)
    atomic_write(Path(path), yaml.safe_dump(data, allow_unicode=True, **dump_kwargs), mode=0o600)


def apply_wal_with_fallback(conn: Any, db_label: str = "database", **kwargs: Any) -> bool:
    """WAL journaling on a provider's own SQLite connection; the default journal where WAL is refused.

    Some file systems (network mounts) refuse WAL; the database then keeps
    working in rollback-journal mode. Returns True when WAL is on.
    """
    import sqlite3

    try:
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()
    except sqlite3.OperationalError as exc:
        log.warning("%s: WAL journaling refused (%s); using the default journal", db_label, exc)
        return False
    return bool(mode) and str(mode[0]).lower() == "wal"


def _installed(requirement: str) -> bool:
    name = requirement.split(";")[0]
    for sep in "<>=!~[ ":
        name = name.split(sep, 1)[0]
    try:
        metadata.distribution(name.strip())
    except metadata.PackageNotFoundError:
        return False
    return True


def ensure(feature: str, *args: Any, **kwargs: Any) -> None:
    """Return if ``feature``'s packages are installed, else raise :class:`FeatureUnavailable`.

    Hermes installs missing packages here at run time; hermes-kernel never
    does: the user installs them, told exactly what to install.
    """
    packages = _FEATURE_PACKAGES.get(feature, ())
    if packages and all(_installed(p) for p in packages):
        return
    raise FeatureUnavailable(feature, packages)


class ProviderScope:
    """The stand-in modules of one provider plus its own module tree, swapped in per call.

    :param home: the profile home the stand-ins report (``get_hermes_home``,
        ``load_config``); :meth:`use_home` changes it when the provider is
        initialised for a home.
    """

    def __init__(self, home: HermesHome) -> None:
        self.home = home
        self.unavailable: FeatureUnavailable | None = None
        self._modules = self._build()
        self._saved: dict[str, Any] = {}
        self._depth = 0
        self._size = 0

    def use_home(self, home: HermesHome) -> None:
        self.home = home

    def ensure_if_known(self, feature: str) -> None:
        """:meth:`ensure` for a feature whose packages are known; nothing for any other."""
        if feature in _FEATURE_PACKAGES:
            self.ensure(feature)

    def ensure(self, feature: str, *args: Any, **kwargs: Any) -> None:
        """:func:`ensure`, remembering a missing feature: providers often swallow the error and run
        half-broken, so the adapter asks :attr:`unavailable` after ``initialize`` and leaves them out."""
        try:
            ensure(feature, *args, **kwargs)
        except FeatureUnavailable as exc:
            self.unavailable = exc
            raise

    # --- what the stand-ins read ------------------------------------------------------

    def get_hermes_home(self) -> Path:
        return self.home.path

    def display_hermes_home(self) -> str:
        path = str(self.home.path)
        user = os.path.expanduser("~")
        return "~" + path[len(user) :] if path.startswith(user + os.sep) else path

    def get_default_hermes_root(self) -> Path:
        return self.home.root

    def load_config(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        from hermes.kernel.config import load_config

        return load_config(self.home).as_dict()

    def read_user_config_raw(self, path: Any = None) -> dict[str, Any]:
        from hermes.kernel.config import read_config_file

        return read_config_file(Path(path) if path is not None else self.home.config_path)

    def save_config(self, config: dict[str, Any], *args: Any, **kwargs: Any) -> None:
        atomic_yaml_write(self.home.config_path, config)

    def _build(self) -> dict[str, ModuleType]:
        profiles = Profiles(lambda: self.home)
        modules = {
            "agent": _package("agent"),
            "agent.memory_provider": _module(
                "agent.memory_provider", memory_provider.__doc__ or "",
                MemoryProvider=memory_provider.MemoryProvider, AGENT_CONTEXTS=memory_provider.AGENT_CONTEXTS,
            ),
            "agent.memory_manager": _module("agent.memory_manager", "Recall fences.",
                                            sanitize_context=host_text.sanitize_context),
            "agent.message_content": _module("agent.message_content", "Message text.",
                                             flatten_message_text=host_text.flatten_message_text),
            "agent.skill_commands": _module(
                "agent.skill_commands", "Skill-invocation turns.",
                extract_user_instruction_from_skill_message=host_text.extract_user_instruction_from_skill_message,
            ),
            "agent.async_utils": _module("agent.async_utils", "Scheduling onto a provider's own loop.",
                                         safe_schedule_threadsafe=safe_schedule_threadsafe),
            "agent.file_safety": _module(
                "agent.file_safety", "Paths a provider must not read for the model.",
                get_read_block_error=lambda path: get_read_block_error(path, home=self.home.path),
                raise_if_read_blocked=lambda path: raise_if_read_blocked(path, home=self.home.path),
            ),
            "tools": _package("tools"),
            "tools.registry": _module("tools.registry", "Tool-result helpers.", tool_error=tool_error,
                                      tool_result=tool_result),
            "tools.lazy_deps": _module("tools.lazy_deps", "Optional dependencies: never installed at run time.",
                                       ensure=self.ensure, FeatureUnavailable=FeatureUnavailable),
            "hermes_constants": _module(
                "hermes_constants", "The active profile's home.", get_hermes_home=self.get_hermes_home,
                display_hermes_home=self.display_hermes_home, get_default_hermes_root=self.get_default_hermes_root,
            ),
            "hermes_cli": _package("hermes_cli"),
            "hermes_cli.config": _module(
                "hermes_cli.config", "The active profile's config.yaml.", cfg_get=cfg_get,
                load_config=self.load_config, load_config_readonly=self.load_config,
                read_user_config_raw=self.read_user_config_raw, save_config=self.save_config,
                get_hermes_home=self.get_hermes_home,
            ),
            "hermes_cli.profiles": _module(
                "hermes_cli.profiles", "The profiles of the provider's home.", ProfileInfo=ProfileInfo,
                get_active_profile_name=profiles.get_active_profile_name, list_profiles=profiles.list_profiles,
                profile_exists=profiles.profile_exists, _get_default_hermes_home=profiles.get_default_hermes_home,
            ),
            "hermes_cli.memory_setup": _module(
                "hermes_cli.memory_setup", "What a provider's own setup wizard asks with.",
                _CANCELLED=host_setup.CANCELLED, _prompt=host_setup.prompt, _curses_select=host_setup.select,
                _print_cancelled_setup=host_setup.print_cancelled_setup, _write_env_vars=host_setup.write_env_vars,
            ),
            "hermes_cli.secret_prompt": _module("hermes_cli.secret_prompt", "Secret answers.",
                                                masked_secret_prompt=host_setup.masked_secret_prompt),
            "hermes_cli.curses_ui": _module("hermes_cli.curses_ui", "Menus.",
                                            curses_radiolist=host_setup.curses_radiolist),
            "hermes_state": _module("hermes_state", "SQLite helpers.", apply_wal_with_fallback=apply_wal_with_fallback),
            "utils": _module("utils", "File and value helpers.", atomic_json_write=atomic_json_write,
                             atomic_yaml_write=atomic_yaml_write, is_truthy_value=is_truthy_value,
                             env_var_enabled=env_var_enabled),
            "plugins": _package("plugins"),
            "plugins.memory": _package("plugins.memory"),
            "plugins.plugin_utils": _module("plugins.plugin_utils", "Shared plugin helpers.", SingletonSlot=SingletonSlot),
            "plugins.memory.query_rewrite": _module("plugins.memory.query_rewrite", "Recall queries.",
                                                    rewrite_memory_query=host_text.rewrite_memory_query),
        }  # fmt: skip
        for name, module in modules.items():
            parent, _, child = name.rpartition(".")
            if parent:
                setattr(modules[parent], child, module)
        return modules

    def adopt(self, name: str, module: ModuleType) -> None:
        """Keep ``module`` (the provider's own) in this scope under ``name``."""
        self._modules[name] = module

    # --- swapping in and out ------------------------------------------------------------

    @contextmanager
    def active(self) -> Iterator[None]:
        """Make the stand-ins and the provider's modules importable for the duration of a call."""
        global _active
        with _switch:
            while _active is not None and _active is not self:
                _switch.wait()
            _active = self
            if self._depth == 0:
                self._swap_in()
            self._depth += 1
        try:
            yield
        finally:
            with _switch:
                self._depth -= 1
                if self._depth == 0:
                    self._swap_out()
                    self._tighten()
                    _active = None
                    _switch.notify_all()

    def _tighten(self) -> None:
        """Take group and other permissions off what a provider left in the home (and one level down).

        Providers create their databases and folders with the process umask
        (SQLite: 0644, and its -wal/-shm files copy the database's mode), yet
        they hold the user's memories: 0600 files, 0700 folders. Other
        profiles' homes and plugin code are left alone.
        """
        def sweep(folder: Path, depth: int) -> None:
            try:
                entries = list(os.scandir(folder))
            except OSError:
                return
            for entry in entries:
                try:
                    info = entry.stat(follow_symlinks=False)
                    is_dir = entry.is_dir(follow_symlinks=False)
                    if (is_dir or entry.is_file(follow_symlinks=False)) and info.st_mode & 0o077:
                        os.chmod(entry.path, stat.S_IMODE(info.st_mode) & 0o700)
                    if is_dir and depth > 0 and entry.name not in _NOT_PROVIDER_DATA:
                        sweep(Path(entry.path), depth - 1)
                except OSError:
                    continue

        sweep(self.home.path, 1)

    def _swap_in(self) -> None:
        # Scanning sys.modules costs far more than the call itself; a submodule
        # cannot be there without its top-level package, so look only when one is.
        if any(root in sys.modules for root in OWNED_ROOTS):
            self._saved = {name: sys.modules.pop(name) for name in _owned_names()}
        sys.modules.update(self._modules)
        self._size = len(sys.modules)

    def _swap_out(self) -> None:
        # Whatever the provider imported under an owned name (its submodules) is
        # kept with the scope for the next call, and leaves sys.modules now. No
        # module was added during the call when the count is unchanged.
        names = _owned_names() if len(sys.modules) != self._size else [n for n in self._modules if n in sys.modules]
        for name in names:
            self._modules[name] = sys.modules.pop(name)
        sys.modules.update(self._saved)
        self._saved = {}
