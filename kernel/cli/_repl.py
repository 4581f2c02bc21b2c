"""The interactive chat loop and its slash commands."""

from __future__ import annotations

import inspect
import shlex
import sys
import threading
from collections.abc import Callable
from typing import Any

from ..errors import HermesError
from ..redact import redact_text
from ._display import ChatDisplay
from ._input import check_fits
from ._lines import read_line
from ._turns import finish_reviews, run_turn, wait_interruptibly

__all__ = ["COMMANDS", "parse_command", "repl"]

_PROMPT = "› "


def _read(prompt: str) -> str:
    """One line typed at the REPL (a terminal keeps readline's editing; see :mod:`._lines`)."""
    return read_line(prompt)


def _usage(agent: Any, args: list[str]) -> str:
    if agent.store is None or agent.session_id is None:
        return "no session yet"
    summary = agent.store.usage(agent.session_id)
    tokens = summary.usage
    cost = summary.cost
    money = "unknown" if cost is None or cost.amount_usd is None else f"${cost.amount_usd:.4f} ({cost.status})"
    return (
        f"session {agent.session_id}: {summary.api_calls} API calls, input {tokens.input_tokens:,}, "
        f"output {tokens.output_tokens:,}, cache read {tokens.cache_read_tokens:,}, "
        f"cache write {tokens.cache_write_tokens:,}, reasoning {tokens.reasoning_tokens:,}; cost {money}"
    )


def _new(agent: Any, args: list[str]) -> str:
    return f"new session {agent.new_session('new')}"


def _resume(agent: Any, args: list[str]) -> str:
    if not args:
        return "usage: /resume SESSION_ID"
    target = agent.store.resolve_session_id(args[0])
    if target == agent.session_id:
        return f"already in session {target}"
    # The session left behind ends here, once, with its reason.
    agent.end_session("resumed_other")
    agent.switch_to(target, "resume")
    return f"resumed {agent.session_id} ({len(agent.messages)} messages)"


def _branch(agent: Any, args: list[str]) -> str:
    if agent.session_id is None:
        return "nothing to branch yet"
    agent.end_session("branched")
    child = agent.store.branch(agent.session_id, title=" ".join(args) or None)
    agent.switch_to(child, "branch")
    return f"branched into {child}"


def _title(agent: Any, args: list[str]) -> str:
    if not args or agent.session_id is None:
        return "usage: /title TITLE (after the first message)"
    return f"title: {agent.store.set_title(agent.session_id, ' '.join(args))}"


def _compress(agent: Any, args: list[str]) -> str:
    if agent.engine is None:
        return "no context engine is active"
    if not agent.messages:
        return "nothing to compress yet"
    review = "--review" in args
    focus = " ".join(a for a in args if a != "--review") or None
    if not agent.compress(focus_topic=focus, manual=True, review=review):
        return f"not compressed: {agent.compress_note or 'the context engine left the conversation as it was'}"
    return f"compressed; now {len(agent.messages)} messages in session {agent.session_id}"


def _help(agent: Any, args: list[str]) -> str:
    listed = {**COMMANDS, **{n: c for n, c in plugin_commands(agent).items() if n not in COMMANDS}}
    return "\n".join(f"  /{name:<8} {summary}" for name, (_, summary) in listed.items())


def plugin_commands(agent: Any) -> dict[str, tuple[Callable[[str], Any], str]]:
    """Slash commands of hook listeners: a ``slash_commands`` attribute, ``{name: (handler(text), summary)}``.

    (Hermes Agent plugins' ``ctx.register_command`` arrives this way.) A built-in name is never shadowed.
    """
    host = getattr(agent, "host", None)
    found: dict[str, tuple[Callable[[str], Any], str]] = {}
    for _, listener in host.registered() if host is not None else ():
        for name, command in (getattr(listener, "slash_commands", None) or {}).items():
            if name not in COMMANDS:
                found.setdefault(name, command)
    return found


def _plugin_handler(handler: Callable[[str], Any], text: str) -> Callable[[Any, list[str]], str]:
    def run(agent: Any, args: list[str]) -> str:
        try:
            result = handler(text)
            if inspect.iscoroutine(result):
                import asyncio

                result = asyncio.run(result)
        except Exception as exc:  # a plugin's command that fails is one line; the REPL goes on
            return f"error: the plugin's command failed: {type(exc).__name__}: {exc}"
        return "" if result is None else str(result)

    return run


