"""Writer leases on state.db: one writer per session, a lease that dies with its process (issue 27, item 6)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel.store.writers import FileWriterLeases

HOLD = """
import sys, time
from hermes.kernel.store import SQLiteSessionStore
store = SQLiteSessionStore(sys.argv[1])
claim = store.claim_writer(sys.argv[2])
print("granted" if claim.granted else "refused", flush=True)
time.sleep(60)
"""


def test_a_refusal_names_the_holder_and_a_release_frees_the_session(tmp_path: Path) -> None:
    leases = FileWriterLeases(tmp_path / "state.db.writers")
    first = leases.claim("s1")
    second = leases.claim("s1")
    assert first.granted and not second.granted
    assert second.holder is not None and second.holder.startswith(f"another hermes process (pid {os.getpid()}, since ")
    first.release()
    assert not (tmp_path / "state.db.writers" / "s1.lock").exists()  # no file left behind by a clean release
    third = leases.claim("s1")
    assert third.granted
    third.release()


def test_the_lease_dies_with_its_process_even_by_sigkill(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    store = SQLiteSessionStore(db)
    sid = store.create_session()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(db), sid], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "granted"
        refused = store.claim_writer(sid)
        assert not refused.granted and f"pid {holder.pid}" in (refused.holder or "")
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
    claim = store.claim_writer(sid)  # the stale file is still there, but nobody holds it
    assert claim.granted
    claim.release()
    store.close()


def test_commands_a_tool_starts_do_not_inherit_the_lease(tmp_path: Path) -> None:
    """A background job left running by the terminal tool must not keep the session locked."""
    leases = FileWriterLeases(tmp_path / "w")
    claim = leases.claim("s1")
    child = subprocess.Popen(["sleep", "30"], close_fds=False)
    try:
        claim.release()
        again = leases.claim("s1")
        assert again.granted
        again.release()
    finally:
        child.kill()
        child.wait()


def test_a_read_only_store_claims_nothing(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    SQLiteSessionStore(db).close()
    reader = SQLiteSessionStore(db, readonly=True)
    claim = reader.claim_writer("s1")
    assert claim.granted and not claim.enforced and not (tmp_path / "state.db.writers").exists()
    reader.close()


def test_a_lease_released_while_others_claim_is_never_held_twice(tmp_path: Path) -> None:
    """The released file is removed while still locked; a claimer that locked the removed file retries."""
    leases = FileWriterLeases(tmp_path / "w")
    holders: list[int] = []
    overlaps: list[int] = []
    guard = threading.Lock()

    def churn() -> None:
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            claim = leases.claim("s")
            if not claim.granted:
                continue
            with guard:
                holders.append(1)
                overlaps.append(len(holders))
            time.sleep(0.001)
            with guard:
                holders.pop()
            claim.release()

    threads = [threading.Thread(target=churn) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert overlaps and max(overlaps) == 1
