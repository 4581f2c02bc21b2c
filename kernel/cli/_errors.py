"""The one place an exception becomes what the user reads: one line, printed once.

Known errors (HermesError, a damaged or read-only database, a file that cannot
be read or written) become one line that says what to do. Anything else is a
bug: one line on the screen, and the full trace (secrets redacted) in
``HERMES_HOME/logs/`` or, when that cannot be written, the temp folder.
"""

from __future__ import annotations

import errno
import sqlite3
import tempfile
import time
import traceback
from pathlib import Path

from ..errors import HermesError

__all__ = ["disk_is_full", "explain", "is_damaged_database", "is_readonly_error"]

_DAMAGED = ("malformed", "not a database", "file is encrypted", "database corrupt", "disk image")
_READONLY = ("readonly", "read-only", "unable to open database", "permission denied", "disk i/o error")


def is_damaged_database(exc: BaseException) -> bool:
    """True for SQLite errors that mean the file is not a healthy database."""
    return isinstance(exc, sqlite3.DatabaseError) and any(t in str(exc).lower() for t in _DAMAGED)


def is_readonly_error(exc: BaseException) -> bool:
    """True for SQLite or OS errors that mean a file cannot be written where it is."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS)
    return isinstance(exc, sqlite3.OperationalError) and any(t in str(exc).lower() for t in _READONLY)


#: Less free space than this turns SQLite's "disk I/O error" into "the disk is full".
_NEARLY_FULL_BYTES = 1024 * 1024


def disk_is_full(exc: BaseException, folder: Path) -> bool:
    """True when ``exc`` comes from a full disk: ENOSPC, SQLite's "disk is full", or an I/O error with no room left."""
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return True
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    text = str(exc).lower()
    if "disk is full" in text:
        return True
    if "disk i/o error" not in text:
        return False
    import shutil

    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        return shutil.disk_usage(probe).free < _NEARLY_FULL_BYTES
    except OSError:
        return False


def explain(exc: BaseException, home: Path | None) -> tuple[str, int]:
    """The line to print (without ``error: ``) and the exit code for ``exc``."""
    if isinstance(exc, HermesError):
        return str(exc), exc.exit_code
    db = home / "state.db" if home is not None else Path("state.db")
    if is_damaged_database(exc):
        return f"{db} is damaged ({exc}); run `hermes doctor --fix` to save what is readable into a fresh database", 1
    if disk_is_full(exc, db.parent):
        return (f"the disk holding {db.parent} is full; free some space and send the command again "
                "(nothing stored was lost, and reading commands still work)"), 1  # fmt: skip
    if isinstance(exc, sqlite3.OperationalError) and is_readonly_error(exc):
        return f"cannot write {db} ({exc}); make {db.parent} writable (reading commands still work)", 1
    if isinstance(exc, UnicodeDecodeError):
        return f"a file is not UTF-8 text ({exc.reason} at byte {exc.start}); re-save it as UTF-8", 2
    if isinstance(exc, OSError) and exc.filename:
        action = "write" if is_readonly_error(exc) else "use"
        return f"cannot {action} {exc.filename}: {exc.strerror or exc}; check that it exists and its permissions", 1
    where = _log_trace(exc, home)
    return f"unexpected {type(exc).__name__}: {_short(exc)} (a bug; the full trace is in {where})", 1


def _short(exc: BaseException) -> str:
    from ..redact import redact_text

    text = redact_text(str(exc).strip().splitlines()[0] if str(exc).strip() else "no message")
    return text if len(text) <= 200 else text[:197] + "..."


def _log_trace(exc: BaseException, home: Path | None) -> str:
    """Write the redacted trace to a crash log; returns its path."""
    from ..redact import redact_text

    text = redact_text("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    name = f"crash-{time.strftime('%Y%m%d-%H%M%S')}.log"
    for folder in ([home / "logs"] if home is not None else []) + [Path(tempfile.gettempdir())]:
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            path = folder / name
            with open(path, "a", encoding="utf-8") as fh:
                path.chmod(0o600)
                fh.write(text)
            return str(path)
        except OSError:
            continue
    return "nowhere (no writable folder); run again with -v"
