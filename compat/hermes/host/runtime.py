"""Runtime helpers providers call from their worker threads and file readers (Hermes's
``agent.async_utils`` and ``agent.file_safety``)."""

from __future__ import annotations

import asyncio
import logging
import os
from concurrent.futures import Future
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

__all__ = ["get_read_block_error", "raise_if_read_blocked", "safe_schedule_threadsafe"]

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
