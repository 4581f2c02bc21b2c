"""The session store slot: the :class:`SessionStore` contract, its backends, :func:`open_store`.

The default backend is ``HERMES_HOME/state.db`` (SQLite, WAL) via sqlite-utils
migrations; ``store.backend: postgresql`` chooses the PostgreSQL plugin.
Importing this package loads only the standard library; ``sqlite_utils`` (or
``psycopg``) is imported when a store is first opened.
"""

from .accounting import SessionUsage, combine_cost_status
from .concurrency import StoreBusyError
from .content import strip_images
from .search import SearchHit, fts_query
from .contract import Conversation, HealthCheck, ImportResult, SessionStore
from .opening import STORE_GROUP, open_store, store_settings
from .session_store import SessionNotFoundError, SQLiteSessionStore, TitleInUseError, new_session_id
from .tenants import require_tenant_session, tenant_session, visible_to
from .titles import sanitize_title
from .writers import WriterClaim, holder_text

__all__ = [
    "Conversation",
    "HealthCheck",
    "ImportResult",
    "STORE_GROUP",
    "SQLiteSessionStore",
    "SearchHit",
    "SessionNotFoundError",
    "SessionStore",
    "SessionUsage",
    "StoreBusyError",
    "TitleInUseError",
    "WriterClaim",
    "combine_cost_status",
    "fts_query",
    "holder_text",
    "new_session_id",
    "open_store",
    "require_tenant_session",
    "store_settings",
    "sanitize_title",
    "strip_images",
    "tenant_session",
    "visible_to",
]
