"""Tenants: which sessions one tenant may see, decided in one place for every caller.

Under ``hermes serve`` each API key belongs to a tenant. A session is created
with its tenant (``create_session(tenant=...)``) and its branches and
compression children inherit it, so a lineage never leaves its tenant.
``list_sessions`` and ``search`` filter by tenant inside the store; code that
opens a session by id asks :func:`tenant_session`, so another tenant's id reads
exactly as a missing one. ``None`` is no tenant: as a filter it means every
session; a session stored without one (every row from before tenants) belongs
to no tenant and is seen by none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import SessionNotFoundError, TitleInUseError

__all__ = ["require_tenant_session", "tenant_session", "title_in_use", "visible_to"]


def visible_to(session: Mapping[str, Any], tenant: str | None) -> bool:
    """Whether ``tenant`` may see the session row ``session`` (every row when ``tenant`` is None)."""
    return tenant is None or session.get("tenant") == tenant


def tenant_session(store: Any, session_id: str, tenant: str | None) -> dict[str, Any] | None:
    """The row of ``session_id`` when ``tenant`` may see it, else None (missing or another tenant's alike)."""
    session = store.get_session(session_id)
    return session if session is not None and visible_to(session, tenant) else None


def require_tenant_session(store: Any, session_id: str, tenant: str | None) -> dict[str, Any]:
    """:func:`tenant_session`, or the very SessionNotFoundError a missing id raises."""
    session = tenant_session(store, session_id, tenant)
    if session is None:
        raise SessionNotFoundError(session_id)
    return session


def title_in_use(title: str, holder_id: str, holder_tenant: str | None, tenant: str | None) -> TitleInUseError:
    """The error for a title ``holder_id`` already has; another tenant's session is not named."""
    holder = f"session {holder_id}" if holder_tenant == tenant else "another session"
    return TitleInUseError(f"title {title!r} is already used by {holder}")
