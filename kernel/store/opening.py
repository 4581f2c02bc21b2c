"""Choosing and opening the session store named by config.

``store.backend`` names an entry point in ``hermes.session_stores`` (``sqlite``
by default, ``postgresql`` built in); ``store.url`` (or ``HERMES_STORE_URL``,
which wins) says where the data lives. A URL's scheme names its backend, so
``HERMES_STORE_URL=postgresql://...`` alone is enough; a backend set
explicitly to something else than the URL's scheme is an error.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from typing import Any, NamedTuple

from ..errors import ConfigError

__all__ = [
    "DEFAULT_BACKEND",
    "STORE_GROUP",
    "StoreSettings",
    "default_backend",
    "open_store",
    "redact_url",
    "store_settings",
]

STORE_GROUP = "hermes.session_stores"
DEFAULT_BACKEND = "sqlite"
_SCHEME_BACKENDS = {"postgres": "postgresql", "postgresql": "postgresql", "sqlite": "sqlite"}


class StoreSettings(NamedTuple):
    """The backend name, URL and ``store`` options resolved from config and environment."""

    backend: str
    url: str | None
    options: dict[str, Any]


def redact_url(url: str | None) -> str | None:
    """``url`` with any password replaced by ``***`` (for logs, errors and doctor)."""
    if not url or "://" not in url:
        return url
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = netloc[0].split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[1]}"))


def store_settings(config: Any, environ: Mapping[str, str] | None = None, *, url: str | None = None) -> StoreSettings:
    """The backend name, URL and ``store`` options that ``config`` (and ``HERMES_STORE_URL``) choose.

    ``url`` (for example from a ``--to`` flag) overrides both.
    """
    env = os.environ if environ is None else environ
    section = config.get("store", {}) if config is not None else {}
    if not isinstance(section, Mapping):
        raise ConfigError("store must be a mapping with backend and url; see docs/session-stores.md")
    backend = str(section.get("backend") or DEFAULT_BACKEND)
    chosen_url = url or env.get("HERMES_STORE_URL") or section.get("url") or None
    if chosen_url is not None and not isinstance(chosen_url, str):
        raise ConfigError("store.url must be a text URL such as postgresql://user@host/db")
    if url is not None:
        backend = DEFAULT_BACKEND  # an explicit URL speaks for itself
    if chosen_url and "://" in chosen_url:
        scheme = chosen_url.split("://", 1)[0].split("+", 1)[0].lower()
        from_scheme = _SCHEME_BACKENDS.get(scheme, scheme)
        if backend == DEFAULT_BACKEND:
            backend = from_scheme
        elif backend != from_scheme:
            raise ConfigError(
                f"store.backend is {backend!r} but store.url is a {scheme}:// URL; "
                f"fix one of them (`hermes config set store.backend {from_scheme}`)"
            )
    return StoreSettings(backend, chosen_url, dict(section))


def _own_host() -> Any:
    from ..host import PluginHost

    return PluginHost(disabled=())


@functools.cache
def default_backend() -> type:
    """The class registered as :data:`DEFAULT_BACKEND` in ``hermes.session_stores`` (loaded once)."""
    return _own_host().driver(STORE_GROUP, DEFAULT_BACKEND)  # type: ignore[no-any-return]


def open_store(
    config: Any, home: Any, host: Any = None, *, url: str | None = None, readonly: bool = False
) -> Any:
    """Open the :class:`~hermes.kernel.store.SessionStore` that config chooses.

    ``host`` (a :class:`~hermes.kernel.PluginHost`) loads the backend from
    ``hermes.session_stores``; a missing or broken backend fails loudly,
    naming the group, the name and what is installed. ``readonly`` asks the
    backend to open for reading only (option ``readonly``; SQLite honours it).
    """
    settings = store_settings(config, url=url)
    backend_class = (host or _own_host()).driver(STORE_GROUP, settings.backend)
    options = {**settings.options, "readonly": True} if readonly else settings.options
    return backend_class.from_config(url=settings.url, home=home, options=options)
