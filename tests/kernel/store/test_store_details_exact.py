"""Small store helpers with exact results: lineage edges, image notes, busy errors, URLs, compaction rows."""

from __future__ import annotations

import json
import sqlite3
import time
from datetime import date
from pathlib import Path

import pytest

from hermes.kernel.store import SessionStore
from hermes.kernel.store.compactions import decode_compaction, compaction_row
from hermes.kernel.store.concurrency import is_busy_error
from hermes.kernel.store.content import describe_image
from hermes.kernel.store.opening import redact_url
from hermes.kernel.store.schema import MIGRATION_SET, _build, migrations


def test_lineage_of_a_missing_session_is_empty(store: SessionStore) -> None:
    assert store.lineage_root("ghost") is None
    assert store.compression_ancestry("ghost") == []


def test_compression_ancestry_stops_at_the_first_other_link(store: SessionStore) -> None:
    root = store.create_session(title="Root")
    branched = store.branch(root, title="Branch")
    tip = store.compression_child(branched, [{"role": "user", "content": "summary"}])
    assert store.compression_ancestry(tip) == [branched, tip]
    assert store.lineage_root(tip) == root


def test_branch_keeps_the_source_it_is_given(store: SessionStore) -> None:
    parent = store.create_session(source="cli")
    assert store.get_session(store.branch(parent, source="telegram"))["source"] == "telegram"
    assert store.get_session(store.branch(parent))["source"] == "cli"


def test_session_ids_default_page_is_500(store: SessionStore) -> None:
    store.import_sessions([({"id": f"s{i:04}", "source": "cli", "started_at": 1.0}, []) for i in range(501)])
    page = store.session_ids()
    assert (len(page), page[0], page[-1]) == (500, "s0000", "s0499")
    assert store.session_ids(after="s0499") == ["s0500"]


def test_imported_messages_without_a_time_get_the_import_time(store: SessionStore) -> None:
    before = time.time()
    result = store.import_sessions([({"id": "old", "source": "cli", "started_at": 1.0}, [{"role": "user", "content": "hi"}])])
    assert result.imported == ["old"]
    [message] = store.get_messages("old")
    assert before <= message["timestamp"] <= time.time()


@pytest.mark.parametrize(
    ("chars", "note"),
    [(100, "[image image/png, 1 KB, not stored]"),  # never "0 KB"
     (3416, "[image image/png, 3 KB, not stored]"),  # 2,562 bytes: 2.502 KB rounds up
     (2730, "[image image/png, 2 KB, not stored]")],  # 2,047.5 bytes
)  # fmt: skip
def test_describe_image_gives_the_decoded_size(chars: int, note: str) -> None:
    assert describe_image("image/png", chars) == note


@pytest.mark.parametrize(
    ("exc", "busy"),
    [(sqlite3.OperationalError("database is locked"), True), (sqlite3.OperationalError("Database Busy"), True),
     (sqlite3.OperationalError("no such table: x"), False), (sqlite3.DatabaseError("database is locked"), False),
     (ValueError("busy"), False)],
)  # fmt: skip
def test_is_busy_error(exc: BaseException, busy: bool) -> None:
    assert is_busy_error(exc) is busy


def test_redact_url_keeps_the_user_when_the_password_has_colons() -> None:
    assert redact_url("postgresql://me:pa:ss@db.example:5432/h") == "postgresql://me:***@db.example:5432/h"


def test_a_fresh_migration_set_has_every_migration() -> None:
    # migrations() caches its set; build one from scratch as a new process does.
    fresh = _build()
    assert fresh.name == MIGRATION_SET == "hermes.store"
    assert [m.name for m in fresh._migrations] == [m.name for m in migrations()._migrations]


def test_compaction_row_keeps_text_as_is_and_stringifies_other_values() -> None:
    row = compaction_row(
        "child", parent_session_id="parent", engine="compressor", fidelity=0.5, missing=["café", "日本"],
        handoff="note", edited=True, details={"when": date(2026, 1, 2), "path": Path("/tmp/ü")}, created_at=7,
    )  # fmt: skip
    assert row == (
        "child", "parent", "compressor", 7.0, 0.5, '["café", "日本"]', "note", 1,
        '{"when": "2026-01-02", "path": "/tmp/ü"}',
    )  # fmt: skip
    assert isinstance(row[3], float)
    plain = compaction_row("c", parent_session_id=None, engine="e", fidelity=None)
    assert plain[5:] == ("[]", None, 0, "{}")
    decoded = decode_compaction(row)
    assert (decoded["missing"], decoded["edited"], decoded["details"]["when"]) == (["café", "日本"], True, "2026-01-02")


def test_decode_compaction_reads_empty_columns_as_empty() -> None:
    decoded = decode_compaction(("c", None, "e", 1.0, None, None, None, 0, None))
    assert (decoded["missing"], decoded["details"], decoded["edited"]) == ([], {}, False)
    assert json.loads(compaction_row("c", parent_session_id=None, engine="e", fidelity=None, details={})[8]) == {}


def test_a_numbered_title_drops_the_space_the_cut_leaves() -> None:
    from hermes.kernel.store.titles import MAX_TITLE_CHARS, next_title_among

    base = "a" * 96 + " bcdef"  # cut to 97 characters it ends with a space
    assert next_title_among(base, []) == "a" * 96 + " #2"
    assert len(next_title_among(" " + "x" * 120, [])) == MAX_TITLE_CHARS


def test_search_context_is_cut_after_300_characters(store: SessionStore) -> None:
    sid = store.create_session()
    store.append_messages(sid, [
        {"role": "user", "content": "x" * 301}, {"role": "assistant", "content": "the needle"},
        {"role": "user", "content": "y" * 300},
    ])  # fmt: skip
    for query in ("needle", "eedl"):  # a word, read with the hit; a substring, its neighbours read after
        [hit] = store.search(query)
        assert (hit.before["content"], hit.after["content"]) == ("x" * 300 + "…", "y" * 300)  # type: ignore[index]


def test_readers_keep_a_32_mib_page_cache_and_map_the_file_and_the_writer_neither(store: SessionStore) -> None:
    # Searches on a large file reread the index's pages between queries with SQLite's 2 MiB default.
    reader = store._readers.get()
    assert reader.execute("PRAGMA cache_size").fetchone()[0] == -32768
    assert reader.execute("PRAGMA mmap_size").fetchone()[0] == min(2 * 1024**3, 0x7FFF0000)  # capped by the build
    assert reader.execute("PRAGMA query_only").fetchone()[0] == 1
    assert store.conn.execute("PRAGMA cache_size").fetchone()[0] == -2000
    assert store.conn.execute("PRAGMA mmap_size").fetchone()[0] == 0
