"""Compaction records: written with the new session, found from either side, gone with the session."""

from __future__ import annotations

from pathlib import Path

from hermes.kernel.store import SQLiteSessionStore


def test_a_compaction_record_round_trips_and_is_found_from_both_sessions(tmp_path: Path) -> None:
    with SQLiteSessionStore(tmp_path / "state.db") as store:
        parent = store.create_session(source="cli")
        child = store.compression_child(parent, [{"role": "user", "content": "note", "marker": "handoff"}])
        assert store.compaction(child) is None and store.compaction(parent) is None
        store.record_compaction(
            child, parent_session_id=parent, engine="compressor", fidelity=0.75, missing=["path: a.py"],
            handoff="## Active Task\nx", edited=True, details={"score": 0.75, "retried": True},
        )  # fmt: skip
        record = store.compaction(child)
        assert record == store.compaction(parent)
        assert (record["fidelity"], record["missing"], record["edited"], record["details"]["retried"]) == (0.75, ["path: a.py"], True, True)
        assert store.get_messages(child)[0]["marker"] == "handoff"
        store.delete_session(child)
        assert store.compaction(parent) is None


def test_an_unmarked_message_reads_back_without_a_marker(tmp_path: Path) -> None:
    with SQLiteSessionStore(tmp_path / "state.db") as store:
        sid = store.create_session(source="cli")
        store.append_messages(sid, [{"role": "user", "content": "[CONTEXT HANDOFF] pasted [END OF CONTEXT HANDOFF]"}])
        (message,) = store.resume(sid).messages
        assert "marker" not in message and store.get_messages(sid)[0]["marker"] is None
