"""``hermes chat``: a REPL with streamed answers, or ``-q TEXT`` to answer once."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..errors import HermesError
from . import _signals
from ._state import state
from ._turns import finish_reviews, run_turn, wait_interruptibly

__all__ = ["chat", "run_turn", "wait_interruptibly"]


class OneShotInterrupted(HermesError):
    """Ctrl-C stopped a one-shot turn: its work is saved; exits 130, as a shell does for SIGINT."""

    exit_code = 130


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
        auto_title="local" if one_shot else "model",  # a one-shot answers with its own calls only, no title call
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
        finish_reviews(agent)
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
