"""The ``session_search`` tool: the agent searches its own past sessions.

Hits are grouped under their lineage root, so a conversation compressed many
times reads as one conversation, and each carries a snippet and one message
of context either side. The store comes from ``ctx.services["store"]`` or,
failing that, from ``ctx.home.state_db``.

When the context carries a tenant (``ctx.services[TENANT_SERVICE]``), the tool
sees that tenant's sessions only: the store filters the search, a session named
by id must be one of them (another tenant's id is "not found", word for word as a
missing one), and any hit or lineage root the store returns from outside the
tenant is dropped before anything of it is shown.

A search has a time budget (``sessions.search_time_budget``): the store is
given it as a deadline and returns the hits found by then, and the tool waits
no longer than the budget and a short grace for a store that cannot stop. The
result then says it is incomplete (``complete: false`` and a note).
"""

from __future__ import annotations

import inspect
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from hermes.kernel import TENANT_SERVICE, Tool, ToolContext, ToolError

__all__ = ["DEFAULT_TIME_BUDGET", "TOOLS", "session_search", "session_search_tool"]

MAX_LIMIT = 50
DEFAULT_TIME_BUDGET = 10.0
# How long past the deadline to wait for a store to hand over what it found.
_GRACE_S = 1.0

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "Words or a phrase to find. Every word must match; quotes and operators are plain text. "
            "Substrings and CJK text are found too.",
        },
        "limit": {"type": "integer", "description": f"Maximum hits (1-{MAX_LIMIT}, default 10).", "minimum": 1},
        "sort": {"type": "string", "enum": ["rank", "time"], "description": "rank: best match first; time: newest first."},
        "role": {"type": "string", "enum": ["user", "assistant", "tool"], "description": "Only messages with this role."},
        "source": {"type": "string", "description": "Only sessions from this source (cli, api, subagent, ...)."},
        "session_id": {"type": "string", "description": "Only this session (an id from an earlier search's hits)."},
        "include_current": {
            "type": "boolean",
            "description": "Also search the current session (default false: its messages are already in context).",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}


def _open_store(ctx: ToolContext) -> tuple[Any, bool]:
    """``(store, owned)``: the shared store, or one opened on the home's state.db (closed after use)."""
    store = (ctx.services or {}).get("store")
    if store is not None:
        return store, False
    path = getattr(ctx.home, "state_db", None)
    if path is None:
        raise ToolError("session search is unavailable: no session store was given and no HERMES_HOME is known")
    from hermes.kernel.store import open_store, store_settings

    if store_settings(ctx.config).backend == "sqlite" and not store_settings(ctx.config).url and not path.exists():
        raise ToolError("there are no past sessions to search yet")
    return open_store(ctx.config, ctx.home), True


def _int(value: Any, default: int) -> int:
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ToolError(f"argument 'limit' must be an integer, got {value!r}") from None
    if number < 1:
        raise ToolError("argument 'limit' must be at least 1")
    return min(number, MAX_LIMIT)


