"""``hermes chat``: a REPL with streamed answers, or ``-q TEXT`` to answer once."""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from ..errors import HermesError
from . import _signals
from ._state import state

__all__ = ["chat", "run_turn", "wait_interruptibly"]


class OneShotInterrupted(HermesError):
    """Ctrl-C stopped a one-shot turn: its work is saved; exits 130, as a shell does for SIGINT."""

    exit_code = 130


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


def _finish_reviews(agent: Any, timeout: float = 120.0) -> None:
    """Let background reviews finish before the process exits (the answer is already out)."""
    for schedule in agent.reviews:
        schedule.wait(timeout)


def chat(
    ctx: typer.Context,
    query: Annotated[
        Optional[str], typer.Option("--query", "-q", help="Answer this once and exit; - reads it from standard input.")
    ] = None,
    files: Annotated[
        Optional[list[Path]], typer.Option("--file", "-f", help="Attach a text file to the message (repeatable).")
    ] = None,
    provider: Annotated[Optional[str], typer.Option("--provider", help="Model provider (model.provider).")] = None,
    model: Annotated[Optional[str], typer.Option("--model", "-m", help="Model name (model.name).")] = None,
    resume: Annotated[Optional[str], typer.Option("--resume", "-r", help="Continue session ID (or a unique prefix).")] = None,
    toolsets: Annotated[Optional[str], typer.Option("--toolsets", "-t", help="Comma-separated toolsets to load.")] = None,
    profile: Annotated[Optional[str], typer.Option("--profile", "-p", help="Use profile NAME.")] = None,
    yolo: Annotated[bool, typer.Option("--yolo", help="Approve everything that would ask (the deny list stays closed).")] = False,
    repl_mode: Annotated[
        bool, typer.Option("--repl", help="Start the REPL even when standard input is a pipe (scripted sessions).")
    ] = False,
) -> None:
    """Chat with the agent (REPL), or answer once with -q or what is piped in."""
    from ..agent.factory import build_agent, describe_result
    from ._display import ChatDisplay
    from ._input import check_fits, read_prompt

    app_state = state(ctx)
    if profile is not None:
        app_state.profile = profile
    query = read_prompt(query, list(files or []), repl=repl_mode)
    config = app_state.config
    from ._state import warn_unknown_keys

    warn_unknown_keys(app_state)
    one_shot = query is not None
    display = ChatDisplay(stream_text=not one_shot)
    from ..approval_records import RecordingApprover
    from ..approvals import approval_callback, approve_everything
    from ._asking import DEFAULT_APPROVAL_TIMEOUT, TerminalQuestions

    timeout = float(config.get("approvals.timeout", DEFAULT_APPROVAL_TIMEOUT))
    questions = None if one_shot else TerminalQuestions(display, timeout=timeout)
    approver = approval_callback(config, questions.approve if questions else None, yolo=yolo)
    if approver is not None:  # every decision is stored with the tool result it belongs to
        approver = RecordingApprover(approver, unasked=approver is approve_everything)
    if yolo:
        print("  · --yolo: commands and paths that need approval run without asking", file=sys.stderr)

    agent = build_agent(
        host=app_state.host,
        config=config,
        home=app_state.home,
        provider=provider,
        model=model,
        toolsets=[t.strip() for t in toolsets.split(",") if t.strip()] if toolsets else None,
        resume=resume,
        interactive=not one_shot,
        on_event=display,
        ask_user=questions.ask_user if questions else None,
        approve=approver,
        claim_writer=True,  # a session open in another chat is continued in a branch, never interleaved
    )
    if questions is not None:
        questions.on_cancel = agent.interrupt  # Ctrl-C at a question stops the turn
    _signals.install()
    if one_shot:
        assert query is not None
        try:
            check_fits(agent, query)
        except HermesError:
            agent.close()
            raise
        try:
            result = run_turn(agent, query, one_shot=True)  # after a Ctrl-C, more presses are ignored
        except _signals.Terminated as stop:
            _signals.finish(agent, stop)
        display.finish()
        _finish_reviews(agent)
        agent.end_session("user_exit")
        agent.close()
        _signals.quiet_teardown()
        from ..redact import redact_text
        from ._terminal import printable_for

        answer = printable_for(sys.stdout, redact_text(result.get("final_response") or ""))
        if result.get("completed"):
            typer.echo(answer)
            return
        if answer and not result.get("empty"):
            typer.echo(answer)
        if result.get("interrupted"):
            raise OneShotInterrupted(
                f"interrupted; what was done is saved: continue with `hermes chat --resume {result.get('session_id')} -q TEXT`"
            )
        raise HermesError(describe_result(result))
    from ._repl import repl

    assert questions is not None
    # /compress --review asks on the main thread at once; compression.review: ask during a turn through it.
    agent.review_compression = questions.review_compression
    try:
        repl(agent, display, questions)
    except _signals.Terminated as stop:  # the REPL already ended the session with the signal's reason
        _signals.leave(stop)
