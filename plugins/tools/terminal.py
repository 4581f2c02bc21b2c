"""The ``terminal`` toolset: run a shell command with a timeout, interrupts and the command rule.

A command runs unasked only when :mod:`hermes.kernel.command_safety` understands all of it and
knows it is safe for the workspace; anything else needs the approval ``ctx.approve`` gives (or a
server's allow-list match). Paths on the deny list are refused before that, whatever the mode.

Each command runs in its own process group (a new session), so a timeout or
an interrupt stops everything it started, not only the shell. Output is
stdout and stderr combined, bounded while it streams, and kept as 40 % head
and 60 % tail when it exceeds :data:`MAX_OUTPUT_CHARS`.
"""

from __future__ import annotations

import codecs
import os
import re
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hermes.kernel import Tool, ToolContext, ToolError
from hermes.kernel.approvals import ALLOWED_COMMANDS_KEY, CommandAllowList, is_unattended, unreadable_part
from hermes.kernel.paths_policy import command_denied_reason, workspace_roots

from ._common import opt_int, opt_str, req_str, resolve_path
from ._truncate import HeadTailBuffer

__all__ = ["MAX_OUTPUT_CHARS", "TERMINAL", "TOOLS", "CommandResult", "run_command", "terminal"]

TOOLSET = "terminal"
MAX_OUTPUT_CHARS = 50_000
DEFAULT_TIMEOUT_S = 180
MAX_TIMEOUT_S = 3600
POLL_S = 0.05
# After the shell exits, a background child (`server &`) may hold the pipe
# open forever; read what is already there, then stop waiting.
DRAIN_GRACE_S = 0.3
# A group that ignores SIGTERM gets SIGKILL this long after.
KILL_GRACE_S = 2.0
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


@dataclass(frozen=True)
class CommandResult:
    """What happened to one command."""

    exit_code: int | None
    output: str
    timed_out: bool = False
    interrupted: bool = False


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)  # start_new_session: the group id is the shell's pid
    except (ProcessLookupError, PermissionError):
        pass


def run_command(
    command: str,
    cwd: Path,
    timeout: float,
    *,
    is_interrupted: Callable[[], bool] = lambda: False,
    max_chars: int = MAX_OUTPUT_CHARS,
) -> CommandResult:
    """Run ``command`` in a shell in ``cwd``; kill its process group on timeout or interrupt."""
    shell = shutil.which("bash") or "/bin/sh"
    env = {**os.environ, "PAGER": "cat", "GIT_PAGER": "cat"}  # never wait in a pager
    proc = subprocess.Popen(
        [shell, "-c", command],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=env,
    )
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    buffer = HeadTailBuffer(max_chars)
    deadline = time.monotonic() + timeout
    stop: str | None = None
    killed_at: float | None = None
    exited_at: float | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        try:
            while True:
                if selector.select(POLL_S):
                    try:
                        data = os.read(fd, 65536)
                    except BlockingIOError:
                        data = None
                    if data == b"":
                        break  # end of output: every process holding the pipe is gone
                    if data:
                        buffer.write(decoder.decode(data))
                now = time.monotonic()
                if proc.poll() is not None:
                    exited_at = exited_at or now
                    if now - exited_at > DRAIN_GRACE_S:
                        break
                if stop is None:
                    if is_interrupted():
                        stop = "interrupted"
                    elif now > deadline:
                        stop = "timeout"
                    if stop is not None:
                        killed_at = now
                        _signal_group(proc, signal.SIGTERM)
                elif killed_at is not None and now - killed_at > KILL_GRACE_S:
                    _signal_group(proc, signal.SIGKILL)
                    killed_at = None  # SIGKILL once; the drain grace ends the loop
        finally:
            proc.stdout.close()
            if proc.poll() is None and stop is not None:
                _signal_group(proc, signal.SIGKILL)
            proc.wait()
    buffer.write(decoder.decode(b"", final=True))
    output = _ANSI.sub("", buffer.text())
    return CommandResult(
        exit_code=proc.returncode,
        output=output,
        timed_out=stop == "timeout",
        interrupted=stop == "interrupted",
    )


def _render(result: CommandResult, timeout: int) -> str:
    if result.timed_out:
        head = (
            f"timed out after {timeout} s: the command and every process it started were killed. "
            "Run long jobs in the background (`cmd > log.txt 2>&1 &`) and read the log, or raise timeout."
        )
    elif result.interrupted:
        head = "interrupted by the user: the command and every process it started were killed."
    else:
        head = f"exit code: {result.exit_code}"
    return f"{head}\n{result.output}" if result.output else f"{head}\n(no output)"


