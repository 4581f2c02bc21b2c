"""The ``SessionStore`` contract: what the agent, the CLI, tools and memory code may ask of a store.

A backend subclasses :class:`SessionStore`, implements the abstract methods and
registers the class in the ``hermes.session_stores`` entry-point group; config
(``store.backend``, ``store.url`` or ``HERMES_STORE_URL``) chooses one through
:func:`hermes.kernel.store.open_store`. The embedded SQLite store is the
default and registers the same way (``sqlite``).

``SessionStore(path)`` called on the contract itself is deprecated: it warns
and opens the default backend on ``path``, resolved through the entry-point
group like any other, so this module imports no backend.

Tenants (:mod:`.tenants`): a session may belong to one (``create_session(tenant=)``,
the ``tenant`` key of its row, None when it has none); its branches and compression
children inherit it, imports keep it, and ``list_sessions`` and ``search`` given a
tenant see only that tenant's sessions. A tenant of None given as a filter filters nothing.

Every backend must pass :mod:`hermes.kernel.testing.store_suite`.
"""

from __future__ import annotations

import abc
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import SessionNotFoundError
from .opening import default_backend

if TYPE_CHECKING:
    from ..usage import CanonicalUsage, CostResult
    from .accounting import SessionUsage
    from .search import SearchHit, SortOrder
    from .writers import WriterClaim

__all__ = ["Conversation", "HealthCheck", "ImportResult", "SessionStore"]


@dataclass
class Conversation:
    """A session loaded for resuming: its row and its messages, oldest first."""

    session: dict[str, Any]
    messages: list[dict[str, Any]]


@dataclass(frozen=True)
class HealthCheck:
    """One line of ``hermes doctor``'s store report."""

    name: str
    ok: bool
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail}


@dataclass
class ImportResult:
    """What :meth:`SessionStore.import_sessions` did with each session it was given."""

    imported: list[str]
    skipped: list[str]  # already present with the same number of messages
    conflicts: list[str]  # present with a different number of messages: left untouched
    #: Imported sessions whose title another session already had in the target: id -> the
    #: lineage's next ``#N`` title they were given instead.
    renamed: dict[str, str] = field(default_factory=dict)


