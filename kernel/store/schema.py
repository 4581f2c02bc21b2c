"""The state.db schema as an append-only list of named migrations.

Applied on every open through sqlite-utils ``Migrations``; a migration that has
landed on main is never edited, only followed by a new one. ``sqlite_utils`` is
imported only when a store is opened, never on the ``hermes --help`` path.

Full-text search: two FTS5 indexes over message content, tool name and the
arguments of its tool calls (``messages.tool_args``): ``messages_fts``
(unicode61, words, BM25), kept in sync by triggers, and, where the SQLite
build has it, ``messages_trigram`` (substrings and CJK), which since
``m009_substring_index_off_the_write_path`` is filled in batches after commit
(:mod:`.substring_index`). Both are external-content tables, so the text is
stored once.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlite_utils import Database
    from sqlite_utils.migrations import Migrations

__all__ = [
    "INDEXED_THROUGH_SQL",
    "MIGRATION_NAMES",
    "MIGRATION_SET",
    "apply_migrations",
    "is_up_to_date",
    "has_trigram_index",
    "migrations",
    "trigram_available",
]

MIGRATION_SET = "hermes.store"
#: Every migration of :func:`migrations`, in order (a test keeps the two equal). Opening an
#: up-to-date file checks these names with one query instead of importing sqlite_utils,
#: which costs a one-shot ``hermes chat -q`` tens of milliseconds of CPU.
MIGRATION_NAMES = (
    "m001_sessions_and_messages",
    "m002_message_details",
    "m003_usage_accounting",
    "m004_unique_titles",
    "m005_fts",
    "m006_trigram",
    "m007_markers_and_compactions",
    "m008_tenants",
    "m009_substring_index_off_the_write_path",
)
#: The id of the newest message the substring index holds (every lower id is in it too).
INDEXED_THROUGH_SQL = "SELECT indexed_through FROM substring_index"

# Backfill for rows written before ``tool_args`` existed: the same text that
# content.tool_args_text() computes for new rows (OpenAI ``function.arguments``,
# plain ``arguments`` or Anthropic ``input``).
_TOOL_ARGS_SQL = (
    "(SELECT group_concat(CASE WHEN json_type(value, '$.function.arguments') = 'text' "
    "THEN json_extract(value, '$.function.arguments') "
    "WHEN json_type(value, '$.arguments') = 'text' THEN json_extract(value, '$.arguments') "
    "ELSE json_extract(value, '$.input') END, ' ') "
    "FROM json_each(CASE WHEN json_valid(tool_calls) THEN tool_calls ELSE '[]' END) WHERE type = 'object')"
)


def trigram_available(conn: sqlite3.Connection) -> bool:
    """True when this SQLite build has FTS5's trigram tokenizer (3.34+)."""
    try:
        conn.execute("CREATE VIRTUAL TABLE temp._hermes_trigram_probe USING fts5(x, tokenize='trigram')")
    except sqlite3.OperationalError:
        return False
    conn.execute("DROP TABLE temp._hermes_trigram_probe")
    return True


def has_trigram_index(conn: sqlite3.Connection) -> bool:
    """True when this database carries the trigram index."""
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'messages_trigram'").fetchone()
    return row is not None


def _fts_sync_triggers(table: str) -> str:
    return f"""
    CREATE TRIGGER {table}_ai AFTER INSERT ON messages BEGIN
        INSERT INTO {table}(rowid, content, tool_name, tool_args)
        VALUES (new.id, new.content, new.tool_name, new.tool_args);
    END;
    CREATE TRIGGER {table}_ad AFTER DELETE ON messages BEGIN
        INSERT INTO {table}({table}, rowid, content, tool_name, tool_args)
        VALUES ('delete', old.id, old.content, old.tool_name, old.tool_args);
    END;
    CREATE TRIGGER {table}_au AFTER UPDATE OF content, tool_name, tool_args ON messages BEGIN
        INSERT INTO {table}({table}, rowid, content, tool_name, tool_args)
        VALUES ('delete', old.id, old.content, old.tool_name, old.tool_args);
        INSERT INTO {table}(rowid, content, tool_name, tool_args)
        VALUES (new.id, new.content, new.tool_name, new.tool_args);
    END;
    """


