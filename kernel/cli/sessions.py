"""``hermes sessions list|show|search|branch|export|delete|prune|compress|handoff``."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from ..errors import HermesError
from ._state import print_json, state

if TYPE_CHECKING:
    from ..store import SessionStore

__all__ = ["LIST_FIELDS", "SEARCH_FIELDS", "app", "open_store"]

app = typer.Typer(help="Browse, search, branch, export and delete stored sessions.", no_args_is_help=True)

LIST_FIELDS = ("id", "title", "source", "model", "parent_session_id", "started_at", "ended_at", "end_reason", "message_count")
SEARCH_FIELDS = ("session_id", "root_session_id", "message_id", "role", "snippet")

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON.")]
IdArg = Annotated[str, typer.Argument(help="Session id (or a unique prefix of one).")]
YesFlag = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]


def open_store(ctx: typer.Context, *, create: bool = False, write: bool = False) -> SessionStore | None:
    """The store config chooses; None when it is the default state.db, which does not exist yet, and not ``create``.

    Without ``write`` a default state.db that cannot be opened for writing (a
    read-only HERMES_HOME) is opened read-only, so reading commands keep working.
    """
    import sqlite3

    from ..store import open_store as open_configured, store_settings

    app = state(ctx)
    settings = store_settings(app.config)
    path = app.home.state_db
    if settings.backend == "sqlite" and not settings.url and not create and not path.exists():
        return None
    try:
        return open_configured(app.config, app.home, app.host)
    except (sqlite3.OperationalError, PermissionError) as exc:
        if write or create or settings.backend != "sqlite" or settings.url or not _is_readonly_error(exc):
            raise
        return open_configured(app.config, app.home, app.host, readonly=True)


def _is_readonly_error(exc: BaseException) -> bool:
    """The store cannot be opened for writing (read-only home, or a full disk): reading still works."""
    text = str(exc).lower()
    unwritable = ("readonly", "read-only", "unable to open", "disk is full", "disk i/o error")
    return isinstance(exc, PermissionError) or any(part in text for part in unwritable)


def _require_store(ctx: typer.Context, session_id: str) -> SessionStore:
    store = open_store(ctx)
    if store is None:
        from ..store import SessionNotFoundError

        raise SessionNotFoundError(session_id)
    return store


def _iso(ts: float | None) -> str | None:
    from ..store.export import iso_time

    return iso_time(ts)


def _local(ts: float | None) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M") if ts else ""


def _public(session: dict[str, Any], fields: tuple[str, ...] = LIST_FIELDS) -> dict[str, Any]:
    return {k: _iso(session[k]) if k.endswith("_at") else session[k] for k in fields}


@app.command("list")
def list_(
    ctx: typer.Context,
    as_json: JsonFlag = False,
    source: Annotated[Optional[str], typer.Option("--source", help="Only sessions from SOURCE (cli, api, subagent, ...).")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="At most N sessions, newest first.")] = 50,
) -> None:
    """List sessions, newest first."""
    store = open_store(ctx)
    sessions = [] if store is None else store.list_sessions(source=source, limit=limit)
    if store is not None:
        store.close()
    from ..redact import redact_data

    sessions = redact_data(sessions)  # titles come from the first message, which may hold a key
    if as_json:
        print_json([_public(s) for s in sessions])
        return
    if not sessions:
        typer.echo("no sessions yet")
        return
    # Plain aligned lines rather than a table: ids (what every other command
    # takes) must never wrap, and the title goes last because it is the longest.
    rows = [
        (s["id"], _local(s["started_at"]), str(s["message_count"]), s["source"], s["end_reason"] or "", s["title"] or "")
        for s in sessions
    ]
    header = ("id", "started", "msgs", "source", "ended", "title")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    for row in [header, *rows]:
        typer.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1])


# Tool outputs longer than this are cut in `sessions show` (--full shows them whole).
SHOW_TOOL_CHARS = 1_000


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters; --full shows all]"


@app.command("show")
def show(
    ctx: typer.Context,
    session_id: IdArg,
    as_json: JsonFlag = False,
    full: Annotated[bool, typer.Option("--full", help="Show long tool outputs whole.")] = False,
) -> None:
    """Show a session's details, lineage and messages."""
    from ..redact import redact_data

    with _require_store(ctx, session_id) as store:
        sid = store.resolve_session_id(session_id)
        session, lineage, messages = store.require_session(sid), store.lineage(sid), store.get_messages(sid)
        compaction = store.compaction(sid)
    # Whatever was stored (older sessions, user messages), the screen never shows a secret.
    session, lineage, messages = redact_data(session), redact_data(lineage), redact_data(messages)
    compaction = redact_data(compaction)
    if as_json:
        data = {k: _iso(v) if k.endswith("_at") else v for k, v in session.items()}
        print_json({"session": data, "lineage": lineage, "messages": messages, "compaction": _compaction_json(compaction)})
        return
    typer.echo(f"session {sid}  {session['title'] or ''}".rstrip())
    typer.echo(f"  source {session['source']} · model {session['model'] or '-'} · started {_local(session['started_at'])}")
    if session["ended_at"]:
        typer.echo(f"  ended {_local(session['ended_at'])} ({session['end_reason']})")
    if lineage["ancestors"]:
        chain = " <- ".join(f"{a['id']} ({a['end_reason']})" for a in lineage["ancestors"])
        typer.echo(f"  lineage: {sid} <- {chain}")
    for child in lineage["children"]:
        typer.echo(f"  child: {child['id']} {child['title'] or ''}".rstrip())
    if compaction is not None and compaction["session_id"] == sid:
        score = "no probe" if compaction["fidelity"] is None else f"fidelity {compaction['fidelity']:.2f}"
        typer.echo(f"  compacted from {compaction['parent_session_id']}: {score}, {len(compaction['missing'])} missing"
                   f"{', note edited' if compaction['edited'] else ''} (hermes sessions handoff {sid})")  # fmt: skip
    typer.echo("")
    from ..store.export import content_text
    from ._terminal import printable

    for m in messages:
        who = m["role"] + (f" ({m['tool_name']})" if m["tool_name"] else "")
        text = content_text(m["content"])
        typer.echo(printable(f"[{m['id']}] {who}: {text if full or m['role'] != 'tool' else _cut(text, SHOW_TOOL_CHARS)}"))
        for call in m["tool_calls"] or []:
            function = call.get("function") or {} if isinstance(call, dict) else {}
            shown = f"{function.get('name')}({function.get('arguments') or ''})" if function else str(call)
            typer.echo(printable(f"    tool call: {shown}"))


