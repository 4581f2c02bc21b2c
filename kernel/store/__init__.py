"""The session store: ``HERMES_HOME/state.db`` (SQLite, WAL) via sqlite-utils migrations.

Importing this package loads only the standard library; ``sqlite_utils`` is
imported when a store is first opened.
"""

from .accounting import SessionUsage, combine_cost_status
from .concurrency import StoreBusyError
from .content import strip_images
from .search import SearchHit, fts_query
from .session_store import Conversation, SessionNotFoundError, SessionStore, TitleInUseError, new_session_id
from .titles import sanitize_title

__all__ = [
    "Conversation",
    "SearchHit",
    "SessionNotFoundError",
    "SessionStore",
    "SessionUsage",
    "StoreBusyError",
    "TitleInUseError",
    "combine_cost_status",
    "fts_query",
    "new_session_id",
    "sanitize_title",
    "strip_images",
]