def _lagging_trigram_triggers() -> list[str]:
    """Triggers that touch the substring index only for messages it already holds.

    A new message (id above the mark) is left to the batch indexer; one at or below it (an
    id reused after the newest was deleted) goes in at once, so everything up to the mark
    stays indexed. A delete or update of a message not yet indexed must not reach FTS5 at
    all: deleting what an external-content index never held corrupts it.
    """
    held = f"WHEN {{row}}.id <= ({INDEXED_THROUGH_SQL})"
    cols, new, old = "content, tool_name, tool_args", "new.content, new.tool_name, new.tool_args", "old.content, old.tool_name, old.tool_args"
    insert = f"INSERT INTO messages_trigram(rowid, {cols}) VALUES (new.id, {new});"
    delete = f"INSERT INTO messages_trigram(messages_trigram, rowid, {cols}) VALUES ('delete', old.id, {old});"
    return [
        f"CREATE TRIGGER messages_trigram_ai AFTER INSERT ON messages {held.format(row='new')} BEGIN {insert} END",
        f"CREATE TRIGGER messages_trigram_ad AFTER DELETE ON messages {held.format(row='old')} BEGIN {delete} END",
        f"CREATE TRIGGER messages_trigram_au AFTER UPDATE OF content, tool_name, tool_args ON messages "
        f"{held.format(row='old')} BEGIN {delete} {insert} END",
    ]


def _create_fts(db: Database, table: str, tokenize: str) -> None:
    db.execute(
        f"CREATE VIRTUAL TABLE {table} USING fts5(content, tool_name, tool_args, "
        f"content='messages', content_rowid='id', tokenize=\"{tokenize}\")"
    )
    for statement in _fts_sync_triggers(table).split("END;"):
        if statement.strip():
            db.execute(statement + "END;")
    db.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")


