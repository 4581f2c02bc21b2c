"""``hermes doctor`` checks that need the process itself: a write-ahead log that is not checkpointed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes.kernel.store import SQLiteSessionStore

from .test_no_traceback import _run


def test_a_large_wal_is_reported_and_checkpointed_on_fix(hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hermes.kernel.cli.doctor as doctor

    monkeypatch.setattr(doctor, "WAL_LIMIT_BYTES", 1024)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    # Stays open: the WAL is not folded back. No substring index: its thread would write a batch at
    # the first pause, which could land between doctor's truncation and the size check.
    store = SQLiteSessionStore(hermes_home / "state.db", checkpoint_every=0, trigram=False)
    try:
        sid = store.create_session()
        store.append_messages(sid, [{"role": "user", "content": "x" * 2000} for _ in range(20)])
        wal = hermes_home / "state.db-wal"
        assert wal.stat().st_size > 1024
        code, text = _run(["doctor", "--json"])
        report = json.loads(text)
        assert code == 1 and any("write-ahead log is" in p for p in report["problems"])
        code, text = _run(["doctor", "--fix", "--json"])
        report = json.loads(text)
        assert code == 0, report["problems"]
        assert any("checkpointed and truncated the WAL" in f for f in report["fixed"])
        assert wal.stat().st_size == 0
        assert len(store.get_messages(sid)) == 20  # nothing lost
    finally:
        store.close()
