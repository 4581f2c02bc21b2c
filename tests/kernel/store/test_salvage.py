"""Checking and salvaging state.db in process (kernel/store/salvage.py).

tests/e2e/test_store_cli.py drives the same code through ``hermes doctor``; these
pin each step's exact outcome on real damaged files.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel.store.salvage import DbHealth, SalvageReport, check_database, rebuild_fts, salvage_database


def _store(path: Path, sessions: int = 3, per: int = 4) -> list[str]:
    ids = []
    with SQLiteSessionStore(path) as store:
        for s in range(sessions):
            sid = store.create_session(title=f"chat {s}")
            store.append_messages(sid, [{"role": "user" if i % 2 == 0 else "assistant", "content": f"s{s} m{i} kiwi"} for i in range(per)])
            ids.append(sid)
    return ids


def test_a_missing_file_is_reported_as_missing(tmp_path: Path) -> None:
    health = check_database(tmp_path / "state.db")
    assert health == DbHealth(tmp_path / "state.db", False)
    assert health.as_dict() == {"path": str(tmp_path / "state.db"), "exists": False, "damaged": None, "fts_problems": [],
                                "wal_bytes": 0, "sessions": None, "messages": None}  # fmt: skip


def test_a_healthy_file_reports_its_counts_and_wal(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    _store(db, sessions=2, per=3)
    wal = db.with_name("state.db-wal")
    wal.write_bytes(b"")  # SessionStore checkpointed on close; a WAL's size is read as it is
    with wal.open("wb") as f:
        f.write(b"\0" * 123)
    health = check_database(db)
    assert (health.exists, health.damaged, health.fts_problems) == (True, None, [])
    assert (health.sessions, health.messages, health.wal_bytes) == (2, 6, 123)


def test_a_file_that_is_not_a_database_is_damaged(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    db.write_bytes(b"this is not sqlite at all" * 200)
    health = check_database(db)
    assert health.damaged == "file is not a database"
    assert health.sessions is None


def test_an_index_out_of_step_is_named_and_rebuild_fixes_it(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    _store(db)
    conn = sqlite3.connect(db)
    conn.execute("DROP TRIGGER messages_fts_ai")  # a row the word index never sees
    conn.execute("INSERT INTO messages (session_id, role, content, timestamp) SELECT id, 'user', 'lost', 0 FROM sessions LIMIT 1")
    conn.commit()
    conn.close()
    health = check_database(db)
    assert health.damaged is None
    assert len(health.fts_problems) == 1 and health.fts_problems[0].startswith("messages_fts: ")
    assert rebuild_fts(db) == ["messages_fts", "messages_trigram"]
    assert check_database(db).fts_problems == []


def test_salvage_copies_every_row_and_keeps_the_broken_file(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    ids = _store(db, sessions=3, per=4)
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM sessions WHERE id = ?", (ids[1],))  # its messages stay: a placeholder takes them
    conn.commit()
    conn.close()
    original = db.read_bytes()
    report = salvage_database(db)
    assert isinstance(report, SalvageReport)
    assert (report.sessions, report.messages, report.placeholder_sessions) == (2, 12, 1)
    assert report.broken_copy.name.startswith("state.db.broken-") and report.broken_copy.read_bytes() == original
    assert report.as_dict() == {"sessions": 2, "messages": 12, "placeholder_sessions": 1, "broken_copy": str(report.broken_copy)}
    assert sorted(p.name for p in tmp_path.iterdir() if ".salvage-" in p.name) == []
    with SQLiteSessionStore(db) as store:
        placeholder = store.get_session(ids[1])
        assert placeholder is not None
        assert (placeholder["source"], placeholder["end_reason"], placeholder["message_count"]) == ("recovered", "recovered", 4)
        assert [store.get_session(i)["message_count"] for i in (ids[0], ids[2])] == [4, 4]  # type: ignore[index]
        assert store.get_session(ids[0])["title"] == "chat 0"  # type: ignore[index]
        assert len(store.search("kiwi", limit=100)) == 12  # the indexes were rebuilt
    assert sqlite3.connect(db).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_salvage_drops_rows_it_cannot_place_and_keeps_the_rest(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    ids = _store(db, sessions=2, per=2)
    src = sqlite3.connect(db)
    src.execute("DROP TRIGGER messages_fts_ai")
    src.execute("DROP TRIGGER messages_trigram_ai")
    src.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, '', 'no role', 1)", (ids[0],))
    src.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES ('', 'user', 'no session', 1)")
    src.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', 'no time', 0)", (ids[1],))
    src.commit()
    src.close()
    report = salvage_database(db)
    assert (report.sessions, report.messages, report.placeholder_sessions) == (2, 5, 0)
    with SQLiteSessionStore(db) as store:
        kept = store.get_messages(ids[1])
        assert kept[-1]["content"] == "no time" and kept[-1]["timestamp"] > 1_000_000  # a missing time becomes now
        assert store.get_session(ids[1])["message_count"] == 3  # type: ignore[index]


def _leaf_pages(db: Path, table: str) -> list[int]:
    conn = sqlite3.connect(db)
    try:
        return [r[0] for r in conn.execute("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno", (table,))]
    finally:
        conn.close()


def test_salvage_steps_over_a_damaged_stretch_of_messages(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    with SQLiteSessionStore(db) as store:
        sid = store.create_session()
        store.append_messages(sid, [{"role": "user", "content": f"message {i:04d} " + "x" * 300} for i in range(400)])
    pages = _leaf_pages(db, "messages")
    assert len(pages) > 10
    page_size = sqlite3.connect(db).execute("PRAGMA page_size").fetchone()[0]
    victim = pages[len(pages) // 2]
    with db.open("r+b") as f:  # garbage over one leaf page in the middle of the table
        f.seek((victim - 1) * page_size)
        f.write(b"\xff" * page_size)
    assert check_database(db).damaged is not None
    report = salvage_database(db)
    assert 0 < 400 - report.messages <= 20  # one page of rows lost, every other row kept
    with SQLiteSessionStore(db) as store:
        kept = [m["content"][:12] for m in store.get_messages(sid)]
    assert kept[0] == "message 0000" and kept[-1] == "message 0399"
    assert kept == sorted(kept)
    assert check_database(db).damaged is None