@app.command("search")
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help='Words to find; OR, NOT, "phrases" and prefix* work as in SQLite FTS5.')],
    as_json: JsonFlag = False,
    source: Annotated[Optional[str], typer.Option("--source", help="Only sessions from SOURCE.")] = None,
    role: Annotated[Optional[str], typer.Option("--role", help="Only messages with ROLE (user, assistant, tool).")] = None,
    session: Annotated[Optional[str], typer.Option("--session", help="Only within this session.")] = None,
    sort: Annotated[str, typer.Option("--sort", help="rank (BM25) or time (newest first).")] = "rank",
    limit: Annotated[int, typer.Option("--limit", min=1, help="At most N hits.")] = 20,
) -> None:
    """Search every stored message; hits name their lineage root."""
    if sort not in ("rank", "time"):
        raise HermesError(f"unknown --sort {sort!r}; use rank or time")
    store = open_store(ctx)
    hits = []
    if store is not None:
        with store:
            found = store.search(query, limit=limit * 3, sort=sort, source=source, role=role, session_id=session)  # type: ignore[arg-type]
        # A compression child repeats messages of its parent: show each once per lineage.
        seen: set[tuple[str, str, str]] = set()
        for hit in found:
            key = (hit.root_session_id, hit.role, hit.snippet)
            if key not in seen:
                seen.add(key)
                hits.append(hit)
        hits = hits[:limit]
    from ..redact import redact_data, redact_snippet, redact_text

    if as_json:
        rows = [{k: getattr(h, k) for k in SEARCH_FIELDS} for h in hits]
        print_json(redact_data([{**r, "snippet": redact_snippet(r["snippet"])} for r in rows]))
        return
    if not hits:
        typer.echo("no matches")
        return
    from ._terminal import printable

    for h in hits:
        root = "" if h.root_session_id == h.session_id else f" (in {h.root_title or h.root_session_id})"
        typer.echo(printable(redact_text(f"{h.session_id}{root} #{h.message_id} {h.role}: ") + redact_snippet(h.snippet)))


