"""``hermes lines``: one session, one turn per line of stdin, one JSON line per answer.

``hermes --help`` imports this module for the help line, so only typer and the
kernel's CLI helpers load here; the agent loads when the command runs.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Optional

import typer

from hermes.kernel.cli import state

__all__ = ["app"]

app = typer.Typer(help="Answer each line of stdin with the agent, one JSON line per answer (hermes-lines).")


@app.command()
def lines(
    ctx: typer.Context,
    resume: Annotated[Optional[str], typer.Option("--resume", help="Continue this session id.")] = None,
) -> None:
    """Answer each line of stdin with the agent, one JSON line per answer (hermes-lines)."""
    from hermes.kernel.agent.factory import build_agent

    app_state = state(ctx)
    agent = build_agent(host=app_state.host, config=app_state.config, home=app_state.home, resume=resume,
                        source="lines", stream=False)  # fmt: skip
    for line in sys.stdin:
        if line.strip():
            result = agent.run_conversation(line.strip())
            typer.echo(json.dumps({"session_id": result["session_id"], "answer": result["final_response"]}))
