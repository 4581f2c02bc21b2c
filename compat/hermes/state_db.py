"""Hermes Agent's ``state.db``, read-only, as a source of sessions for the kernel's store.

:class:`HermesStateDB` offers the reading half of the store contract that
:func:`hermes.kernel.store.migrate.copy_sessions` uses (``session_ids``,
``get_session``, ``get_messages``, ``compaction``, ``counts``), so importing
is the same batched, resumable, verified copy as ``hermes sessions migrate``.

The file is opened read-only (``mode=ro``, or ``immutable=1`` in a home that
cannot be written) and nothing is ever written to it. Columns are read by
name from ``PRAGMA table_info``, so every schema version Hermes Agent has
written (PyPI releases 0.13 to 0.19 wrote versions 11 to 22) reads the same
way; a newer version than :data:`NEWEST_SCHEMA` is refused with one line.

Hermes Agent's lineage is the kernel's: a child whose parent ended with
``compression`` or ``branched``. Version 22 added compaction in place (one
session id whose earlier messages are kept with ``active = 0, compacted = 1``);
such a session is shown as two kernel sessions: the original id holding the
archived messages, ended by ``compression``, and ``<id>.live`` continuing it
with the live ones, so resuming the original id continues the live history
and search still finds the archived turns. Messages a user rewound
(``active = 0`` and not compacted) and ``session_meta`` rows are not
conversation and are left out (counted in :class:`ReadNotes`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes.kernel import HermesError
from hermes.kernel.store.concurrency import connect_readonly

__all__ = ["NEWEST_SCHEMA", "LIVE_SUFFIX", "HermesStateDB", "ReadNotes", "UnsupportedSchemaError", "is_hermes_state_db"]

#: The newest state.db schema this reader knows (Hermes Agent 0.19.0).
NEWEST_SCHEMA = 22
#: Suffix of the kernel session that continues a session compacted in place.
LIVE_SUFFIX = ".live"
_JSON_PREFIX = "\x00json:"  # Hermes Agent's marker for list/dict content stored as JSON
_REQUIRED = {"sessions": {"id", "source", "started_at"}, "messages": {"id", "session_id", "role", "timestamp"}}


class UnsupportedSchemaError(HermesError):
    """A state.db this reader cannot read: newer than it knows, or missing what every version has."""

    exit_code = 2


@dataclass
class ReadNotes:
    """What reading changed or left out, for the import's summary (ids kept short)."""

    invalid_tool_calls: list[int] = field(default_factory=list)  # message ids
    undecodable_text: int = 0
    orphans: list[str] = field(default_factory=list)  # sessions whose parent is not in the file
    rewound: int = 0
    meta_rows: int = 0
    split: int = 0  # sessions compacted in place, shown as two

    def lines(self) -> list[str]:
        out = []
        if self.split:
            out.append(f"{self.split} session(s) compacted in place: earlier turns kept as the parent, `<id>{LIVE_SUFFIX}` continues")
        if self.orphans:
            out.append(f"{len(self.orphans)} session(s) named a parent that is not in the file; imported without it")
        if self.invalid_tool_calls:
            ids = ", ".join(str(i) for i in self.invalid_tool_calls[:5])
            out.append(f"{len(self.invalid_tool_calls)} message(s) had tool calls that are not valid JSON (ids {ids}); "
                       "imported without them, the originals stay in Hermes Agent's file")  # fmt: skip
        if self.undecodable_text:
            out.append(f"{self.undecodable_text} text value(s) were not valid UTF-8; bad bytes became U+FFFD")
        if self.rewound:
            out.append(f"{self.rewound} message(s) rewound (undone) in Hermes Agent were left out")
        return out


def is_hermes_state_db(path: Path) -> int | None:
    """Hermes Agent's schema version of the file at ``path``, or None when it is not such a file."""
    if not path.is_file():
        return None
    try:
        conn = connect_readonly(path)
    except sqlite3.Error:
        return None
    try:
        return _schema_version(conn)
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def _schema_version(conn: sqlite3.Connection) -> int | None:
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not {"sessions", "messages", "schema_version"} <= names or "_sqlite_migrations" in names:
        return None
    row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