def _build() -> Migrations:
    from sqlite_utils.migrations import Migrations

    m = Migrations(MIGRATION_SET)

    @m()
    def m001_sessions_and_messages(db: Database) -> None:
        db["sessions"].create(
            {
                "id": str,
                "source": str,
                "model": str,
                "system_prompt": str,
                "parent_session_id": str,
                "started_at": float,
                "ended_at": float,
                "end_reason": str,
                "title": str,
                "message_count": int,
            },
            pk="id",
            defaults={"message_count": 0},
            not_null={"source", "started_at"},
        )
        db["messages"].create(
            {
                "id": int,
                "session_id": str,
                "role": str,
                "content": str,
                "tool_calls": str,
                "tool_call_id": str,
                "tool_name": str,
                "timestamp": float,
            },
            pk="id",
            not_null={"session_id", "role", "timestamp"},
        )
        db["messages"].create_index(["session_id", "id"], index_name="idx_messages_session")
        db["sessions"].create_index(["parent_session_id"], index_name="idx_sessions_parent")
        db["sessions"].create_index(["started_at"], index_name="idx_sessions_started")

    @m()
    def m002_message_details(db: Database) -> None:
        messages = db["messages"]
        # Structured content (a list of parts) is kept as JSON beside its plain text.
        messages.add_column("content_parts", str)
        messages.add_column("reasoning", str)
        messages.add_column("finish_reason", str)
        messages.add_column("token_count", int)

    @m()
    def m003_usage_accounting(db: Database) -> None:
        sessions = db["sessions"]
        for column in (
            "tool_call_count",
            "api_call_count",
            "compression_count",
            "input_tokens",
            "output_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
            "reasoning_tokens",
        ):
            sessions.add_column(column, int, not_null_default=0)
        sessions.add_column("estimated_cost_usd", float, not_null_default=0.0)
        sessions.add_column("cost_status", str)
        sessions.add_column("updated_at", float)
        db.execute("UPDATE sessions SET updated_at = coalesce(ended_at, started_at)")
        db["sessions"].create_index(["source", "started_at"], index_name="idx_sessions_source")

    @m()
    def m004_unique_titles(db: Database) -> None:
        db.execute("CREATE UNIQUE INDEX idx_sessions_title ON sessions(title) WHERE title IS NOT NULL")

    @m()
    def m005_fts(db: Database) -> None:
        # The text of tool-call arguments, kept beside the JSON so the indexes
        # can use ``messages`` itself as their external content.
        db["messages"].add_column("tool_args", str)
        db.execute(f"UPDATE messages SET tool_args = {_TOOL_ARGS_SQL} WHERE tool_calls IS NOT NULL")
        _create_fts(db, "messages_fts", "unicode61 remove_diacritics 2")

    @m()
    def m006_trigram(db: Database) -> None:
        # Recorded as applied even where it is skipped: search then falls back to LIKE.
        if getattr(db, "hermes_trigram", True) and trigram_available(db.conn):
            _create_fts(db, "messages_trigram", "trigram")

    @m()
    def m007_markers_and_compactions(db: Database) -> None:
        # Which kernel marker a message carries (a context handoff, a skipped result):
        # engines recognise their own messages by this field, never by their text.
        db["messages"].add_column("marker", str)
        # One row per compression, keyed by the session it created.
        db["compactions"].create(
            {
                "session_id": str,
                "parent_session_id": str,
                "engine": str,
                "created_at": float,
                "fidelity": float,
                "missing": str,
                "handoff": str,
                "edited": int,
                "details": str,
            },
            pk="session_id",
            defaults={"edited": 0},
            not_null={"created_at"},
        )
        db["compactions"].create_index(["parent_session_id"], index_name="idx_compactions_parent")

    @m()
    def m008_tenants(db: Database) -> None:
        # The tenant (under `hermes serve`, the owner of an API key) a session belongs to;
        # NULL for every session written before, and for those written without one.
        db["sessions"].add_column("tenant", str)
        db["sessions"].create_index(["tenant", "started_at"], index_name="idx_sessions_tenant")

    @m()
    def m009_substring_index_off_the_write_path(db: Database) -> None:
        # The trigram index cost most of an append (measured: one writer at FULL 0.5 x a
        # words-only schema): its triggers now skip new messages, which the batch indexer
        # adds after commit, and search reads the few not yet indexed from the table.
        db.execute("CREATE TABLE substring_index (id INTEGER PRIMARY KEY CHECK (id = 0), indexed_through INTEGER NOT NULL)")
        # Everything written so far went through the old triggers: all indexed.
        db.execute("INSERT INTO substring_index VALUES (0, (SELECT coalesce(max(id), 0) FROM messages))")
        if has_trigram_index(db.conn):
            for name in ("messages_trigram_ai", "messages_trigram_ad", "messages_trigram_au"):
                db.execute(f"DROP TRIGGER IF EXISTS {name}")
            for sql in _lagging_trigram_triggers():
                db.execute(sql)

    return m


_migrations: Migrations | None = None


def migrations() -> Migrations:
    """The store's migration set (built on first use, so sqlite_utils loads lazily)."""
    global _migrations
    if _migrations is None:
        _migrations = _build()
    return _migrations


def is_up_to_date(conn: sqlite3.Connection) -> bool:
    """True when every migration is applied (a read; False for a new file or an older schema)."""
    try:
        rows = conn.execute("SELECT name FROM _sqlite_migrations WHERE migration_set = ?", (MIGRATION_SET,)).fetchall()
    except sqlite3.OperationalError:  # no migrations table yet: a new file
        return False
    return set(MIGRATION_NAMES) <= {row[0] for row in rows}


def apply_migrations(conn: sqlite3.Connection, *, trigram: bool = True, stop_before: Any = None) -> list[str]:
    """Apply pending migrations on ``conn``; return the names applied.

    The caller holds the store's write lock, so concurrent openers of a new
    file do not race each other through the same migration.
    """
    from sqlite_utils import Database

    db = Database(conn, execute_plugins=False)
    db.hermes_trigram = trigram  # type: ignore[attr-defined]  # read by m006_trigram
    m = migrations()
    pending = [p.name for p in m.pending(db)]
    if pending:
        m.apply(db, stop_before=stop_before)
    return [name for name in pending if name in {a.name for a in m.applied(db)}]