def _session_id(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ToolError(f"argument 'session_id' must be a string, got {value!r}")
    return value


def _search(store: Any, query: str, tenant: str | None, session_id: str | None, **filters: Any) -> list[Any]:
    """The store's hits, every one inside ``tenant`` (when given) and ``session_id`` (when given)."""
    from hermes.kernel.store import tenant_session

    if session_id is not None and tenant_session(store, session_id, tenant) is None:
        # The same words for a missing id and another tenant's: nothing tells them apart.
        raise ToolError(f"no session {session_id!r}; give a session_id from this tool's earlier results")
    if session_id is not None:
        filters["session_id"] = session_id
    if tenant is not None:  # never passed otherwise: a store from before tenants takes no such argument
        filters["tenant"] = tenant
    hits = store.search(query, **filters)
    if tenant is None:
        return hits
    # The store already filtered; nothing another tenant wrote is shown even if one did not.
    visible = {sid for sid in {h.session_id for h in hits} | {h.root_session_id for h in hits}
               if tenant_session(store, sid, tenant) is not None}  # fmt: skip
    kept = [h for h in hits if h.session_id in visible]
    for hit in kept:
        if hit.root_session_id not in visible:
            hit.root_session_id, hit.root_title = hit.session_id, hit.title
    return kept


class _SearchThread:
    """One daemon thread that runs searches, so a search the tool stopped waiting for
    finishes (or stops at its deadline) beside the turn, never holds up the process's
    exit, and one thread keeps reusing its store's reader connection."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()

    def submit(self, job: Callable[[], Any]) -> Future[Any]:
        future: Future[Any] = Future()
        self._jobs.put((job, future))
        with self._guard:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="session-search", daemon=True)
                self._thread.start()
        return future

    def _run(self) -> None:
        while True:
            job, future = self._jobs.get()
            try:
                future.set_result(job())
            except BaseException as exc:  # handed to the caller, whatever it is
                future.set_exception(exc)


_WORKER = _SearchThread()


def _budget(ctx: ToolContext) -> float:
    value = ctx.config.get("sessions.search_time_budget", DEFAULT_TIME_BUDGET) if ctx.config is not None else None
    try:
        return max(0.1, float(value)) if value is not None else DEFAULT_TIME_BUDGET
    except (TypeError, ValueError):
        return DEFAULT_TIME_BUDGET


def _takes_deadline(store: Any) -> bool:
    """Whether the store's search accepts ``deadline`` (a third party's may predate it)."""
    try:
        return "deadline" in inspect.signature(store.search).parameters
    except (TypeError, ValueError):
        return False


def _timed_search(store: Any, owned: bool, query: str, options: dict[str, Any], budget: float,
                  tenant: str | None = None, session_id: str | None = None) -> tuple[list[Any], bool]:  # fmt: skip
    """``(hits, complete)``: the hits the store found within ``budget`` seconds (inside ``tenant``)."""
    deadline = time.monotonic() + budget
    if _takes_deadline(store):
        options = {**options, "deadline": deadline}

    def job() -> tuple[list[Any], float]:
        try:
            return _search(store, query, tenant, session_id, **options), time.monotonic()
        finally:
            if owned:
                store.close()

    future = _WORKER.submit(job)
    try:
        hits, finished = future.result(timeout=budget + _GRACE_S)
    except FutureTimeout:
        return [], False  # still running: it closes its own store when it ends
    return hits, finished <= deadline


def session_search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Handler: search stored sessions (the tenant's, when there is one) and group the hits by conversation."""
    query = args.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ToolError("argument 'query' must be a non-empty string")
    sort = args.get("sort") or "rank"
    if sort not in ("rank", "time"):
        raise ToolError("argument 'sort' must be 'rank' or 'time'")
    limit = _int(args.get("limit"), 10)
    include_current = bool(args.get("include_current"))
    session_id = _session_id(args.get("session_id"))
    tenant = (ctx.services or {}).get(TENANT_SERVICE)
    from hermes.kernel.redact import redact_data, redact_snippet

    budget = _budget(ctx)
    store, owned = _open_store(ctx)
    # Ask for a few more, since the current session's hits may be dropped.
    options = {"limit": limit + 20, "sort": sort, "role": args.get("role") or None, "source": args.get("source") or None}
    hits, complete = _timed_search(store, owned, query, options, budget, tenant, session_id)
    conversations: dict[str, dict[str, Any]] = {}
    count = 0
    for hit in hits:
        if not include_current and ctx.session_id and hit.session_id == ctx.session_id:
            continue
        if count >= limit:
            break
        count += 1
        group = conversations.setdefault(
            hit.root_session_id, {"root_session_id": hit.root_session_id, "title": hit.root_title, "hits": []}
        )
        group["hits"].append(
            {
                "session_id": hit.session_id,
                "message_id": hit.message_id,
                "role": hit.role,
                "snippet": redact_snippet(hit.snippet),
                "before": hit.before,
                "after": hit.after,
            }
        )
    result: dict[str, Any] = {"query": query, "total_hits": count, "complete": complete, "conversations": list(conversations.values())}
    if not complete:
        result["note"] = (
            f"the search ran past its time budget of {budget:g} s (sessions.search_time_budget); these are the hits "
            "found by then, some with a plain snippet. More words, a role or a source make it faster."
        )
    # Sessions stored before redaction (or with it off) must not leak back through a search.
    return redact_data(result)


session_search_tool = Tool(
    name="session_search",
    description=(
        "Search your own past conversations (all stored sessions, including compressed history). "
        "Returns matching messages with a snippet and the message before and after, grouped by conversation."
    ),
    parameters=PARAMETERS,
    handler=session_search,
    toolset="session_search",
    read_only=True,
    max_result_chars=20_000,
)

TOOLS = [session_search_tool]
