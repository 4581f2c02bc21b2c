"""Runtime helpers providers call from their worker threads and file readers (Hermes's
``agent.async_utils``, ``agent.file_safety`` and ``plugins.plugin_utils``)."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Generic, TypeVar

__all__ = ["SingletonSlot", "get_read_block_error", "raise_if_read_blocked", "safe_schedule_threadsafe"]

T = TypeVar("T")

_log = logging.getLogger(__name__)


def safe_schedule_threadsafe(
    coro: Coroutine[Any, Any, Any],
    loop: asyncio.AbstractEventLoop | None,
    *,
    logger: logging.Logger | None = None,
    log_message: str = "could not schedule a coroutine on its loop",
    log_level: int = logging.DEBUG,
) -> Future[Any] | None:
    """``asyncio.run_coroutine_threadsafe(coro, loop)``, or None when there is no open loop.

    A coroutine that could not be scheduled is closed, so it never warns
    "was never awaited" (a loop closed during shutdown is the usual cause).
    """
    logger = logger or _log
    if loop is not None:
        try:
            return asyncio.run_coroutine_threadsafe(coro, loop)
        except Exception as exc:  # noqa: BLE001 - a closed or stopping loop: the caller falls back
            reason = str(exc)
    else:
        reason = "no event loop"
    if asyncio.iscoroutine(coro):
        coro.close()
    logger.log(log_level, "%s: %s", log_message, reason)
    return None


#: Files whose contents are credentials: a provider asked to read one (a path the model supplied) refuses.
_SECRET_NAMES = frozenset({".env", ".env.local", ".env.production", ".env.development", ".envrc", "auth.json"})
_SECRET_DIRS = ("mcp-tokens", "credentials")


def get_read_block_error(path: str, *, home: Path | None = None) -> str | None:
    """Why reading ``path`` on the model's behalf is refused, or None when it is allowed.

    ``home`` is the provider's profile home (bound by the scope): its credential folders are refused.
    """
    try:
        resolved = Path(os.path.expanduser(str(path))).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    for name in _SECRET_DIRS if home is not None else ():
        secret = Path(home).resolve() / name
        if resolved == secret or secret in resolved.parents:
            return f"access denied: {path} holds hermes credentials and is not read for the model"
    if resolved.name.lower() in _SECRET_NAMES:
        return f"access denied: {path} is a secrets file and is not read for the model (read .env.example instead)"
    return None


def raise_if_read_blocked(path: str, *, home: Path | None = None) -> None:
    """Raise ValueError when :func:`get_read_block_error` refuses ``path``."""
    blocked = get_read_block_error(path, home=home)
    if blocked:
        raise ValueError(blocked)


class SingletonSlot(Generic[T]):
    """One lazily built, shared instance (an SDK client): the first build wins, a failed build is retried.

    Hermes's ``plugins.plugin_utils.SingletonSlot``: providers keep their
    client in one so concurrent first calls build it once.
    """

    __slots__ = ("_lock", "_value", "_set")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._value: T | None = None
        self._set = False

    def get(self, factory: Callable[[], T]) -> T:
        """The instance, built by ``factory`` on the first call (under a lock, once)."""
        with self._lock:
            if not self._set:
                self._value, self._set = factory(), True
            return self._value  # type: ignore[return-value]

    def peek(self) -> T | None:
        """The instance if it was built, else None (never builds)."""
        return self._value if self._set else None

    def reset(self) -> None:
        """Forget the instance: the next :meth:`get` builds a new one."""
        with self._lock:
            self._value, self._set = None, False
