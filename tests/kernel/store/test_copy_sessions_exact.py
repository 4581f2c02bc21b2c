"""copy_sessions across several batches: budgets counted from zero, totals summed, pages, vanished sessions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel.store import SessionStore
from hermes.kernel.store.migrate import copy_sessions


@pytest.fixture()
def pair(tmp_path: Path):  # type: ignore[no-untyped-def]
    with SQLiteSessionStore(tmp_path / "a.db") as a, SQLiteSessionStore(tmp_path / "b.db") as b:
        yield a, b


def _fill(store: SessionStore, n: int) -> list[str]:
    ids = [store.create_session(session_id=f"s{i}") for i in range(n)]
    for sid in ids:
        store.append_messages(sid, [{"role": "user", "content": sid}])
    return ids


def test_every_batch_counts_its_messages_from_zero(pair) -> None:  # type: ignore[no-untyped-def]
    a, b = pair
    _fill(a, 4)
    seen: list[int] = []
    copy_sessions(a, b, progress=lambda done, total: seen.append(done), batch_sessions=100, batch_messages=2)
    assert seen == [2, 4]


def test_skips_and_conflicts_add_up_over_batches(pair) -> None:  # type: ignore[no-untyped-def]
    a, b = pair
    ids = _fill(a, 4)
    copy_sessions(a, b)
    for sid in (ids[0], ids[2]):
        b.append_messages(sid, [{"role": "user", "content": "only in b"}])
    report = copy_sessions(a, b, batch_sessions=1)
    assert (report.skipped, report.conflicts, report.imported, report.sessions) == (2, [ids[0], ids[2]], 0, 4)


class _Spy:
    """A source that records its pages and loses one session between listing and reading it."""

    def __init__(self, store: SessionStore, gone: str) -> None:
        self.store, self.gone, self.pages = store, gone, []  # type: list[tuple[str | None, int]]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def describe(self) -> str:
        return "spy"

    def session_ids(self, *, after: str | None = None, limit: int = 500) -> list[str]:
        self.pages.append((after, limit))
        return self.store.session_ids(after=after, limit=limit)

    def get_session(self, sid: str) -> dict[str, Any] | None:
        return None if sid == self.gone else self.store.get_session(sid)


def test_pages_of_batch_size_and_a_session_deleted_meanwhile_is_passed_over(pair) -> None:  # type: ignore[no-untyped-def]
    a, b = pair
    ids = _fill(a, 5)
    source = _Spy(a, gone=ids[2])  # the first of its page
    report = copy_sessions(source, b, batch_sessions=2)
    assert source.pages == [(None, 2), ("s1", 2), ("s3", 2), ("s4", 2)]
    assert (report.sessions, report.imported, report.ok) == (4, 4, True)
    assert [b.get_session(s) is not None for s in ids] == [True, True, False, True, True]


def test_every_record_of_a_compression_chain_is_copied(pair) -> None:  # type: ignore[no-untyped-def]
    a, b = pair
    root = a.create_session()
    mid = a.compression_child(root, [{"role": "user", "content": "1"}])
    a.record_compaction(mid, parent_session_id=root, engine="first", fidelity=0.9, created_at=1.0)
    tip = a.compression_child(mid, [{"role": "user", "content": "2"}])
    a.record_compaction(tip, parent_session_id=mid, engine="second", fidelity=0.8, created_at=2.0)
    assert copy_sessions(a, b).ok
    assert [(r["session_id"], r["engine"]) for r in (b.compaction(mid), b.compaction(tip))] == [(mid, "first"), (tip, "second")]
