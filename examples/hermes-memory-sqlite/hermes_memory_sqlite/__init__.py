"""hermes-memory-sqlite: every past turn in a SQLite file, recalled by full-text search.

A complete external memory provider for hermes-kernel using only the standard
library. Each completed turn is stored by ``sync_turn`` (on the kernel's
memory worker, never on the user's time); each new user message recalls the
best-matching turns of earlier sessions through ``prefetch``, which the kernel
fences and adds to that message only. It also listens to the lifecycle hooks:
``on_pre_compress`` hands the summarizer the session's earlier requests,
``on_session_switch`` and ``on_memory_write`` are logged in the same file.
"""

from __future__ import annotations

import re
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from hermes.kernel import ConfigKey, MemoryProvider, hookimpl

__all__ = ["SqliteMemoryProvider"]

DB_NAME = "memory-sqlite.db"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    user_content TEXT NOT NULL,
    assistant_content TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS turns_fts USING fts5(
    user_content, assistant_content, content='turns', content_rowid='id'
);
CREATE TRIGGER IF NOT EXISTS turns_ai AFTER INSERT ON turns BEGIN
    INSERT INTO turns_fts(rowid, user_content, assistant_content)
    VALUES (new.id, new.user_content, new.assistant_content);
END;
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    session_id TEXT,
    detail TEXT NOT NULL,
    created REAL NOT NULL
);
"""
_WORD = re.compile(r"\w{3,}")
_SNIPPET = 300


def _clip(text: str, limit: int = _SNIPPET) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class SqliteMemoryProvider(MemoryProvider):
    """Past turns in ``HERMES_HOME/memory-sqlite.db``, recalled by FTS5 match."""

    name = "sqlite"
    config_keys = (
        ConfigKey("memory_sqlite.max_results", "int", 3, "Past turns recalled per message.", min=1, max=50),
    )

    def __init__(self) -> None:
        self.path: Path | None = None
        self.agent_context = "primary"
        self.max_results = 3

    # --- setup ------------------------------------------------------------------

    def is_available(self) -> bool:
        # Dependencies only, no network: this Python's SQLite must have FTS5.
        try:
            with closing(sqlite3.connect(":memory:")) as conn:
                conn.execute("CREATE VIRTUAL TABLE probe USING fts5(x)")
            return True
        except sqlite3.Error:
            return False

    def get_config_schema(self) -> list[dict[str, Any]]:
        return [{"key": "max_results", "description": "Past turns recalled per message", "secret": False, "default": 3}]

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.path = kwargs["hermes_home"].path / DB_NAME
        self.agent_context = kwargs.get("agent_context", "primary")
        config = kwargs.get("config")
        if config is not None:
            self.max_results = int(config.get("memory_sqlite.max_results", self.max_results))
        with closing(self._connect()) as conn:
            conn.executescript(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        # One short-lived connection per call: prefetch runs on the agent's thread,
        # sync_turn on the memory worker, and connections must not cross threads.
        assert self.path is not None, "initialize() first"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=10)
        conn.execute("PRAGMA journal_mode=WAL")
        return conn

    # --- the memory contract ------------------------------------------------------

    def sync_turn(self, user_content: str, assistant_content: str, session_id: str) -> None:
        if self.agent_context != "primary":
            return  # a sub-agent's or the reviewer's turns are not the user's conversation
        with closing(self._connect()) as conn, conn:
            conn.execute(
                "INSERT INTO turns (session_id, user_content, assistant_content, created) VALUES (?, ?, ?, ?)",
                (session_id, user_content, assistant_content, time.time()),
            )

    def search(self, query: str, *, exclude_session: str | None = None, limit: int | None = None) -> list[sqlite3.Row]:
        """The best-matching stored turns (any word of ``query`` may match)."""
        words = _WORD.findall(query.lower())
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in dict.fromkeys(words))
        with closing(self._connect()) as conn:
            conn.row_factory = sqlite3.Row
            return conn.execute(
                "SELECT t.session_id, t.user_content, t.assistant_content, t.created FROM turns_fts "
                "JOIN turns t ON t.id = turns_fts.rowid WHERE turns_fts MATCH ? AND t.session_id != ? "
                "ORDER BY bm25(turns_fts) LIMIT ?",
                (match, exclude_session or "", limit or self.max_results),
            ).fetchall()

    def prefetch(self, query: str, session_id: str) -> str | None:
        rows = self.search(query, exclude_session=session_id)
        if not rows:
            return None
        lines = ["Related turns from earlier conversations (hermes-memory-sqlite):"]
        for row in rows:
            day = time.strftime("%Y-%m-%d", time.localtime(row["created"]))
            lines.append(f"- {day}, user: {_clip(row['user_content'])}\n  assistant: {_clip(row['assistant_content'])}")
        return "\n".join(lines)

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [{
            "type": "function",
            "function": {
                "name": "past_turns_search",
                "description": "Full-text search over every earlier conversation turn stored by hermes-memory-sqlite.",
                "parameters": {
                    "type": "object",
                    "properties": {"query": {"type": "string", "description": "Words to look for."}},
                    "required": ["query"],
                },
            },
        }]  # fmt: skip

    def handle_tool_call(self, name: str, args: dict[str, Any]) -> str:
        if name != "past_turns_search":
            return super().handle_tool_call(name, args)
        rows = self.search(str(args.get("query") or ""), limit=10)
        if not rows:
            return "no stored turn matches"
        return "\n".join(f"[{r['session_id']}] user: {_clip(r['user_content'])} | assistant: {_clip(r['assistant_content'])}" for r in rows)

    def describe(self, hermes_home: Any, config: Any) -> dict[str, Any]:
        """For ``hermes memory status``: how many turns are stored, read without creating the file."""
        path = hermes_home.path / DB_NAME
        if not path.exists():
            return {"path": str(path), "turns": 0, "summary": f"no turns stored yet ({path})"}
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
            (count,) = conn.execute("SELECT count(*) FROM turns").fetchone()
        return {"path": str(path), "turns": count, "summary": f"{count} turns in {path}"}

    # --- kernel hooks -------------------------------------------------------------

    def _event(self, kind: str, session_id: str | None, detail: str) -> None:
        if self.path is None:
            return
        with closing(self._connect()) as conn, conn:
            conn.execute(
                "INSERT INTO events (kind, session_id, detail, created) VALUES (?, ?, ?, ?)",
                (kind, session_id, detail, time.time()),
            )

    @hookimpl
    def on_pre_compress(self, session_id: str, messages: list[dict[str, Any]]) -> str | None:
        requests = [m["content"] for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str)]
        if not requests:
            return None
        listed = "\n".join(f"- {_clip(r, 200)}" for r in requests[-10:])
        return f"The user's requests so far in this session (kept by hermes-memory-sqlite):\n{listed}"

    @hookimpl
    def on_session_switch(self, old_session_id: str | None, new_session_id: str, reason: str) -> None:
        self._event("session_switch", new_session_id, f"{old_session_id} -> {new_session_id} ({reason})")

    @hookimpl
    def on_memory_write(self, action: str, target: str, content: str) -> None:
        self._event("memory_write", None, f"{action} {target}: {content}")
