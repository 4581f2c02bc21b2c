"""One writer per session: a lease a process holds on a session while it may append to it.

Two chats appending to one session interleave their turns, and a resume then pairs tool calls
with the wrong results. A chat therefore claims the session it writes
(:meth:`SessionStore.claim_writer`) before it repairs or appends anything; a second chat whose
claim is refused continues in a branch instead (``hermes.kernel.agent.resuming``).

A lease dies with its process, however it ends (SIGKILL included), so a crash never leaves a
session locked. The SQLite store keeps one ``flock``-ed file per open session in
``<state.db>.writers/`` (:class:`FileWriterLeases`); the PostgreSQL store holds an advisory
lock on a connection of its own. A backend without leases grants every claim (``enforced`` is
False), which is how every front-end that serialises turns itself (``hermes serve``) already
worked.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["FileWriterLeases", "WriterClaim", "holder_text"]


def _nothing() -> None:
    return None


@dataclass
class WriterClaim:
    """The answer to a claim: granted (release it when done) or refused, naming who holds the session."""

    session_id: str
    holder: str | None = None  # who writes the session, when the claim was refused
    enforced: bool = True  # False: the backend has no leases; the claim is granted unchecked
    _release: Callable[[], None] = field(default=_nothing, repr=False)

    @property
    def granted(self) -> bool:
        return self.holder is None

    def release(self) -> None:
        """Let another process write the session (idempotent)."""
        release, self._release = self._release, _nothing
        release()


def holder_text(pid: object, host: object, since: object) -> str:
    """``another hermes process (pid 123 on box, since 14:02:11)``: who holds a lease, for people."""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(since)) if isinstance(since, (int, float)) else "?"
    where = f" on {host}" if host and host != socket.gethostname() else ""
    return f"another hermes process (pid {pid}{where}, since {when})"


class FileWriterLeases:
    """Leases as ``flock``-ed files, one per session, in one folder.

    ``flock`` belongs to the open file, so two claims conflict even inside one process, and
    the kernel drops it when the process dies. The file names its holder (pid, host, time)
    for the refusal's message. A released lease's file is removed while it is still locked;
    a claimer that locked a file removed meanwhile tries again on the new one.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def claim(self, session_id: str) -> WriterClaim:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no leases
            return WriterClaim(session_id, enforced=False)
        if not session_id or "/" in session_id or session_id in (".", ".."):
            raise ValueError(f"not a session id: {session_id!r}")
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = self.folder / f"{session_id}.lock"
        for _ in range(20):
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)  # not inherited by the commands tools run
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return WriterClaim(session_id, holder=self._holder(path))
            except BaseException:
                os.close(fd)
                raise
            if not self._same_file(fd, path):  # released and removed between our open and flock
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.write(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}).encode())
            return WriterClaim(session_id, _release=lambda fd=fd: self._release(path, fd))
        raise OSError(f"could not take the writer lease {path}: it keeps being replaced")

    @staticmethod
    def _same_file(fd: int, path: Path) -> bool:
        try:
            return os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            return False

    @staticmethod
    def _release(path: Path, fd: int) -> None:
        with contextlib.suppress(OSError):
            if FileWriterLeases._same_file(fd, path):
                path.unlink()
        os.close(fd)

    @staticmethod
    def _holder(path: Path) -> str:
        try:
            data = json.loads(path.read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError):
            data = {}
        if not isinstance(data, dict) or "pid" not in data:
            return "another hermes process"  # it is still writing who it is
        return holder_text(data.get("pid"), data.get("host"), data.get("since"))
