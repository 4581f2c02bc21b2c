"""Copying every session between two stores (any backends): batched, resumable, idempotent, verified.

Sessions are copied whole, in id order, many per transaction
(:meth:`SessionStore.import_sessions`), so an interrupted copy leaves only
complete sessions behind and running it again skips them. The record of the
compression that created a session follows it (written again on every run:
an interrupted run may have stopped between the two). At the end every
source session must be in the target with as many messages; anything else
(a session that diverged in the target) is reported, never overwritten.
A session whose title another session already has in the target is copied
with its lineage's next ``#N`` title and counted in :attr:`CopyReport.renumbered`.

``source`` is any object with ``session_ids``, ``get_session``,
``get_messages``, ``compaction``, ``counts`` and ``describe`` (a store, or a
read-only reader of another format); ``target`` is a :class:`SessionStore`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import HermesError

__all__ = ["BATCH_MESSAGES", "BATCH_SESSIONS", "CopyReport", "copy_sessions"]

BATCH_SESSIONS = 200
BATCH_MESSAGES = 5_000


@dataclass
class CopyReport:
    """What :func:`copy_sessions` did; ``ok`` when the target holds everything the source does."""

    sessions: int = 0
    messages: int = 0
    imported: int = 0
    skipped: int = 0
    conflicts: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    #: Copied sessions whose title was taken in the target: id -> the ``#N`` title they got.
    renamed: dict[str, str] = field(default_factory=dict)
    #: For each conflicting or missing session: (messages in the source, in the target or None if absent).
    mismatches: dict[str, tuple[int, int | None]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.conflicts and not self.missing

    @property
    def renumbered(self) -> int:
        """How many copied sessions got a numbered title because theirs was taken in the target."""
        return len(self.renamed)

    def as_dict(self) -> dict[str, Any]:
        return {
            "sessions": self.sessions,
            "messages": self.messages,
            "imported": self.imported,
            "skipped": self.skipped,
            "conflicts": self.conflicts,
            "missing": self.missing,
            "renumbered": self.renumbered,
            "renamed": self.renamed,
            "mismatches": {sid: list(pair) for sid, pair in self.mismatches.items()},
            "ok": self.ok,
        }


def copy_sessions(
    source: Any,
    target: Any,
    *,
    progress: Callable[[int, int], None] | None = None,
    batch_sessions: int = BATCH_SESSIONS,
    batch_messages: int = BATCH_MESSAGES,
) -> CopyReport:
    """Copy every session of ``source`` into ``target``; ``progress(done, total)`` after each batch."""
    if source.describe() == target.describe():
        raise HermesError("the source and the target are the same store; give another --to URL")
    total = source.counts()["sessions"]
    report = CopyReport()
    expected: dict[str, int] = {}
    cursor: str | None = None
    batch: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    records: dict[str, dict[str, Any]] = {}  # compaction records of the sessions in ``batch``
    size = 0

    def flush() -> None:
        nonlocal batch, size
        if not batch:
            return
        result = target.import_sessions(batch)
        for sid in (*result.imported, *result.skipped):
            if sid in records:
                target.record_compaction(**records[sid])
        records.clear()
        report.imported += len(result.imported)
        report.skipped += len(result.skipped)
        report.conflicts += result.conflicts
        report.renamed.update(getattr(result, "renamed", {}))  # a third-party ImportResult may predate it
        report.sessions += len(batch)
        batch, size = [], 0
        if progress is not None:
            progress(report.sessions, total)

    while True:
        ids = source.session_ids(after=cursor, limit=batch_sessions)
        if not ids:
            break
        for sid in ids:
            session = source.get_session(sid)
            if session is None:  # deleted while we copy: nothing to carry
                continue
            messages = source.get_messages(sid)
            record = source.compaction(sid)
            if record is not None and record["session_id"] == sid:  # not the one that ended it
                records[sid] = record
            expected[sid] = len(messages)
            report.messages += len(messages)
            batch.append((session, messages))
            size += len(messages)
            if len(batch) >= batch_sessions or size >= batch_messages:
                flush()
        cursor = ids[-1]
    flush()
    for sid, count in expected.items():  # verify: every session, with as many messages
        row = target.get_session(sid)
        if row is None or row["message_count"] != count:
            report.mismatches[sid] = (count, None if row is None else row["message_count"])
            if sid not in report.conflicts:
                report.missing.append(sid)
    return report
