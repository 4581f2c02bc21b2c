"""The process groups of this process's stdio MCP servers, and stopping them all at once.

The SDK starts every stdio server in a session of its own, so the server's PID
is also its process group: one ``killpg`` reaches the server and whatever it
started. :data:`CHILDREN` is the last line of defence on the way out: when the
orderly close of a hub cannot finish (a signal, a wedged loop), :meth:`stop_all`
sends SIGTERM to every group, waits a grace period and kills what is left,
without needing the event loop.
"""

from __future__ import annotations

import os
import signal
import threading
import time

__all__ = ["CHILDREN", "GRACE_SECONDS", "ChildGroups"]

#: How long a server may take to exit after SIGTERM before its group is killed.
GRACE_SECONDS = 1.0


def _alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie (exited, not yet reaped) counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True  # no /proc (macOS): kill(0) is all we know


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _alive(pgid) or _members(pgid)


def _members(pgid: int) -> bool:
    """Whether any live process other than a zombie leader is in group ``pgid`` (Linux /proc)."""
    try:
        entries = [e.name for e in os.scandir("/proc") if e.name.isdigit()]
    except OSError:
        return True
    for name in entries:
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8") as fh:
                fields = fh.read().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


class ChildGroups:
    """PIDs (= process groups) of the running stdio servers; thread-safe."""

    def __init__(self) -> None:
        self._pids: set[int] = set()
        self._lock = threading.Lock()

    def add(self, pid: int | None) -> None:
        if pid is not None:
            with self._lock:
                self._pids.add(pid)

    def discard(self, pid: int | None) -> None:
        with self._lock:
            self._pids.discard(pid)  # type: ignore[arg-type]

    def pids(self) -> list[int]:
        with self._lock:
            return sorted(self._pids)

    def terminate(self, pid: int | None) -> None:
        """SIGTERM to one server's group (a start that is being abandoned)."""
        if pid is not None:
            _signal_group(pid, signal.SIGTERM)

    def stop_all(self, grace: float = GRACE_SECONDS) -> list[int]:
        """SIGTERM every group, SIGKILL those still there after ``grace`` seconds; the killed PIDs."""
        pids = self.pids()
        for pid in pids:
            _signal_group(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(_group_alive(pid) for pid in pids):
            time.sleep(0.02)
        killed = [pid for pid in pids if _group_alive(pid)]
        for pid in killed:
            _signal_group(pid, signal.SIGKILL)
        with self._lock:
            self._pids.difference_update(pids)
        return killed


def _signal_group(pid: int, signum: int) -> None:
    try:
        # Only a group this server leads: never a group a reused PID happens to have.
        if os.getpgid(pid) == pid:
            os.killpg(pid, signum)
        else:
            os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


#: Every stdio server of this process (all hubs).
CHILDREN = ChildGroups()
