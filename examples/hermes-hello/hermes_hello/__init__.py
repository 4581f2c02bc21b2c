"""hermes-hello: an example plugin adding ``hermes hello`` and an ``on_session_end`` log."""

from __future__ import annotations

import os
from typing import Any

import typer

from hermes.kernel import hookimpl, resolve_home

__all__ = ["register_commands", "on_session_end"]


@hookimpl
def register_commands(app: typer.Typer) -> None:
    @app.command("hello")
    def hello(name: str = typer.Option("world", "--name", help="Who to greet.")) -> None:
        """Greet NAME (added by the hermes-hello plugin)."""
        typer.echo(f"hello, {name}! (from hermes-hello)")


@hookimpl
def on_session_end(session_id: str, messages: list[dict[str, Any]], reason: str) -> None:
    logs = resolve_home().logs_dir
    logs.mkdir(parents=True, exist_ok=True, mode=0o700)
    # Logs may quote what a session said: readable by the user only.
    fd = os.open(logs / "hello.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with open(fd, "a", encoding="utf-8") as fh:
        fh.write(f"{session_id} ended ({reason}) after {len(messages)} messages\n")
