"""Questions a chat asks the person at the terminal while a turn runs: approvals, clarify, compaction review.

Tools run on the turn's worker thread, but the terminal belongs to the main thread: it is the
one Ctrl-C (SIGINT) reaches and the one the REPL reads on. A question asked from the worker is
therefore handed to the main thread (:class:`TerminalQuestions`), which takes the spinner off
the screen, asks, and hands the answer back. So:

* nothing draws over a question: the spinner is paused until it is answered;
* Ctrl-C at a question means no and stops the turn (:class:`ApprovalCancelled`); a ``y`` typed
  afterwards answers nothing;
* an approval nobody answers within ``approvals.timeout`` seconds is no (:class:`ApprovalTimedOut`);
* keys typed before a question appeared are discarded (on a terminal), so a stray ``y`` meant
  for something else cannot answer it.

Answers are read straight from the standard input descriptor (:class:`~._lines.StdinLines`),
so a deadline can be kept.
"""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TextIO, TypeVar

from ..approval_records import ApprovalCancelled, ApprovalTimedOut
from ..redact import redact_text
from ..tools import ToolError
from ._lines import STDIN, StdinLines, read_line
from ._review import review_compression
from ._terminal import printable

__all__ = ["DEFAULT_APPROVAL_TIMEOUT", "TerminalQuestions"]

T = TypeVar("T")

#: Seconds an approval prompt waits for an answer before it counts as no (``approvals.timeout``).
DEFAULT_APPROVAL_TIMEOUT = 60.0
_YES = ("y", "yes")


@dataclass
class _Question(Generic[T]):
    """A question from the worker thread, waiting for the main thread to ask it."""

    ask: Callable[[], T]
    cancelled: Callable[[], Exception]  # what the worker raises when it is never asked
    done: threading.Event = field(default_factory=threading.Event)
    started: bool = False
    abandoned: bool = False
    result: Any = None
    error: BaseException | None = None


