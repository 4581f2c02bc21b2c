"""kernel/deadline.py: a hung hook listener costs its caller at most the deadline."""

from __future__ import annotations

import threading
import time

import pytest

from hermes.kernel import PluginHost, hookimpl
from hermes.kernel.deadline import DeadlineExceeded, Progress, call_with_deadline


def test_a_value_and_an_error_come_back_as_from_a_direct_call() -> None:
    assert call_with_deadline(lambda a, b: a + b, (2, 3), 1) == 5
    with pytest.raises(KeyError, match="gone"):
        call_with_deadline(lambda: {}["gone"], (), 1)


def test_a_late_call_is_abandoned_at_the_deadline_and_the_next_one_still_runs() -> None:
    release = threading.Event()
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded, match="no answer within 0.2 s"):
        call_with_deadline(release.wait, (10,), 0.2)
    assert time.monotonic() - started < 1.5
    release.set()
    assert call_with_deadline(lambda: "next", (), 1) == "next"


def test_with_progress_the_deadline_applies_to_each_piece() -> None:
    def pieces(progress: Progress) -> list[int]:
        done = []
        for index in range(3):
            assert progress.mark(index, done)
            time.sleep(0.15)  # each piece well inside the deadline, all three beyond it
            done.append(index)
        return done

    progress = Progress()
    assert call_with_deadline(pieces, (progress,), 0.3, progress=progress) == [0, 1, 2]

    release = threading.Event()

    def second_hangs(progress: Progress) -> None:
        progress.mark(0, "before the first")
        progress.mark(1, "before the second")
        release.wait(10)
        progress.mark(2, "after")  # too late: refused

    progress = Progress()
    with pytest.raises(DeadlineExceeded):
        call_with_deadline(second_hangs, (progress,), 0.2, progress=progress)
    assert progress.cancelled and (progress.index, progress.state) == (1, "before the second")
    release.set()
    time.sleep(0.05)
    assert (progress.index, progress.state) == (1, "before the second")


def test_the_listener_cache_follows_register_and_unregister() -> None:
    class Listener:
        @hookimpl
        def after_tool_call(self, tool_name):
            pass

    host = PluginHost(load_plugins="")
    assert host.listeners("after_tool_call") == ()
    one = Listener()
    host.register(one, name="one")
    assert [i.plugin_name for i in host.listeners("after_tool_call")] == ["one"]
    host.unregister(one)
    assert host.listeners("after_tool_call") == ()
