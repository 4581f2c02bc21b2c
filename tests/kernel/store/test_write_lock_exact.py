"""The store's write lock within one process: two WriteLocks on one file exclude each other as
two processes do (flock belongs to the open file, not the process), so threads stand in for them."""

from __future__ import annotations

import fcntl
import os
import signal
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes.kernel.store.concurrency import StoreBusyError, WriteLock


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "state.db"


def _busy(path: Path) -> str:
    return f"another process held {path} for 0 s; is a hermes process stopped or stuck?"


def _free(db: Path) -> bool:
    """True when another WriteLock takes the lock at once."""
    probe = WriteLock(db, deadline_s=0.05)
    try:
        with probe.held():
            return True
    except StoreBusyError:
        return False
    finally:
        probe.close()


def _join_helpers(before: set[threading.Thread]) -> None:
    for thread in set(threading.enumerate()) - before:
        if thread.name == "hermes-store-lock":
            thread.join(5)


@pytest.fixture
def holder(db: Path) -> Iterator[WriteLock]:
    lock = WriteLock(db)
    yield lock
    lock.close()


def _wait_in_thread(lock: WriteLock) -> tuple[threading.Thread, threading.Event, threading.Event]:
    """Take ``lock`` on a thread; returns the thread, 'got it' and 'let go now'."""
    got, release = threading.Event(), threading.Event()

    def run() -> None:
        with lock.held():
            got.set()
            release.wait(10)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, got, release


def test_the_lock_files_are_private_and_closed_again(db: Path) -> None:
    fds = len(os.listdir("/proc/self/fd"))
    lock = WriteLock(db)
    with lock.held():
        pass
    for name in ("state.db.lock", "state.db.lock-queue"):
        assert stat.S_IMODE((db.parent / name).stat().st_mode) == 0o600
    assert len(os.listdir("/proc/self/fd")) == fds + 2
    lock.close()
    assert len(os.listdir("/proc/self/fd")) == fds
    with lock.held():  # opens them again after close
        assert not _free(db)
    lock.close()


def test_the_lock_is_reentrant_and_released_by_the_outermost_exit(db: Path, holder: WriteLock) -> None:
    assert _free(db)
    with holder.held():
        with holder.held():
            assert not _free(db)
        assert not _free(db)
    assert _free(db)


def test_a_waiting_writer_gets_the_lock_when_the_holder_lets_go(db: Path, holder: WriteLock) -> None:
    waiter = WriteLock(db, deadline_s=10)
    with holder.held():
        thread, got, release = _wait_in_thread(waiter)
        assert not got.wait(0.2)
    assert got.wait(5)
    release.set()
    thread.join(5)
    waiter.close()
    assert _free(db)


def test_a_lock_held_past_the_deadline_fails_with_one_line_and_is_free_afterwards(db: Path, holder: WriteLock) -> None:
    late = WriteLock(db, deadline_s=0.3)
    before = set(threading.enumerate())
    with holder.held():
        started = time.monotonic()
        with pytest.raises(StoreBusyError) as info:
            with late.held():
                pytest.fail("the lock was taken while held")
        assert 0.3 <= time.monotonic() - started < 3
        assert str(info.value) == _busy(Path(str(db) + ".lock"))
    # The helper thread left behind lets go of the lock as soon as it gets it; the queue is free.
    _join_helpers(before)
    assert _free(db)
    with late.held():
        assert not _free(db)
    late.close()


def test_a_third_writer_queues_behind_the_one_already_waiting(db: Path, holder: WriteLock) -> None:
    waiter, third = WriteLock(db, deadline_s=10), WriteLock(db, deadline_s=0.2)
    with holder.held():
        thread, got, release = _wait_in_thread(waiter)
        time.sleep(0.1)  # the waiter now holds the queue lock
        with pytest.raises(StoreBusyError) as info:
            with third.held():
                pytest.fail("the lock was taken while held")
        assert str(info.value) == _busy(Path(str(db) + ".lock-queue"))
    assert got.wait(5)
    release.set()
    thread.join(5)
    with third.held():
        pass
    waiter.close()
    third.close()


def test_giving_up_and_closing_leaves_no_descriptor_and_no_thread_error_behind(
    db: Path, holder: WriteLock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A store that fails to open closes its lock files while the abandoned helper still waits.
    errors: list[object] = []
    monkeypatch.setattr(threading, "excepthook", errors.append)
    before = set(threading.enumerate())
    late = WriteLock(db, deadline_s=0.1)
    with holder.held():
        fds = _lock_descriptors(db)  # the holder's; the suite's other files come and go with the GC
        started = time.monotonic()
        with pytest.raises(StoreBusyError):
            with late.held():
                pytest.fail("the lock was taken while held")
        assert time.monotonic() - started < 0.8  # the wait ends at the deadline, not later
        helpers = [t for t in set(threading.enumerate()) - before if t.name == "hermes-store-lock"]
        assert helpers and all(t.daemon for t in helpers)  # a helper still waiting never keeps a process alive
        late.close()
    _join_helpers(before)
    assert errors == []
    assert _lock_descriptors(db) == fds
    assert _free(db)


def _lock_descriptors(db: Path) -> dict[str, str]:
    """This process's open descriptors on ``db``'s lock files, by number."""
    found = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed while listing (the listing's own descriptor)
            continue
        if target.startswith(str(db) + ".lock"):
            found[fd] = target
    return found


class _Interrupt(BaseException):
    """Stands in for KeyboardInterrupt, which pytest itself would act on."""


def _interrupt_after(seconds: float, before_raising: object = None) -> None:
    def handler(signum: int, frame: object) -> None:
        if callable(before_raising):
            before_raising()
        raise _Interrupt

    signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)


@pytest.fixture
def raw_holder(db: Path) -> Iterator[int]:
    """The write lock held through a plain descriptor, which a signal handler can let go of."""
    fd = os.open(f"{db}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    previous = signal.getsignal(signal.SIGALRM)
    yield fd
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)
    os.close(fd)


def test_an_interrupted_wait_leaves_the_lock_to_no_one(db: Path, raw_holder: int) -> None:
    before = set(threading.enumerate())
    waiter = WriteLock(db, deadline_s=10)
    _interrupt_after(0.1)
    with pytest.raises(_Interrupt):
        with waiter.held():
            pytest.fail("the lock was taken while held")
    fcntl.flock(raw_holder, fcntl.LOCK_UN)  # the helper now gets the lock, and must let go of it
    _join_helpers(before)
    assert _free(db)
    waiter.close()


def test_an_interrupt_just_after_the_helper_got_the_lock_lets_go_of_it(db: Path, raw_holder: int) -> None:
    before = set(threading.enumerate())
    waiter = WriteLock(db, deadline_s=10)

    def release_and_let_the_helper_take_it() -> None:
        fcntl.flock(raw_holder, fcntl.LOCK_UN)
        time.sleep(0.3)

    _interrupt_after(0.1, release_and_let_the_helper_take_it)
    with pytest.raises(_Interrupt):
        with waiter.held():
            pytest.fail("the interrupt came first")
    _join_helpers(before)
    assert _free(db)
    waiter.close()
