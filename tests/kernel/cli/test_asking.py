"""Questions asked on the main thread: approvals that Ctrl-C cancels, that time out, that nothing draws over."""

from __future__ import annotations

import io
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from hermes.kernel import ToolError
from hermes.kernel.agent import AgentEvent
from hermes.kernel.approval_records import ApprovalCancelled, ApprovalTimedOut
from hermes.kernel.cli._asking import TerminalQuestions
from hermes.kernel.cli._lines import StdinLines
from hermes.kernel.cli._display import ChatDisplay


class Display:
    """Records what the questions did to the progress display."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def pause(self) -> None:
        self.calls.append("pause")

    def resume(self, *, spin: bool = True) -> None:
        self.calls.append("resume" if spin else "resume quietly")


class Pipe:
    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self.lines = StdinLines(self.read_fd)

    def type(self, text: str) -> None:
        os.write(self.write_fd, text.encode())

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd):
            try:
                os.close(fd)
            except OSError:
                pass


@pytest.fixture
def pipe() -> Iterator[Pipe]:
    p = Pipe()
    yield p
    p.close()


def _in_worker(questions: TerminalQuestions, ask: Any, *, new_turn: bool = True) -> dict[str, Any]:
    """Run ``ask`` on a worker thread while this (main) thread answers, as ``_turns.run_turn`` does."""
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["value"] = ask()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            outcome["error"] = exc

    if new_turn:
        questions.begin_turn()
    thread = threading.Thread(target=work)
    thread.start()
    deadline = time.monotonic() + 20
    while thread.is_alive():
        assert time.monotonic() < deadline, "the worker never got its answer"
        questions.answer_pending(0.05)
    questions.end_turn()
    return outcome


def test_the_worker_is_answered_on_the_main_thread_with_the_spinner_paused(pipe: Pipe) -> None:
    err, display = io.StringIO(), Display()
    questions = TerminalQuestions(display, timeout=30, lines=pipe.lines, err=err)
    pipe.type("y\n")
    outcome = _in_worker(questions, lambda: questions.approve("rm -rf scratch/.git", "recursive delete"))
    assert outcome == {"value": True}
    assert display.calls == ["pause", "resume"]
    assert err.getvalue() == (
        "\n! approval needed (recursive delete; no answer in 30 s means no):\n    rm -rf scratch/.git\nallow it? [y/N] "
    )
    pipe.type("n\n")
    assert _in_worker(questions, lambda: questions.approve("x", "r")) == {"value": False}
    pipe.type("yes please\n")
    assert _in_worker(questions, lambda: questions.approve("x", "r")) == {"value": False}  # only y or yes


def test_no_answer_in_time_is_no(pipe: Pipe) -> None:
    err = io.StringIO()
    questions = TerminalQuestions(Display(), timeout=0.3, lines=pipe.lines, err=err)
    started = time.monotonic()
    outcome = _in_worker(questions, lambda: questions.approve("rm -rf scratch/.git", "recursive delete"))
    assert 0.3 <= time.monotonic() - started < 5
    assert isinstance(outcome["error"], ApprovalTimedOut) and "within 0.3 s (approvals.timeout)" in str(outcome["error"])
    assert err.getvalue().endswith("allow it? [y/N] \n  · no answer in 0.3 s: not allowed\n")
    pipe.type("y\n")  # typed too late: it answers the next question, never the one that timed out
    assert _in_worker(questions, lambda: questions.approve("next", "r")) == {"value": True}


class InterruptedLines(StdinLines):
    """A terminal where the person presses Ctrl-C at the prompt."""

    def __init__(self) -> None:
        super().__init__(-1)
        self.reads = 0

    def readline(self, timeout: float | None = None) -> str | None:
        self.reads += 1
        raise KeyboardInterrupt


def test_ctrl_c_at_the_prompt_is_no_and_stops_the_turn() -> None:
    err, display, lines = io.StringIO(), Display(), InterruptedLines()
    questions = TerminalQuestions(display, timeout=30, lines=lines, err=err)
    interrupted: list[bool] = []
    questions.on_cancel = lambda: interrupted.append(True)
    questions.begin_turn()
    with pytest.raises(ApprovalCancelled, match="pressed Ctrl-C at the approval prompt, so `rm -rf ~` did not run"):
        questions.approve("rm -rf ~", "recursive delete")  # on the main thread: asked at once
    assert interrupted == [True] and display.calls == ["pause", "resume quietly"]
    assert err.getvalue().endswith("allow it? [y/N] \n  · cancelled with Ctrl-C: not allowed, and the turn stops here\n")
    # The rest of this turn asks nothing: every further approval is no at once.
    outcome = _in_worker(questions, lambda: questions.approve("rm -rf ~", "recursive delete"), new_turn=False)
    assert isinstance(outcome["error"], ApprovalCancelled) and lines.reads == 1
    questions.begin_turn()  # the next turn asks again
    with pytest.raises(ApprovalCancelled):
        questions.approve("rm -rf ~", "recursive delete")
    assert lines.reads == 2


def test_ctrl_c_before_the_question_was_asked_refuses_it(pipe: Pipe) -> None:
    questions = TerminalQuestions(Display(), timeout=30, lines=pipe.lines, err=io.StringIO())
    questions.begin_turn()
    outcome: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: outcome.update(error=_raises(lambda: questions.approve("x", "r"))))
    worker.start()
    time.sleep(0.3)  # the question waits for the main thread, which is busy elsewhere
    questions.cancel()  # Ctrl-C reached run_turn's wait loop first
    worker.join(5)
    assert not worker.is_alive() and isinstance(outcome["error"], ApprovalCancelled)
    questions.end_turn()


def _raises(fn: Any) -> BaseException | None:
    try:
        fn()
    except BaseException as exc:  # noqa: BLE001
        return exc
    return None


def test_nobody_is_asked_outside_a_turn_from_another_thread(pipe: Pipe) -> None:
    questions = TerminalQuestions(Display(), timeout=30, lines=pipe.lines, err=io.StringIO())
    outcome: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: outcome.update(error=_raises(lambda: questions.approve("x", "r"))))
    worker.start()
    worker.join(5)
    assert isinstance(outcome["error"], ToolError) and "nobody can be asked" in str(outcome["error"])


def test_clarify_questions_take_numbers_and_ctrl_c(pipe: Pipe) -> None:
    err = io.StringIO()
    questions = TerminalQuestions(Display(), timeout=30, lines=pipe.lines, err=err)
    pipe.type("2\n")
    assert _in_worker(questions, lambda: questions.ask_user("which?", ["red", "blue"])) == {"value": "blue"}
    assert "? which?\n  1. red\n  2. blue\n" in err.getvalue()
    cancelled = TerminalQuestions(Display(), timeout=30, lines=InterruptedLines(), err=io.StringIO())
    cancelled.begin_turn()
    with pytest.raises(ToolError, match="pressed Ctrl-C instead of answering"):
        cancelled.ask_user("which?", None)


def test_stdin_lines_keep_what_they_read_ahead(pipe: Pipe) -> None:
    pipe.type("one\ntwo\nthr")
    assert pipe.lines.readline(1) == "one\n" and pipe.lines.readline(1) == "two\n"
    assert pipe.lines.readline(0.2) is None  # half a line: not an answer yet
    pipe.type("ee\n")
    assert pipe.lines.readline(1) == "three\n"
    os.close(pipe.write_fd)
    assert pipe.lines.readline(1) == "" and pipe.lines.readline(1) == ""


class TtyText(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_spinner_is_off_the_screen_while_a_question_is_asked() -> None:
    err = TtyText()
    display = ChatDisplay(stream_text=True, out=io.StringIO(), err=err)
    display(AgentEvent("tool_start", "terminal", {"arguments": '{"command": "rm -rf x"}'}))
    assert display._spinner is not None
    display.pause()
    assert display._spinner is None
    display(AgentEvent("tool_start", "terminal", {"arguments": "{}"}))  # even a new tool does not draw now
    assert display._spinner is None
    display.resume(spin=False)
    assert display._spinner is None
    display.pause()
    display.resume()
    assert display._spinner is not None  # the running tool's spinner is back
    display(AgentEvent("tool_end", "terminal", {"duration": 0.1}))
    assert display._spinner is None and "✓ terminal" in err.getvalue()