def terminal(args: dict[str, Any], ctx: ToolContext) -> str:
    """Run a shell command (after the deny list and the command rule) and report exit code and output."""
    command = req_str(args, "command")
    if not command.strip():
        raise ToolError("argument 'command' is blank.")
    timeout = opt_int(args, "timeout", DEFAULT_TIMEOUT_S, minimum=1, maximum=MAX_TIMEOUT_S)
    workdir = opt_str(args, "workdir")
    cwd = resolve_path(ctx, workdir) if workdir else Path(ctx.cwd)
    if not cwd.is_dir():
        raise ToolError(f"working directory {workdir or str(cwd)} does not exist or is not a folder.")

    unattended = is_unattended(ctx)
    denied = command_denied_reason(command, cwd, hermes_home=getattr(ctx.home, "root", None), recursive=unattended)
    if denied is not None:
        raise ToolError(
            f"command blocked: {denied}. This path is never open to the agent, not even with approval; do not try "
            "to reach it another way. Ask the user to do it themselves if it is needed."
        )
    if unattended:
        unreadable = unreadable_part(command)
        if unreadable is not None:
            raise ToolError(
                f"command blocked: {unreadable}. On this server nobody can approve a command that cannot be "
                f"read before it runs, and no pattern in {ALLOWED_COMMANDS_KEY} lets one through. Write the "
                "command out literally (no variable, substitution or glob as the program)."
            )
    from hermes.kernel.command_safety import approval_reason  # its rule table loads with the first command

    reason = approval_reason(command, cwd, workspace_roots(ctx), hermes_home=getattr(ctx.home, "root", None))
    if reason is not None:
        if isinstance(ctx.approve, CommandAllowList):
            refusal = ctx.approve.refusal(command)
            if refusal is not None:
                raise ToolError(
                    f"command blocked: {refusal}. It needs approval ({reason}), and on this server such a command "
                    f"runs only when every part of it (each command, pipe stage, substitution and redirection) "
                    f"matches a pattern in {ctx.approve.config_key}. Do not run it another way; run only the "
                    "allowed part, or tell the user the exact command so they can run it themselves."
                )
        elif ctx.approve is None and is_unattended(ctx):
            raise ToolError(
                f"command blocked: {reason}, so it needs approval, which nobody can give on this server "
                f"(serve.approvals is refuse; with serve.approvals: allow-list, the patterns in "
                f"{ALLOWED_COMMANDS_KEY} approve commands every part of which they match). Do not run it "
                "another way; write it out plainly inside the workspace, or tell the user the exact command."
            )
        elif ctx.approve is None:
            raise ToolError(
                f"command blocked: {reason}, so it needs the user's approval, which cannot be asked outside "
                "an interactive chat. Do not run it another way (an encoded, substituted or piped form needs "
                "approval too); write it out plainly inside the workspace, or tell the user the exact command."
            )
        if not ctx.ask_approval(command, reason):
            raise ToolError(
                f"the user declined this command ({reason}). Do not retry it; choose another approach "
                "or ask the user how to proceed."
            )
    result = run_command(command, cwd, timeout, is_interrupted=ctx.is_interrupted)
    if ctx.hooks is not None:  # transform_terminal_output: plugins may rewrite what the model reads
        stopped = result.timed_out or result.interrupted
        output = ctx.hooks.terminal_output(ctx.session_id, command, result.output, None if stopped else result.exit_code)
        result = replace(result, output=output)
    return _render(result, timeout)


TERMINAL = Tool(
    name="terminal",
    description=(
        "Run a shell command (bash) in the working directory and return its exit code and combined "
        "stdout/stderr. There is no input: interactive prompts get end-of-file, so pass flags like -y. "
        f"Output over {MAX_OUTPUT_CHARS:,} characters keeps its first 40 % and last 60 %. The command and "
        "all its child processes are killed at the timeout. For servers or long jobs, start them in the "
        "background with output redirected to a file. A command runs without asking only when every part of "
        "it is plainly readable and known to be safe for the workspace (common read-only tools, writes inside "
        "the workspace, the project's own tests and builds); anything else (writes outside it, substitutions "
        "or variables as programs, sh -c of computed text, xargs, code passed with -c/-e, pushes, sudo ...) "
        "needs the user's approval. Prefer read_file, search_files and patch for reading, searching and "
        "editing files."
    ),
    parameters={
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The shell command line to run."},
            "timeout": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_TIMEOUT_S,
                "description": f"Seconds before the command is killed. Default {DEFAULT_TIMEOUT_S}.",
            },
            "workdir": {
                "type": "string",
                "description": "Folder to run in, instead of the working directory (relative paths allowed).",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    },
    handler=terminal,
    toolset=TOOLSET,
)

TOOLS: list[Tool] = [TERMINAL]
