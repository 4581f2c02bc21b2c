"""``hermes import hermes [PATH]``: copy a Hermes Agent history into hermes-kernel's own store.

Hermes Agent's ``state.db`` is read, never written (docs/hermes-agent.md says
why the history is imported rather than shared in place). The copy is the one
``hermes sessions migrate`` makes: whole sessions in batches, each batch one
transaction, so an interrupted import keeps what it finished and running it
again skips it. A session that Hermes Agent continued after an earlier import
gets the new messages and usage appended; one continued in both programs is
left as it is and reported.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from hermes.kernel import HermesError

if TYPE_CHECKING:
    from .state_db import HermesStateDB

# The `hermes.commands` entry point names `app`: `hermes --help` imports this module for its
# help line, so the reader of state.db (sqlite3, the kernel's store) loads inside the commands.

__all__ = ["app", "default_source", "import_hermes", "open_target", "refresh_grown"]

app = typer.Typer(
    name="import",
    help="Import history from another agent's home (Hermes Agent's state.db).",
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_show_locals=False,
)


@app.callback()
def _group() -> None:
    """Import history from another agent's home (Hermes Agent's state.db)."""


def default_source(home: Any) -> Path:
    """The Hermes Agent ``state.db`` to import when no PATH is given: this home's, else ``~/.hermes``'s."""
    from .state_db import is_hermes_state_db

    for candidate in (home.shared_state_db, Path.home() / ".hermes" / "state.db"):
        if is_hermes_state_db(candidate) is not None:
            return candidate
    raise HermesError(
        f"no Hermes Agent state.db in {home.path} or ~/.hermes; give its path: `hermes import hermes PATH`"
    )


def open_target(app_state: Any, source: Path) -> Any:
    """The kernel store to import into: the configured one, or the home's own file beside Hermes Agent's."""
    from hermes.kernel.store import open_store, store_settings

    from .state_db import is_hermes_state_db

    settings = store_settings(app_state.config)
    home = app_state.home
    if settings.backend == "sqlite" and not settings.url:
        path = home.state_db
        if is_hermes_state_db(path) is not None:
            path = home.own_state_db
        if path.resolve() == source.resolve():
            raise HermesError(f"{source} is the store hermes-kernel would write; give another path")
        # An explicit path keeps the sqlite backend and the rest of the store section (synchronous).
        return open_store(app_state.config, home, app_state.host, url=str(path))
    return open_store(app_state.config, home, app_state.host)


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.get("role") == b.get("role") and a.get("content") == b.get("content") and a.get("tool_call_id") == b.get("tool_call_id")


def refresh_grown(source: HermesStateDB, target: Any, ids: list[str]) -> tuple[list[str], list[str]]:
    """Bring sessions Hermes Agent continued since the last import up to date; ``(updated, diverged)``.

    A target session whose messages are the first ones of the source's gets
    the rest appended and the usage added since; anything else diverged (it
    was continued here too, or rewritten there) and is left alone.
    """
    from hermes.kernel import CanonicalUsage, CostResult

    updated, diverged = [], []
    for sid in ids:
        session, have = source.get_session(sid), target.get_session(sid)
        if session is None or have is None:  # not there at all (a title clash, say): nothing to extend
            diverged.append(sid)
            continue
        theirs, ours = source.get_messages(sid), target.get_messages(sid)
        if len(ours) >= len(theirs) or not all(_same(a, b) for a, b in zip(ours, theirs)):
            diverged.append(sid)
            continue
        target.append_messages(sid, theirs[len(ours) :])
        delta = {k: max(0, (session.get(k) or 0) - (have.get(k) or 0)) for k in
                 ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")}  # fmt: skip
        cost = max(0.0, (session.get("estimated_cost_usd") or 0) - (have.get("estimated_cost_usd") or 0))
        if any(delta.values()) or cost:
            status = session.get("cost_status") or "unknown"
            target.record_usage(
                sid,
                CanonicalUsage(**delta),
                CostResult(cost, status) if status != "unknown" else CostResult(None, "unknown"),
            )
        if session.get("title") and not have.get("title"):
            try:
                target.set_title(sid, session["title"])
            except HermesError:
                pass  # taken meanwhile: the session keeps no title rather than failing the import
        updated.append(sid)
    return updated, diverged


def diverged_alike(source: HermesStateDB, target: Any, skip: set[str]) -> list[str]:
    """Sessions with as many messages on both sides whose last message differs (continued in both).

    Only sessions continued here since the import can differ so: an imported
    session keeps the ``updated_at`` it was imported with until the kernel
    writes to it, so the others cost one row read, not a message load.
    """
    out, cursor = [], None
    while ids := source.session_ids(after=cursor, limit=500):
        for sid in ids:
            if sid in skip:
                continue
            theirs, ours = source.get_session(sid), target.get_session(sid)
            if theirs is None or ours is None or ours.get("updated_at") == theirs.get("updated_at"):
                continue
            mine, hers = target.get_messages(sid), source.get_messages(sid)
            if hers and len(mine) == len(hers) and not _same(mine[-1], hers[-1]):
                out.append(sid)
        cursor = ids[-1]
    return out


def import_hermes(app_state: Any, path: Path | None, *, quiet: bool) -> dict[str, Any]:
    """Import ``path`` (a state.db or a Hermes Agent home) into the kernel's store; the report as a dict."""
    from hermes.kernel.cli.sessions_migrate import copy_with_progress
    from hermes.kernel.store.migrate import copy_sessions

    from .state_db import HermesStateDB

    if path is not None and path.is_dir():
        path = path / "state.db"
    source_path = path if path is not None else default_source(app_state.home)
    source = HermesStateDB(source_path)
    try:
        target = open_target(app_state, source_path)
        try:
            report = copy_with_progress(copy_sessions, source, target, quiet=quiet)
            source.freeze_notes()
            grown = [sid for sid in (*report.conflicts, *report.missing)]
            updated, diverged = refresh_grown(source, target, grown)
            diverged += diverged_alike(source, target, set(grown))
            target_name = target.describe()
        finally:
            target.close()
        result = {
            "source": source.describe(),
            "target": target_name,
            "schema_version": source.schema_version,
            "sessions": report.sessions,
            "messages": report.messages,
            "imported": report.imported,
            "skipped": report.skipped,
            "updated": updated,
            "renamed": report.renamed,
            "diverged": diverged,
            "sources": source.sources(),
            "notes": source.notes.lines(),
            "ok": not diverged,
        }
    finally:
        source.close()
    return result


