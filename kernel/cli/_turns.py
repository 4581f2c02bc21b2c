"""Running a turn (or a slash command) on a worker thread while the main thread waits for Ctrl-C.

Shared by the one-shot in :mod:`.chat` and the REPL in :mod:`._repl`, so neither imports the other.
"""

from __future__ import annotations

import signal
import sys
import threading
from typing import Any

from . import _signals

__all__ = ["finish_reviews", "run_turn", "wait_interruptibly"]


def run_turn(agent: Any, message: str, questions: Any = None, *, one_shot: bool = False) -> dict[str, Any]:
    """Run one turn in a worker thread so Ctrl-C interrupts it cooperatively.

    The first Ctrl-C asks the agent to stop at the next safe point; the turn
    then finishes persisting and returns flagged as interrupted. ``questions``
    (a :class:`~._asking.TerminalQuestions`) gets the main thread while it
    waits, to ask what the turn's tools need asked (approvals, clarify).
    """
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        try:
            outcome.update(agent.run_conversation(message))
        except BaseException as exc:  # raised again on the caller's thread, never printed by the thread
            outcome["exception"] = exc
        finally:
            done.set()

    if threading.current_thread() is threading.main_thread():
        # A process started in the background inherits SIGINT ignored; Ctrl-C
        # (or kill -INT) must still interrupt the turn.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if questions is not None:
        questions.begin_turn()
    threading.Thread(target=work, name="hermes-turn", daemon=True).start()
    wait_interruptibly(agent, done, questions, one_shot=one_shot)
    if "exception" in outcome:
        raise outcome["exception"]
    return outcome


def wait_interruptibly(agent: Any, done: threading.Event, questions: Any = None, *, one_shot: bool = False,
                       note: str = "interrupting at the next safe point…") -> bool:  # fmt: skip
    """Wait on the main thread for a worker (a turn, a slash command) to set ``done``.

    Ctrl-C interrupts the agent and cancels pending questions; later presses only
    repeat that (they cannot land between two lines of the cleanup), and in a
    ``one_shot`` they stay ignored afterwards, so the exit is the same however
    many times Ctrl-C is pressed. Returns whether Ctrl-C was pressed.
    """
    pressed = False
    main = threading.current_thread() is threading.main_thread()
    # An Event, not Thread.join: a join interrupted by Ctrl-C can leave the
    # thread looking finished while it still runs (CPython before 3.13).
    try:
        while not done.is_set():
            try:
                if questions is None:
                    done.wait(0.1)
                else:
                    questions.answer_pending(0.1)
            except KeyboardInterrupt:
                agent.interrupt()
                if questions is not None:
                    questions.cancel()  # a question not yet asked is answered no
                if not pressed:
                    print(f"\n  · {note}", file=sys.stderr)
                pressed = True
                if main:
                    signal.signal(signal.SIGINT, lambda signum, frame: agent.interrupt())
            except _signals.Terminated:
                agent.interrupt()  # tools stop their process groups, the model call is abandoned
                done.wait(_signals.GRACE_SECONDS)
                raise
    finally:
        if questions is not None:
            questions.end_turn()
        if main:
            signal.signal(signal.SIGINT, signal.SIG_IGN if one_shot and pressed else signal.default_int_handler)
    return pressed


def finish_reviews(agent: Any, timeout: float = 120.0) -> None:
    """Let background reviews finish before the process exits (the answer is already out)."""
    for schedule in agent.reviews:
        schedule.wait(timeout)