class SessionStore(abc.ABC):
    """Sessions, messages, lineage, titles, usage and search behind one interface.

    Rows are plain dicts with the keys of :data:`SESSION_COLUMNS` (sessions)
    and ``id, session_id, role, content, tool_calls, tool_call_id, tool_name,
    reasoning, finish_reason, token_count, timestamp, marker`` (messages; ``marker``
    names a message the kernel or an engine inserted, see
    :data:`hermes.kernel.context_engine.MARKER_KEY`). Errors are
    :class:`SessionNotFoundError` and :class:`TitleInUseError`.
    """

    #: The name this backend is registered under (``store.backend``).
    backend_name: str = ""

    def __new__(cls, *args: Any, **kwargs: Any) -> SessionStore:
        if cls is SessionStore:  # the contract itself: third parties' old way to the local file
            warnings.warn(
                "SessionStore(path) is deprecated; open a store with hermes.kernel.store.open_store(config, home) "
                "or call a backend class (hermes.kernel.store.SQLiteSessionStore(path))",
                DeprecationWarning,
                stacklevel=2,
            )
            return super().__new__(default_backend())
        return super().__new__(cls)

    # -- opening -----------------------------------------------------------------

    @classmethod
    @abc.abstractmethod
    def from_config(cls, *, url: str | None, home: Any, options: Mapping[str, Any]) -> SessionStore:
        """Open the store named by ``url`` (None: the backend's default for ``home``).

        ``options`` is the whole ``store`` config section (``synchronous``, ``pool_size``, ...).
        """

    @classmethod
    def for_home(cls, home: Any, **kwargs: Any) -> SessionStore:
        """This backend (on the contract: the default one) at ``home.state_db`` (a :class:`~hermes.kernel.HermesHome`)."""
        return (default_backend() if cls is SessionStore else cls)(home.state_db, **kwargs)

    @abc.abstractmethod
    def close(self) -> None:
        """Release connections; the store is unusable afterwards."""

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def describe(self) -> str:
        """Where the data lives, for people (never with a password)."""
        return self.backend_name

    def health(self) -> list[HealthCheck]:
        """Checks for ``hermes doctor``: connectivity, migrations, extensions."""
        return [HealthCheck("store", True, self.describe())]

    # -- sessions ----------------------------------------------------------------

    @abc.abstractmethod
    def create_session(
        self,
        *,
        source: str = "cli",
        model: str | None = None,
        system_prompt: str | None = None,
        parent_session_id: str | None = None,
        title: str | None = None,
        session_id: str | None = None,
        tenant: str | None = None,
    ) -> str:
        """Open a new session of ``tenant`` (None: of no tenant) and return its id."""

    @abc.abstractmethod
    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """The session row as a dict, or None."""

    def require_session(self, session_id: str) -> dict[str, Any]:
        """The session row, or SessionNotFoundError."""
        session = self.get_session(session_id)
        if session is None:
            raise SessionNotFoundError(session_id)
        return session

    @abc.abstractmethod
    def resolve_session_id(self, text: str) -> str:
        """An exact id, or a prefix that matches exactly one session."""

    @abc.abstractmethod
    def list_sessions(
        self, *, source: str | None = None, limit: int | None = 50, tenant: str | None = None, offset: int = 0
    ) -> list[dict[str, Any]]:
        """Sessions, newest first (``started_at``, then id: the same order every time).

        ``tenant`` given: that tenant's sessions only. ``offset`` skips that many rows of the
        order, so pages of ``limit`` follow one another (a negative one is a ValueError).
        """

    @abc.abstractmethod
    def end_session(self, session_id: str, reason: str) -> None:
        """Mark a session ended with ``reason``."""

    @abc.abstractmethod
    def set_title(self, session_id: str, title: str | None) -> str | None:
        """Set (or clear) the title; returns the sanitised title. Titles are unique."""

    # -- messages ----------------------------------------------------------------

    def append_message(self, session_id: str, message: Mapping[str, Any]) -> int:
        """Append one message; returns its id."""
        return self.append_messages(session_id, [message])[0]

    @abc.abstractmethod
    def append_messages(self, session_id: str, messages: Iterable[Mapping[str, Any]]) -> list[int]:
        """Append messages in one transaction (all or none), in order; returns their ids.

        Concurrent appends to one session from many processes or hosts never
        interleave inside one call, lose or duplicate a message.
        """

    @abc.abstractmethod
    def get_messages(self, session_id: str) -> list[dict[str, Any]]:
        """Every message of a session, oldest first, content decoded exactly."""

    #: True when :meth:`claim_writer` leases for real: a claim another live one holds is refused.
    writer_leases: bool = False

    def claim_writer(self, session_id: str) -> WriterClaim:
        """Mark ``session_id`` open for writing by this process until released or the process ends.

        While another claim holds it, the claim is refused (``granted`` False, ``holder`` naming
        who). A chat claims its session before it repairs or appends anything (see
        :mod:`hermes.kernel.store.writers`). This default grants every claim unchecked.
        """
        from .writers import WriterClaim

        return WriterClaim(session_id, enforced=False)

    # -- lineage -----------------------------------------------------------------

    @abc.abstractmethod
    def lineage_root(self, session_id: str) -> str | None:
        """The first session of the lineage ``session_id`` belongs to."""

    @abc.abstractmethod
    def lineage(self, session_id: str) -> dict[str, Any]:
        """``root_session_id``, ``ancestors`` (nearest first, with end reasons) and ``children``."""

    @abc.abstractmethod
    def branch(self, session_id: str, *, title: str | None = None, source: str | None = None) -> str:
        """A child with the history copied (and the parent's tenant); the parent ends with ``branched``."""

    @abc.abstractmethod
    def compression_child(
        self,
        session_id: str,
        messages: Iterable[Mapping[str, Any]] = (),
        *,
        system_prompt: str | None = None,
        title: str | None = None,
        child_id: str | None = None,
    ) -> str:
        """End ``session_id`` with ``compression`` and continue in a child (of its tenant) holding ``messages``."""

    @abc.abstractmethod
    def record_compaction(
        self,
        session_id: str,
        *,
        parent_session_id: str | None,
        engine: str,
        fidelity: float | None,
        missing: Sequence[str] = (),
        handoff: str | None = None,
        edited: bool = False,
        details: dict[str, Any] | None = None,
        created_at: float | None = None,
    ) -> None:
        """Store (or replace) what the compression that created ``session_id`` kept.

        :func:`hermes.kernel.store.compactions.compaction_row` gives the values to store
        (``created_at`` is now unless given: ``sessions migrate`` keeps the original).
        """

    @abc.abstractmethod
    def compaction(self, session_id: str) -> dict[str, Any] | None:
        """The compression that created ``session_id`` (else the newest that ended it), or None.

        Keys are :data:`~hermes.kernel.store.compactions.COMPACTION_FIELDS`, with
        ``missing`` a list, ``details`` a dict and ``edited`` a bool. Deleting a
        session deletes the record of the compression that created it.
        """

    @abc.abstractmethod
    def resume(self, session_id: str, *, follow_compression: bool = True) -> Conversation:
        """Load a session to continue (the compression tip when ``follow_compression``).

        Messages are chat dicts: role, content and whichever of tool calls, ids, reasoning and
        marker are set (:func:`~hermes.kernel.store.session_store.chat_rows` builds them from rows).
        """

    @abc.abstractmethod
    def compression_ancestry(self, session_id: str) -> list[str]:
        """``session_id`` and the sessions it continues through compression, oldest first."""

    # -- usage -------------------------------------------------------------------

    @abc.abstractmethod
    def record_usage(self, session_id: str, usage: CanonicalUsage, cost: CostResult | None = None) -> None:
        """Add one provider response's tokens, API call(s) and cost to the session."""

    @abc.abstractmethod
    def usage(self, session_id: str | None = None) -> SessionUsage:
        """Accumulated usage of one session, or of all sessions."""

    # -- search ------------------------------------------------------------------

    @abc.abstractmethod
    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        sort: SortOrder = "rank",
        source: str | None = None,
        role: str | None = None,
        session_id: str | None = None,
        context: bool = True,
        tenant: str | None = None,
        deadline: float | None = None,
    ) -> list[SearchHit]:
        """Messages matching ``query`` (:mod:`hermes.kernel.store.query` syntax; never raises on it).

        ``tenant`` given: hits in that tenant's sessions only, and their lineage roots
        never outside it. ``deadline`` is a ``time.monotonic()`` value: once it has passed,
        the search stops where it is and returns the hits found by then, those not yet
        highlighted with a plain start of their text (:func:`hermes.kernel.store.snippets.snippet_by`).
        """

    # -- removal, export and bulk copy -------------------------------------------

    @abc.abstractmethod
    def delete_session(self, session_id: str) -> None:
        """Delete a session and its messages (its children re-link to its parent)."""

    @abc.abstractmethod
    def prune(self, older_than_days: float, *, now: float | None = None) -> list[str]:
        """Delete sessions idle for more than ``older_than_days``; returns their ids."""

    def export(self, session_id: str, fmt: str = "jsonl") -> str:
        """The session and its messages as ``jsonl`` or ``markdown``."""
        from ..errors import HermesError
        from .export import EXPORT_FORMATS, export_jsonl, export_markdown

        if fmt not in EXPORT_FORMATS:
            raise HermesError(f"unknown export format {fmt!r}; use one of: {', '.join(EXPORT_FORMATS)}")
        session = self.require_session(session_id)
        messages = self.get_messages(session_id)
        return export_jsonl(session, messages) if fmt == "jsonl" else export_markdown(session, messages)

    @abc.abstractmethod
    def session_ids(self, *, after: str | None = None, limit: int = 500) -> list[str]:
        """Session ids in ascending order, ``after`` exclusive: a stable cursor for copying."""

    @abc.abstractmethod
    def counts(self) -> dict[str, int]:
        """``{"sessions": n, "messages": m}`` over the whole store."""

    @abc.abstractmethod
    def import_sessions(self, batch: Sequence[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]]) -> ImportResult:
        """Copy whole sessions (row, messages) in one transaction, keeping ids, titles, tenants, usage and times.

        Idempotent: a session already present with as many messages is
        skipped; one present with a different count is reported as a
        conflict and left as it is. A session whose title another session
        has in the target gets the lineage's next ``#N`` title (reported in
        :attr:`ImportResult.renamed`). Parents need not be present yet.
        Backends share these rules through :func:`.importing.import_batch`.
        """