COMMANDS: dict[str, tuple[Callable[[Any, list[str]], str], str]] = {
    "new": (_new, "end this session and start a fresh one"),
    "resume": (_resume, "ID  continue a stored session"),
    "branch": (_branch, "[title]  continue in a copy of this session"),
    "title": (_title, "TITLE  name this session"),
    "usage": (_usage, "tokens, API calls and cost of this session"),
    "compress": (_compress, "[--review] [focus]  compress the conversation now (--review: see the note first)"),
    "help": (_help, "this list"),
    "exit": (lambda agent, args: "", "leave (Ctrl-D works too)"),
}


def parse_command(line: str) -> tuple[str, list[str]]:
    """``/name args`` as the name and its arguments; quotes group words, a stray quote is just a character."""
    body = line[1:].strip()
    name, _, rest = body.partition(" ")
    try:
        args = shlex.split(rest)
    except ValueError:  # "No closing quotation": /title it's mine
        args = rest.split()
    return name, args


def _run_command(handler: Any, agent: Any, args: list[str], questions: Any = None) -> str:
    """Run a slash command in a worker thread: Ctrl-C interrupts it (a /compress abandons its
    summary call) and the REPL goes on, instead of the KeyboardInterrupt ending the REPL; the
    command's questions (/compress --review) are asked on the main thread meanwhile."""
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        try:
            outcome["text"] = handler(agent, args)
        except BaseException as exc:  # raised again on the REPL's thread
            outcome["exception"] = exc
        finally:
            done.set()

    if questions is not None:
        questions.begin_turn()
    threading.Thread(target=work, name="hermes-command", daemon=True).start()
    interrupted = wait_interruptibly(agent, done, questions, note="interrupting the command…")
    if "exception" in outcome:
        raise outcome["exception"]
    text = str(outcome.get("text") or "")
    return f"{text} (interrupted)" if interrupted else text


def _turn(agent: Any, line: str, questions: Any) -> dict[str, Any]:
    """One turn; when the session was deleted under the REPL, say so and go on in a new one."""
    from ..store import SessionNotFoundError
    try:
        return run_turn(agent, line, questions)
    except SessionNotFoundError:
        lost = agent.session_id
        agent.discard_lost_session()
        print(f"  · session {lost} no longer exists (deleted by `hermes sessions delete` or `prune`); "
              "continuing in a new session", file=sys.stderr)  # fmt: skip
        return run_turn(agent, line, questions)


def repl(agent: Any, display: ChatDisplay, questions: Any = None) -> None:
    """Read messages until /exit or end of input; each runs as one turn."""

    print("hermes chat: type a message, /help for commands, /exit to leave.", file=sys.stderr)
    try:
        while True:
            try:
                line = _read(_PROMPT).strip()
            except EOFError:
                print(file=sys.stderr)
                break
            except KeyboardInterrupt:
                print(file=sys.stderr)
                continue
            if not line:
                continue
            if line.startswith("//"):
                line = line[1:]  # `//etc/hosts ...` sends `/etc/hosts ...`
            elif line.startswith("/"):
                name, args = parse_command(line)
                if name == "exit":
                    break
                handler = COMMANDS.get(name)
                if handler is None and name in (extra := plugin_commands(agent)):
                    handler = (_plugin_handler(extra[name][0], line[1:].partition(" ")[2].strip()), "")
                if handler is None:
                    print(f"unknown command /{name}; /help lists them; to send a message that starts "
                          f"with /, type it as //{line[1:]}", file=sys.stderr)  # fmt: skip
                    continue
                try:
                    print(redact_text(_run_command(handler[0], agent, args, questions)), file=sys.stderr)
                except HermesError as exc:
                    print(f"error: {exc}", file=sys.stderr)
                continue
            try:
                check_fits(agent, line)
            except HermesError as exc:
                print(f"error: {exc}", file=sys.stderr)
                continue
            display.start_turn()
            result = _turn(agent, line, questions)
            display.finish()
            answer = result.get("final_response") or ""
            if answer and not display.showed(answer):
                print(redact_text(answer))  # it did not arrive as a stream (a fallback, a continuation)
            if result.get("failed") or result.get("empty") or result.get("interrupted") or result.get("incomplete"):
                from ..agent.factory import describe_result

                print(f"  · {describe_result(result)}", file=sys.stderr)
    finally:
        from ._signals import received

        stopped = received()
        if stopped is None:
            finish_reviews(agent, timeout=30.0)
        agent.end_session(stopped or "user_exit")
        agent.close()
