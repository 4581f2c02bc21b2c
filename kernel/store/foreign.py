"""Recognising a ``state.db`` that another program wrote, before anything writes to it.

Hermes Agent keeps its history in ``HERMES_HOME/state.db`` too, with its own
``sessions`` and ``messages`` tables. Running our first migration there would
fail half-way and leave our bookkeeping table in the user's file, so the store
checks first and refuses with one line that names the command which imports
that history (``hermes import hermes``) into a file of the kernel's own.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ..errors import HermesError
from ..home import active_home
from .schema import MIGRATION_SET

__all__ = ["ForeignStoreError", "foreign_schema", "refuse_foreign"]

_OUR_MIGRATIONS = "_sqlite_migrations"


class ForeignStoreError(HermesError):
    """The file is another program's database; the kernel neither migrates nor writes it."""

    exit_code = 2

    def __init__(self, path: Path, kind: str) -> None:
        self.path, self.kind = path, kind
        command = "hermes import hermes" + ("" if _is_home_state_db(path) else f" {path}")
        super().__init__(
            f"{path} was written by {kind}, not hermes-kernel; run `{command}` to copy its history "
            "into hermes-kernel's own store (the file itself is never changed)"
            if kind.startswith("Hermes Agent")
            else f"{path} holds {kind}, not a hermes-kernel store; point store.url at another file"
        )


def _is_home_state_db(path: Path) -> bool:
    try:
        return Path(path).resolve() == active_home().shared_state_db.resolve()
    except Exception:  # noqa: BLE001 - no home resolved: name the path, which is always right
        return False


def foreign_schema(conn: sqlite3.Connection) -> str | None:
    """What wrote this database when it was not us (``"Hermes Agent (schema version 22)"``), else None.

    An empty file, or one our migrations created, is ours. A ``sessions``
    table without our migration record is someone else's.
    """
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "sessions" not in names or _OUR_MIGRATIONS in names and _has_our_set(conn):
        return None
    if "schema_version" in names:
        row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
        version = row[0] if row else None
        return f"Hermes Agent (schema version {version})" if version is not None else "Hermes Agent"
    return "tables of another program"


def _has_our_set(conn: sqlite3.Connection) -> bool:
    row = conn.execute(f"SELECT 1 FROM {_OUR_MIGRATIONS} WHERE migration_set = ? LIMIT 1", (MIGRATION_SET,)).fetchone()
    return row is not None


def refuse_foreign(conn: sqlite3.Connection, path: Path) -> None:
    """Raise :class:`ForeignStoreError` when ``conn`` is another program's database."""
    kind = foreign_schema(conn)
    if kind is not None:
        raise ForeignStoreError(path, kind)