@app.command("hermes")
def hermes_cmd(
    ctx: typer.Context,
    path: Annotated[
        Optional[Path],
        typer.Argument(help="Hermes Agent's state.db or home folder (default: this home's, else ~/.hermes)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Import Hermes Agent's sessions, messages, lineage, titles and usage; its file is never changed.

    Idempotent and resumable: run it again after an interruption, or after
    using Hermes Agent some more, and it copies only what is new.
    """
    from hermes.kernel.cli import print_json, state

    result = import_hermes(state(ctx), path, quiet=as_json)
    if as_json:
        print_json(result)
    else:
        by_source = ", ".join(f"{name} {n}" for name, n in result["sources"].items())
        typer.echo(
            f"imported {result['imported']} sessions from {result['source']} into {result['target']}; "
            f"{result['skipped']} already there, {len(result['updated'])} brought up to date, "
            f"{len(result['renamed'])} title(s) renumbered (taken here already); "
            f"{result['sessions']} sessions and {result['messages']} messages in all"
            + (f" ({by_source})" if by_source else "")
        )
        for line in result["notes"]:
            typer.echo(f"note: {line}")
    if result["diverged"]:
        names = ", ".join(result["diverged"][:5])
        raise HermesError(
            f"{len(result['diverged'])} session(s) were continued in both programs since the last import ({names}) "
            "and were left as they are here; `hermes sessions delete ID` and import again to take Hermes Agent's version"
        )
