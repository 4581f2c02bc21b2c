"""The PostgreSQL store's row shapes: column lists, insert statements and messages encoded to rows."""


from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes.kernel.store.compactions import COMPACTION_FIELDS
from hermes.kernel.store.session_store import (
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    message_row,
)


__all__ = ['_APPEND', '_APPEND_ONE', '_ATTEMPTS', '_COMPACTION_COLS', '_COPY_COLS', '_COPY_COLUMNS', '_COPY_TYPES', '_FLUSH', '_INSERT_COLS', '_INSERT_MESSAGE', '_INSERT_VALUES', '_LOCK_SESSION', '_MESSAGE_COLS', '_SESSION_COLS', '_UPSERT_COMPACTION', '_row', '_text']

_SESSION_COLS = ", ".join(SESSION_COLUMNS)
_MESSAGE_COLS = ", ".join(MESSAGE_COLUMNS)
# The columns of message_row()'s values, in its order (seq comes first in every insert).
_COPY_COLUMNS = (
    "role", "content", "content_parts", "tool_calls", "tool_call_id", "tool_name", "reasoning", "finish_reason",
    "token_count", "timestamp", "tool_args", "marker",
)  # fmt: skip
_COPY_COLS = ", ".join(_COPY_COLUMNS)
_INSERT_COLS = f"session_id, {_COPY_COLS}"
_INSERT_VALUES = ", ".join(["%s"] * (2 + len(_COPY_COLUMNS)))  # seq, session_id and the copied columns
_INSERT_MESSAGE = f"INSERT INTO messages (seq, {_INSERT_COLS}) VALUES ({_INSERT_VALUES}) RETURNING id"
# One statement per append: the UPDATE locks the session row and numbers the rows, the
# INSERT takes them (``ordinality`` is each row's place in the batch). It is its own
# transaction, sent in one round trip (_write_statement), so the lock is held for the
# server's work and the commit only, never while a client that may be waiting for a CPU
# sends the next statement.
_COPY_TYPES = ("text", "text", "text", "text", "text", "text", "text", "text", "int", "float8", "text", "text")
_LOCK_SESSION = (
    "WITH s AS (UPDATE sessions SET message_count = message_count + %s, tool_call_count = tool_call_count + %s, "
    "updated_at = %s WHERE id = %s RETURNING message_count) "
)
_APPEND = (
    f"{_LOCK_SESSION}INSERT INTO messages (seq, {_INSERT_COLS}) "
    f"SELECT s.message_count - %s + v.n, %s, {', '.join('v.' + c for c in _COPY_COLUMNS)} "
    f"FROM s, unnest({', '.join(f'%s::{t}[]' for t in _COPY_TYPES)}) WITH ORDINALITY AS v({_COPY_COLS}, n) "
    "ORDER BY v.n RETURNING id, seq"
)
# One message (the usual append): plain values, which psycopg adapts faster than arrays.
_APPEND_ONE = (
    f"{_LOCK_SESSION}INSERT INTO messages (seq, {_INSERT_COLS}) "
    f"SELECT s.message_count, %s, {', '.join(f'%s::{t}' for t in _COPY_TYPES)} FROM s RETURNING id, seq"
)
_COMPACTION_COLS = ", ".join(COMPACTION_FIELDS)
_UPSERT_COMPACTION = (
    f"INSERT INTO compactions ({_COMPACTION_COLS}) VALUES ({', '.join(['%s'] * len(COMPACTION_FIELDS))}) "
    "ON CONFLICT (session_id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in COMPACTION_FIELDS if c != "session_id")
)
_ATTEMPTS = 8
# The durability barrier after a write (store.synchronous NORMAL, FULL, EXTRA): the pool's
# connections commit without waiting for the disk, so a commit releases its row locks at
# once; then this statement commits a transaction that wrote WAL (a transactional logical
# message, the smallest WAL record any role may write) at the database's own
# synchronous_commit level, which flushes the WAL up to it: the write before it included.
# Writers queued on a session's row so wait for the disk side by side, not one after another.
_FLUSH = "SELECT set_config('synchronous_commit', %s, true), pg_logical_emit_message(true, 'hermes.flush', '')"


def _text(value: Any) -> Any:
    # PostgreSQL text holds neither NUL nor lone surrogates; SQLite keeps them.
    # Content itself never needs this (its exact form is in content_parts JSON).
    if isinstance(value, str):
        if "\x00" in value:
            value = value.replace("\x00", "\ufffd")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            value = value.encode("utf-8", "replace").decode("utf-8")
    return value


def _row(session_id: str, message: Mapping[str, Any], now: float) -> tuple[Any, ...]:
    return tuple(_text(v) for v in message_row(session_id, message, now))