@app.command("branch")
def branch(
    ctx: typer.Context,
    session_id: IdArg,
    title: Annotated[Optional[str], typer.Option("--title", help="Title of the new branch (default: numbered after the parent).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Start a new session with a copy of SESSION_ID's history (of its live tip, if it was compressed)."""
    with _require_store(ctx, session_id) as store:
        parent = store.resolve_session_id(session_id)
        child = store.branch(parent, title=title)
        row = store.require_session(child)
    from ..redact import redact_data, redact_text

    if as_json:
        print_json(redact_data({"branched_from": row["parent_session_id"], "requested": parent, "session": _public(row)}))
        return
    typer.echo(redact_text(f"branched {child}" + (f" ({row['title']})" if row["title"] else "")))


@app.command("export")
def export(
    ctx: typer.Context,
    session_id: IdArg,
    fmt: Annotated[str, typer.Option("--format", "-f", help="jsonl (lossless) or markdown.")] = "jsonl",
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write to FILE instead of stdout.")] = None,
) -> None:
    """Export a session with its messages."""
    from ..store.export import EXPORT_FORMATS

    if fmt not in EXPORT_FORMATS:
        raise HermesError(f"unknown --format {fmt!r}; use one of: {', '.join(EXPORT_FORMATS)}")
    with _require_store(ctx, session_id) as store:
        text = store.export(store.resolve_session_id(session_id), fmt)
    if output is None:
        typer.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise HermesError(f"cannot write {output}: {exc.strerror or exc}; check that its folder exists and is writable") from None
    typer.echo(f"wrote {output}")


@app.command("delete")
def delete(ctx: typer.Context, session_id: IdArg, yes: YesFlag = False, as_json: JsonFlag = False) -> None:
    """Delete a session and its messages (its children stay, re-linked to its parent)."""
    with _require_store(ctx, session_id) as store:
        sid = store.resolve_session_id(session_id)
        if not yes and not typer.confirm(f"Delete session {sid} and its messages?"):
            raise typer.Exit(1)
        store.delete_session(sid)
    if as_json:
        print_json({"deleted": [sid]})
        return
    typer.echo(f"deleted {sid}")


@app.command("prune")
def prune(
    ctx: typer.Context,
    older_than: Annotated[float, typer.Option("--older-than", help="Delete sessions idle for more than DAYS days.")],
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Delete every ended session idle for more than --older-than DAYS.

    Open sessions (a chat may be using them) and sessions active within the
    last hour are never deleted; the command says how many it skipped.
    """
    import time

    from ..store.pruning import PRUNE_ACTIVE_WITHIN_S

    if older_than < 0:
        raise HermesError("--older-than must be zero or more days")
    store = open_store(ctx)
    deleted: list[str] = []
    skipped_open: list[str] = []
    skipped_recent: list[str] = []
    if store is not None:
        with store:
            if not yes and not typer.confirm(f"Delete every ended session idle for more than {older_than:g} days?"):
                raise typer.Exit(1)
            now = time.time()
            cutoff = now - older_than * 86400
            for row in store.list_sessions(limit=None):
                last = row["updated_at"] or row["ended_at"] or row["started_at"]
                if last >= cutoff:
                    continue
                if row["ended_at"] is None:
                    skipped_open.append(row["id"])
                elif last > now - PRUNE_ACTIVE_WITHIN_S:
                    skipped_recent.append(row["id"])
            deleted = store.prune(older_than, now=now)
    if as_json:
        print_json({"deleted": deleted, "skipped_open": skipped_open, "skipped_recent": skipped_recent})
        return
    line = f"pruned {len(deleted)} session{'s' if len(deleted) != 1 else ''}"
    if skipped_open:
        line += f"; skipped {len(skipped_open)} open (never ended: a chat may be using them)"
    if skipped_recent:
        line += f"; skipped {len(skipped_recent)} active within the last hour"
    typer.echo(line)


@app.command("compress")
def compress(
    ctx: typer.Context,
    session_id: IdArg,
    focus: Annotated[Optional[str], typer.Option("--focus", help="Topic the summary should keep the most of.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Compress a session now: it ends with 'compression' and a child continues it."""
    from ..agent.factory import build_agent

    app_state = state(ctx)
    _require_store(ctx, session_id).close()
    agent = build_agent(host=app_state.host, config=app_state.config, home=app_state.home, resume=session_id, stream=False)
    try:
        old = agent.session_id
        if not agent.compress(focus_topic=focus, manual=True):
            if as_json:
                print_json({"session_id": old, "compressed": False, "child_session_id": None, "note": agent.compress_note})
            else:
                typer.echo(f"{old}: not compressed: {agent.compress_note or 'the context engine left it as it was'}")
            return
        if as_json:
            print_json({"session_id": old, "compressed": True, "child_session_id": agent.session_id, "note": agent.compress_note})
        else:
            typer.echo(f"compressed {old} into {agent.session_id}: {agent.compress_note}")
    finally:
        agent.close()


def _compaction_json(record: dict[str, Any] | None) -> dict[str, Any] | None:
    if record is None:
        return None
    return {k: _iso(v) if k.endswith("_at") else v for k, v in record.items()}


@app.command("handoff")
def handoff(ctx: typer.Context, session_id: IdArg, as_json: JsonFlag = False) -> None:
    """Print the handoff note of the compression that created SESSION_ID (or that ended it)."""
    with _require_store(ctx, session_id) as store:
        sid = store.resolve_session_id(session_id)
        record = store.compaction(sid)
    if record is None:
        raise HermesError(f"session {sid} was not created or ended by a compression; see `hermes sessions show {sid}`")
    if as_json:
        print_json(_compaction_json(record))
        return
    score = "" if record["fidelity"] is None else f" · fidelity {record['fidelity']:.2f}"
    edited = " · edited in review" if record["edited"] else ""
    typer.echo(f"compression {record['parent_session_id']} -> {record['session_id']} ({record['engine']}){score}{edited}")
    for item in record["missing"]:
        typer.echo(f"  missing: {item}")
    typer.echo("")
    typer.echo(record["handoff"] or "(no note: the engine only shortened old tool outputs)")


def _register_migrate() -> None:
    from .sessions_migrate import migrate

    app.command("migrate")(migrate)


_register_migrate()
