"""Loggers that import :mod:`logging` on first use.

``logging`` (with ``string`` and ``threading`` behind it) is a tenth of what
``hermes --help`` would import beyond typer, and most commands never log a
line. Modules on the start-up path write ``log = LazyLogger(__name__)``; the
CLI installs its handler with :func:`when_logging_loads`, so a record from
any module, ours or a plugin's plain ``logging.getLogger``, still reaches it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

__all__ = ["LazyLogger", "when_logging_loads"]


class LazyLogger:
    """Stands for ``logging.getLogger(name)``; the real logger is fetched on the first attribute."""

    __slots__ = ("_name", "_logger")

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: Any = None

    def __getattr__(self, attr: str) -> Any:
        logger = self._logger
        if logger is None:
            import logging

            logger = self._logger = logging.getLogger(self._name)
        return getattr(logger, attr)

    def __repr__(self) -> str:
        return f"<LazyLogger {self._name}>"


class _Loader:
    """Wraps the real loader of ``logging`` and runs the callbacks once the module is complete."""

    def __init__(self, loader: Any, callbacks: list[Callable[[], None]]) -> None:
        self._loader = loader
        self._callbacks = callbacks

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        for callback in self._callbacks:
            callback()

    def __getattr__(self, attr: str) -> Any:  # get_source, is_package, ... for tracebacks
        return getattr(self._loader, attr)


class _Watch:
    """A one-shot meta-path finder: it answers for ``logging`` only, then steps aside."""

    def __init__(self) -> None:
        self.callbacks: list[Callable[[], None]] = []

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "logging":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        global _watch
        _watch = None
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:  # not ours to find: the import system goes on
            return None
        spec.loader = _Loader(spec.loader, self.callbacks)
        return spec


_watch: _Watch | None = None


def when_logging_loads(callback: Callable[[], None]) -> None:
    """Run ``callback`` now if :mod:`logging` is imported, else right after its first import."""
    global _watch
    if "logging" in sys.modules:
        callback()
        return
    if _watch is None:
        _watch = _Watch()
        sys.meta_path.insert(0, _watch)
    _watch.callbacks.append(callback)
