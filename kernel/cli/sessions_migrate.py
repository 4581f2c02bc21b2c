"""``hermes sessions migrate --to URL [--from URL]``: copy every session to another store."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from ..errors import HermesError
from ._state import print_json, state

if TYPE_CHECKING:
    from ..store.migrate import CopyReport

__all__ = ["copy_with_progress", "migrate"]


def migrate(
    ctx: typer.Context,
    to: Annotated[str, typer.Option("--to", help="Target store URL: postgresql://user@host/db, sqlite:///path or a path.")],
    from_: Annotated[
        Optional[str], typer.Option("--from", help="Source store URL (default: the configured store).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Copy every session, message, lineage link, title and usage row to another store.

    Batched and idempotent: run it again after an interruption and it goes on
    where it stopped. Counts are verified at the end.
    """
    from ..store import open_store
    from ..store.migrate import copy_sessions
    from ..store.opening import redact_url

    app = state(ctx)
    source = open_store(app.config, app.home, app.host, url=from_)
    try:
        target = open_store(app.config, app.home, app.host, url=to)
    except BaseException:
        source.close()
        raise
    try:
        if source.describe() == target.describe():
            raise HermesError("the source and the target are the same store; give another --to URL")
        report = copy_with_progress(copy_sessions, source, target, quiet=as_json)
    finally:
        source.close()
        target.close()
    if as_json:
        print_json(report.as_dict())
    else:
        copied = (
            f"copied {report.imported} sessions, {report.skipped} already there, "
            f"{report.renumbered} titles renumbered (taken in the target)"
        )
        typer.echo(
            f"{copied}; {report.sessions} sessions and {report.messages} messages verified in {redact_url(to)}"
            if report.ok
            else f"{report.sessions} sessions read, {copied}; "
            f"{len(report.conflicts) + len(report.missing)} not copied (see below)"
        )
    if not report.ok:
        raise HermesError(_problem(report))


def _problem(report: CopyReport) -> str:
    """One line naming what differs: message counts of conflicting sessions, sessions that never arrived."""
    parts = []
    if report.conflicts:
        shown = "; ".join(_counts(report, sid) for sid in report.conflicts[:5])
        parts.append(
            f"{len(report.conflicts)} session(s) already in the target hold a different number of messages ({shown}); "
            "delete them there (`hermes sessions delete ID`) and run migrate again"
        )
    if report.missing:
        parts.append(f"{len(report.missing)} session(s) did not reach the target ({', '.join(report.missing[:5])}); run migrate again")
    return "; and ".join(parts)


def _counts(report: CopyReport, sid: str) -> str:
    pair = report.mismatches.get(sid)
    if pair is None:
        return sid
    there = "none" if pair[1] is None else pair[1]
    return f"{sid}: {pair[0]} in the source, {there} in the target"


def copy_with_progress(copy: Callable[..., CopyReport], source: Any, target: Any, *, quiet: bool) -> CopyReport:
    """Run ``copy(source, target, progress=...)`` under a progress bar on stderr (none when ``quiet``)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    with Progress(
        TextColumn("copying sessions"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        console=console, disable=quiet, transient=False,
    ) as bar:  # fmt: skip
        task = bar.add_task("copy", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        try:
            return copy(source, target, progress=progress)
        except KeyboardInterrupt:
            console.print("interrupted; run the same command again to go on where it stopped")
            raise typer.Exit(130) from None