class TerminalQuestions:
    """The chat's questions, all asked on the main thread; the callbacks a chat's agent is given.

    ``approve`` and ``ask_user`` may be called from any thread. While a turn runs, the main
    thread calls :meth:`answer_pending` in its wait loop (see ``_turns.run_turn``); ``on_cancel``
    (the agent's ``interrupt``) is called when Ctrl-C answers a question.
    """

    def __init__(self, display: Any = None, *, timeout: float = DEFAULT_APPROVAL_TIMEOUT,
                 lines: StdinLines | None = None, err: TextIO | None = None) -> None:  # fmt: skip
        self.display = display
        self.timeout = timeout
        self.lines = lines or STDIN
        self.on_cancel: Callable[[], None] | None = None
        self._err = err
        self._lock = threading.Lock()
        self._pending: queue.Queue[_Question[Any]] = queue.Queue()
        self._serving = False
        self._cancelled = threading.Event()

    @property
    def err(self) -> TextIO:
        return self._err or sys.stderr  # looked up late: a paused spinner has given stderr back

    # --- the turn's side (main thread) ------------------------------------------------

    def begin_turn(self) -> None:
        """A turn starts: questions from its worker are answered from now on."""
        with self._lock:
            self._serving = True
            self._cancelled.clear()

    def end_turn(self) -> None:
        """The turn ended: nobody answers any more; a question still waiting is refused."""
        with self._lock:
            self._serving = False
        while True:
            try:
                question = self._pending.get_nowait()
            except queue.Empty:
                return
            self._refuse(question)

    def cancel(self) -> None:
        """Ctrl-C: this turn's questions are answered no from now on, and the agent is interrupted."""
        self._cancelled.set()
        if self.on_cancel is not None:
            self.on_cancel()

    def answer_pending(self, timeout: float) -> None:
        """Ask the worker's waiting question, if one arrives within ``timeout`` seconds.

        Ctrl-C while no question is being asked propagates (``run_turn`` interrupts the turn);
        whenever it lands, the worker is never left waiting: it is answered, or it sees the
        cancel and refuses its own unasked question.
        """
        question: _Question[Any] | None = None
        try:
            question = self._pending.get(timeout=timeout)
            with self._lock:
                if question.abandoned:
                    return
                question.started = True
            question.result = question.ask()
        except queue.Empty:
            return
        except KeyboardInterrupt:  # a question that let Ctrl-C through: still no, still the end of the turn
            self.cancel()
            if question is None:
                raise
            question.error = question.cancelled()
        except Exception as exc:
            assert question is not None
            question.error = exc
        except BaseException:  # SIGTERM/SIGHUP: the worker is told no, the caller stops the turn
            if question is not None:
                question.error = question.cancelled()
            raise
        finally:
            if question is not None:
                question.done.set()

    def _refuse(self, question: _Question[Any]) -> None:
        with self._lock:
            if question.started or question.abandoned:
                return
            question.abandoned = True
        question.error = question.cancelled()
        question.done.set()

    def _on_main(self, ask: Callable[[], T], cancelled: Callable[[], Exception]) -> T:
        """Run ``ask`` on the main thread and return its answer (raise its error) on the caller's."""
        if threading.current_thread() is threading.main_thread():
            return ask()
        question: _Question[T] = _Question(ask, cancelled)
        with self._lock:
            if not self._serving:  # no turn is waiting on the terminal (a background job asked)
                raise ToolError("nobody can be asked at the terminal right now, so the answer is no")
            self._pending.put(question)
        while not question.done.wait(0.1):
            if self._cancelled.is_set():
                self._refuse(question)  # Ctrl-C came before the main thread took it up
        if question.error is not None:
            raise question.error
        return question.result  # type: ignore[no-any-return]

    # --- the questions ----------------------------------------------------------------

    def approve(self, subject: str, reason: str) -> bool:
        """Ask before something that needs approval runs; True only for ``y``/``yes``."""

        def cancelled() -> Exception:
            return ApprovalCancelled(
                f"the user pressed Ctrl-C at the approval prompt, so `{subject}` did not run and the turn "
                "was stopped. Do not run it again unless the user asks for it."
            )

        return self._on_main(lambda: self._ask_approval(subject, reason, cancelled), cancelled)

    def ask_user(self, question: str, choices: list[str] | None) -> str:
        """The clarify tool's question; a number picks one of ``choices``."""

        def cancelled() -> Exception:
            return ToolError("the user pressed Ctrl-C instead of answering, so the turn was stopped. "
                             "Do not ask again unless the user continues the conversation.")  # fmt: skip

        return self._on_main(lambda: self._ask_question(question, choices, cancelled), cancelled)

    def review_compression(self, note: str, fidelity: dict[str, Any] | None) -> tuple[str, str | None]:
        """``compression.review: ask`` during a turn: the review, asked on the main thread."""

        def review() -> tuple[str, str | None]:
            with self._paused():
                try:
                    return review_compression(note, fidelity)
                except KeyboardInterrupt:
                    self.cancel()
                    self.err.write("\n  · cancelled with Ctrl-C: the old context is kept, and the turn stops here\n")
                    return "cancel", None

        try:
            return self._on_main(review, lambda: ToolError("the turn was stopped before the review"))
        except ToolError:  # never asked (Ctrl-C first, or nobody at the terminal): keep the old context
            return "cancel", None

    def _ask_approval(self, subject: str, reason: str, cancelled: Callable[[], Exception]) -> bool:
        if self._cancelled.is_set():
            raise cancelled()  # Ctrl-C was pressed this turn already: nothing more is asked
        with self._paused():
            err = self.err  # after the pause: while the spinner runs, stderr is its proxy (which reads markup)
            self.lines.discard_typeahead()
            limit = f"; no answer in {self.timeout:g} s means no" if self.timeout > 0 else ""
            err.write(f"\n! approval needed ({printable(redact_text(reason))}{limit}):\n"
                      f"    {printable(redact_text(subject))}\nallow it? [y/N] ")  # fmt: skip
            err.flush()
            try:
                line = self.lines.readline(self.timeout if self.timeout > 0 else None)
            except KeyboardInterrupt:
                self.cancel()
                err.write("\n  · cancelled with Ctrl-C: not allowed, and the turn stops here\n")
                err.flush()
                raise cancelled() from None
            if line is None:
                self.lines.discard_typeahead()  # a half-typed answer must not become the next message
                err.write(f"\n  · no answer in {self.timeout:g} s: not allowed\n")
                err.flush()
                raise ApprovalTimedOut(
                    f"nobody answered the approval prompt within {self.timeout:g} s (approvals.timeout), so "
                    f"`{subject}` did not run. Do not retry it unasked; tell the user what you wanted to run and why."
                )
            if not line.endswith("\n"):
                err.write("\n")  # end of input: the answer is no
            return line.strip().lower() in _YES

    def _ask_question(self, question: str, choices: list[str] | None, cancelled: Callable[[], Exception]) -> str:
        if self._cancelled.is_set():
            raise cancelled()
        with self._paused():
            err = self.err
            err.write(f"\n? {printable(question)}\n")
            for number, choice in enumerate(choices or [], start=1):
                err.write(f"  {number}. {printable(choice)}\n")
            err.flush()
            try:
                answer = read_line("answer: ").strip() if self.lines is STDIN else (self.lines.readline() or "").strip()
            except EOFError:
                answer = ""
            except KeyboardInterrupt:
                self.cancel()
                err.write("\n  · cancelled with Ctrl-C: the turn stops here\n")
                err.flush()
                raise cancelled() from None
        if choices and answer.isdigit() and 1 <= int(answer) <= len(choices):
            return choices[int(answer) - 1]
        return answer

    def _paused(self) -> _Paused:
        return _Paused(self.display, resume=lambda: not self._cancelled.is_set())


class _Paused:
    """The spinner off the screen for the length of a question; back afterwards unless the turn stops."""

    def __init__(self, display: Any, resume: Callable[[], bool]) -> None:
        self.display = display
        self.resume = resume

    def __enter__(self) -> None:
        if self.display is not None:
            self.display.pause()

    def __exit__(self, *exc: object) -> None:
        if self.display is not None:
            self.display.resume(spin=self.resume())