class HermesStateDB:
    """A read-only view of a Hermes Agent ``state.db`` shaped like the kernel's store rows."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.notes = ReadNotes()
        self._noting = True  # notes are taken on the first read of each row only
        if not self.path.is_file():
            raise HermesError(f"no Hermes Agent state.db at {self.path}; give the path of one (hermes import hermes PATH)")
        try:
            self.conn = connect_readonly(self.path)
        except sqlite3.DatabaseError as exc:
            raise HermesError(f"{self.path} cannot be read as SQLite ({exc}); is it a Hermes Agent state.db?") from None
        self.conn.text_factory = self._text
        try:
            self._inspect()
        except BaseException:
            self.conn.close()
            raise

    # -- opening ---------------------------------------------------------------

    def _text(self, raw: bytes) -> str:
        # A non-UTF-8 value must not stop the import of everything else.
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            self.notes.undecodable_text += self._noting
            return raw.decode("utf-8", "replace")

    def _inspect(self) -> None:
        try:
            version = _schema_version(self.conn)
        except sqlite3.DatabaseError as exc:
            raise HermesError(f"{self.path} cannot be read as SQLite ({exc}); is it a Hermes Agent state.db?") from None
        if version is None:
            raise UnsupportedSchemaError(f"{self.path} is not a Hermes Agent state.db (no sessions, messages and schema_version tables)")
        if version > NEWEST_SCHEMA:
            raise UnsupportedSchemaError(
                f"{self.path} has Hermes Agent schema version {version}, newer than this hermes-kernel reads "
                f"(up to {NEWEST_SCHEMA}); upgrade hermes-kernel (`pip install -U hermes-kernel`) and import again"
            )
        self.schema_version = version
        self.columns = {t: {r[1] for r in self.conn.execute(f"PRAGMA table_info({t})")} for t in _REQUIRED}
        for table, needed in _REQUIRED.items():
            if missing := needed - self.columns[table]:
                raise UnsupportedSchemaError(
                    f"{self.path}: table {table} lacks {', '.join(sorted(missing))}; this is not a state.db "
                    "Hermes Agent wrote, or it is damaged (Hermes Agent's `hermes doctor` can repair it)"
                )
        mc = self.columns["messages"]
        has_active, has_compacted = "active" in mc, "compacted" in mc
        self._live = "(active IS NULL OR active != 0)" if has_active else "1"  # NULL active: a known Hermes bug, still live
        self._archived = "(active = 0 AND compacted = 1)" if has_active and has_compacted else "0"
        self._rewound = f"(active = 0 AND {'coalesce(compacted, 0) = 0' if has_compacted else '1'})" if has_active else "0"
        self._chat = "role IN ('system', 'user', 'assistant', 'tool')"
        with self._snapshot():
            ids = [r[0] for r in self.conn.execute("SELECT id FROM sessions ORDER BY id")]
            self._known = set(ids)
            self._split = {
                r[0] for r in self.conn.execute(f"SELECT DISTINCT session_id FROM messages WHERE {self._archived}")
            } & self._known
            self.notes.split = len(self._split)
            self.notes.rewound = self.conn.execute(f"SELECT count(*) FROM messages WHERE {self._rewound}").fetchone()[0]
            self.notes.meta_rows = self.conn.execute(f"SELECT count(*) FROM messages WHERE NOT {self._chat}").fetchone()[0]
            kept = f"{self._chat} AND ({self._live} OR {self._archived})"
            self._message_total = self.conn.execute(f"SELECT count(*) FROM messages WHERE {kept}").fetchone()[0]
        self._ids = sorted([*ids, *(sid + LIVE_SUFFIX for sid in self._split)])
        self._cache: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}

    def _snapshot(self) -> Any:
        """One read transaction: rows read together are from one moment, even while Hermes Agent writes."""
        conn = self.conn

        class _Tx:
            def __enter__(self) -> None:
                conn.execute("BEGIN")

            def __exit__(self, *exc: object) -> None:
                conn.execute("COMMIT")

        return _Tx()

    # -- the reading half of the store contract ----------------------------------

    def freeze_notes(self) -> None:
        """Every row has been read once: later reads (checks after the copy) add no notes."""
        self._noting = False

    def describe(self) -> str:
        return f"Hermes Agent state.db {self.path.resolve()} (schema version {self.schema_version})"

    def close(self) -> None:
        self.conn.close()

    def counts(self) -> dict[str, int]:
        return {"sessions": len(self._ids), "messages": self._message_total}

    def session_ids(self, *, after: str | None = None, limit: int = 500) -> list[str]:
        """Ids in ascending order; the page's rows and messages are read at once, in one snapshot."""
        import bisect

        start = bisect.bisect_right(self._ids, after) if after is not None else 0
        page = self._ids[start : start + limit]
        self._cache = dict(self._load(page))
        return page

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        entry = self._cache.get(session_id) or dict(self._load([session_id])).get(session_id)
        return entry[0] if entry else None

    def get_messages(self, session_id: str) -> list[dict[str, Any]]:
        entry = self._cache.get(session_id) or dict(self._load([session_id])).get(session_id)
        return entry[1] if entry else []

    def compaction(self, session_id: str) -> None:
        return None  # Hermes Agent keeps no record of what a compression kept

    def sources(self) -> dict[str, int]:
        """Sessions per source (``cli``, ``telegram`` …), for the summary."""
        return dict(self.conn.execute("SELECT source, count(*) FROM sessions GROUP BY source ORDER BY 2 DESC").fetchall())

    # -- reading rows --------------------------------------------------------------

    def _load(self, ids: list[str]) -> Iterator[tuple[str, tuple[dict[str, Any], list[dict[str, Any]]]]]:
        real = sorted({sid[: -len(LIVE_SUFFIX)] if self._is_live(sid) else sid for sid in ids})
        if not real:
            return iter(())
        sc, mc = self.columns["sessions"], self.columns["messages"]
        marks = ",".join("?" * len(real))
        with self._snapshot():
            rows = {r["id"]: r for r in self._dicts(f"SELECT * FROM sessions WHERE id IN ({marks})", real)}
            wanted = [c for c in ("id", "session_id", "role", "content", "tool_call_id", "tool_calls", "tool_name",
                                  "timestamp", "token_count", "finish_reason", "reasoning", "reasoning_content") if c in mc]  # fmt: skip
            where = f"session_id IN ({marks}) AND {self._chat}"
            live_sql = f"SELECT {', '.join(wanted)}, {self._archived} AS archived FROM messages WHERE {where} AND ({self._live} OR {self._archived}) ORDER BY session_id, id"
            messages: dict[str, list[dict[str, Any]]] = {}
            for m in self._dicts(live_sql, real):
                messages.setdefault(m["session_id"], []).append(m)
        out = []
        for sid in real:
            row = rows.get(sid)
            if row is None:  # deleted by Hermes Agent since we listed it
                continue
            msgs = messages.get(sid, [])
            archived = [self._message(m) for m in msgs if m["archived"]]
            live = [self._message(m) for m in msgs if not m["archived"]]
            session = self._session(row, sc)
            if sid in self._split:
                child = dict(session, id=sid + LIVE_SUFFIX, parent_session_id=sid, title=None,
                             started_at=live[0]["timestamp"] if live else session["started_at"])  # fmt: skip
                for bucket in ("tool_call_count", "api_call_count", "input_tokens", "output_tokens", "cache_read_tokens",
                               "cache_write_tokens", "reasoning_tokens", "estimated_cost_usd"):  # fmt: skip
                    child[bucket] = 0  # usage stays on the original id, so totals match Hermes Agent's
                child["cost_status"] = None
                session.update(end_reason="compression", ended_at=child["started_at"], compression_count=1)
                out.append((sid, (session, archived)))
                out.append((sid + LIVE_SUFFIX, (child, live)))
            else:
                out.append((sid, (session, live)))
        return iter(out)

    def _is_live(self, sid: str) -> bool:
        return sid.endswith(LIVE_SUFFIX) and sid[: -len(LIVE_SUFFIX)] in self._split

    def _dicts(self, sql: str, params: list[Any]) -> Iterator[dict[str, Any]]:
        cursor = self.conn.execute(sql, params)
        names = [d[0] for d in cursor.description]
        for values in cursor:
            yield dict(zip(names, values))

    def _session(self, row: dict[str, Any], columns: set[str]) -> dict[str, Any]:
        parent = row.get("parent_session_id")
        if parent and parent not in self._known:
            if self._noting:
                self.notes.orphans.append(row["id"])
            parent = None
        status = row.get("cost_status")
        cost = row.get("estimated_cost_usd")
        if status == "actual" and row.get("actual_cost_usd") is not None:
            cost = row["actual_cost_usd"]
        if status is None and cost:
            status = "estimated"
        times = [t for t in (row.get("started_at"), row.get("ended_at")) if isinstance(t, (int, float))]
        return {
            "id": row["id"],
            "source": row.get("source") or "hermes-agent",
            "model": row.get("model"),
            "system_prompt": row.get("system_prompt"),
            "parent_session_id": parent,
            "started_at": row["started_at"],
            "ended_at": row.get("ended_at"),
            "end_reason": row.get("end_reason"),
            "title": row.get("title") or None,
            "tool_call_count": row.get("tool_call_count") or 0,
            "api_call_count": row.get("api_call_count") or 0,
            "compression_count": 1 if row.get("end_reason") == "compression" else 0,
            "input_tokens": row.get("input_tokens") or 0,
            "output_tokens": row.get("output_tokens") or 0,
            "cache_read_tokens": row.get("cache_read_tokens") or 0,
            "cache_write_tokens": row.get("cache_write_tokens") or 0,
            "reasoning_tokens": row.get("reasoning_tokens") or 0,
            "estimated_cost_usd": cost or 0,
            "cost_status": status,
            "updated_at": max(times) if times else row["started_at"],
            "tenant": None,  # Hermes Agent has no tenants: its history belongs to none
        }

    def _message(self, m: dict[str, Any]) -> dict[str, Any]:
        content = m.get("content")
        if isinstance(content, str) and content.startswith(_JSON_PREFIX):
            try:
                content = json.loads(content[len(_JSON_PREFIX) :])
            except ValueError:
                pass  # kept as the text it is
        if isinstance(content, bytes):
            content = self._text(content)
        calls = m.get("tool_calls")
        if isinstance(calls, str) and calls:
            try:
                calls = json.loads(calls)
            except ValueError:
                calls = None
            if calls is not None and not isinstance(calls, list):
                calls = None
            if calls is None and self._noting:
                self.notes.invalid_tool_calls.append(m["id"])
        elif not calls:
            calls = None
        return {
            "role": m["role"],
            "content": content,
            "tool_calls": calls or None,
            "tool_call_id": m.get("tool_call_id"),
            "tool_name": m.get("tool_name"),
            "reasoning": m.get("reasoning") or m.get("reasoning_content") or None,
            "finish_reason": m.get("finish_reason"),
            "token_count": m.get("token_count"),
            "timestamp": m.get("timestamp"),
        }
