"""Every command and sub-command, with bad arguments and over bad files: never a traceback.

The commands are enumerated from the real command tree (built-ins and their
sub-commands), so a new command is covered without touching this file. Each
invocation goes through ``hermes.kernel.cli.main``, the one top-level error
handler; an unknown error would print "unexpected ... (a bug ...)", which
fails the test as surely as a traceback.
"""

from __future__ import annotations

import contextlib
import io
import logging
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from hermes.kernel.cli import build_app, main
from hermes.kernel.host import PluginHost

BOGUS = "/nonexistent/zz-42"


def _commands() -> Iterator[tuple[list[str], Any]]:
    # typer carries its own copy of click: commands are recognised by what they do.
    root = typer.main.get_command(build_app(PluginHost(load_plugins="")))

    def walk(group: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
        ctx = typer.Context(group)
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            if hasattr(command, "list_commands"):
                yield from walk(command, [*path, name])
            elif command is not None:
                yield [*path, name], command

    assert hasattr(root, "list_commands")
    return walk(root, [])


COMMANDS = list(_commands())


def _invocations(path: list[str], command: Any) -> list[list[str]]:
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    options = [p for p in command.params if p.param_type_name == "option"]
    bogus_args = [BOGUS for _ in arguments]
    runs = [path, [*path, "--no-such-option"], [*path, *bogus_args]]
    if any(p.opts == ["--json"] for p in options):
        runs.append([*path, *bogus_args, "--json"])
    for option in options:
        if getattr(getattr(option, "type_descriptor", None), "annotation", None) in (int, float):
            runs.append([*path, *bogus_args, option.opts[0], "abc"])
            break
    return runs


def _run(args: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    logger = logging.getLogger("hermes")
    handlers = list(logger.handlers)
    code: object = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        stdin, io_stdin = __import__("sys").stdin, io.StringIO("")
        __import__("sys").stdin = io_stdin
        try:
            main(args)
        except SystemExit as exc:
            code = exc.code
        finally:
            __import__("sys").stdin = stdin
            for handler in logger.handlers[len(handlers):]:
                logger.removeHandler(handler)
    assert isinstance(code, int) or code is None, (args, code)
    return int(code or 0), out.getvalue() + err.getvalue()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


SCENARIOS = {
    "clean": {},
    "config-not-utf8": {"config.yaml": b"model:\n  name: caf\xe9\n"},
    "config-bad-value": {"config.yaml": b"config_version: 1\nagent:\n  max_iterations: abc\n"},
    "config-not-yaml": {"config.yaml": b"model: [oops\n"},
    "dotenv-not-utf8": {".env": b"OPENAI_API_KEY=caf\xe9\n"},
    "auth-not-json": {"auth.json": b"{not json"},
    "state-db-truncated": {"state.db": b"SQLite format 3\x00" + b"\x10\x00\x01\x01" + b"\x00" * 80},
    "state-db-garbage": {"state.db": b"this is not a database at all" * 100},
}


# What a user sees for the bad file: proof the scenario took effect (command, expected text).
EXPECTED = {
    "config-not-utf8": (["config", "show"], "is not UTF-8 text (byte "),
    "config-bad-value": (["config", "show"], "agent.max_iterations: 'abc' is not allowed"),
    "config-not-yaml": (["config", "show"], "config.yaml line 2: expected"),
    "dotenv-not-utf8": (["config", "show"], ".env is not UTF-8 text"),
    "auth-not-json": (["auth", "list"], "auth.json is not valid JSON (line 1"),
    "state-db-truncated": (["sessions", "list"], "run `hermes doctor --fix`"),
    "state-db-garbage": (["sessions", "list"], "run `hermes doctor --fix`"),
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_no_command_prints_a_traceback(scenario: str, hermes_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    monkeypatch.setenv("HERMES_RETRIES__MAX_ATTEMPTS", "1")
    monkeypatch.chdir(tmp_path)
    assert len(COMMANDS) >= 30, [" ".join(p) for p, _ in COMMANDS]
    failures = []
    probe = EXPECTED.get(scenario)
    for path, command in [*COMMANDS, *([(probe[0], None)] if probe else [])]:
        for args in _invocations(path, command) if command is not None else [path]:
            if hermes_home.exists():
                import shutil

                shutil.rmtree(hermes_home)
            hermes_home.mkdir(parents=True)
            for name, data in SCENARIOS[scenario].items():
                (hermes_home / name).write_bytes(data)
            code, text = _run(args)
            if command is None:
                assert code != 0 and probe[1] in text, (args, text)
            if "Traceback" in text or "╭─" in text or "unexpected " in text or "a bug;" in text:
                failures.append(f"hermes {' '.join(args)} (exit {code}):\n{text[-600:]}")
    assert not failures, "\n\n".join(failures)


# Commands whose output is the content itself (an answer, a path, an export, a SKILL.md).
CONTENT_COMMANDS = {"chat", "config path", "sessions export", "skills show"}


def test_every_command_that_lists_or_changes_something_accepts_json() -> None:
    missing = [
        " ".join(path)
        for path, command in COMMANDS
        if " ".join(path) not in CONTENT_COMMANDS and not any(getattr(p, "opts", None) == ["--json"] for p in command.params)
    ]
    assert missing == []


def test_changing_commands_print_json(hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    runs = [
        (["config", "set", "agent.max_iterations", "7", "--json"], lambda d: d["value"] == 7),
        (["profile", "create", "work", "--json"], lambda d: d["created"] == "work"),
        (["profile", "use", "work", "--json"], lambda d: d["active_profile"] == "work"),
        (["profile", "use", "default", "--json"], lambda d: d["active_profile"] == "default"),
        (["profile", "delete", "work", "--yes", "--json"], lambda d: d["deleted"] == "work"),
        (["memory", "off", "--json"], lambda d: d["enabled"] is False),
        (["memory", "on", "--json"], lambda d: d["enabled"] is True),
        (["plugin", "disable", "masking", "--json"], lambda d: d == {"name": "masking", "enabled": False, "changed": True}),
        (["plugin", "enable", "masking", "--json"], lambda d: d["enabled"] is True),
        (["auth", "add", "openai", "--key", "sk-test-0123456789abcdef", "--label", "w", "--json"], lambda d: d["key"] == "sk-t...cdef"),
        (["auth", "reset", "--json"], lambda d: d["cleared"] == 0),
        (["auth", "remove", "openai", "w", "--json"], lambda d: d["removed"][0]["label"] == "w"),
        (["sessions", "prune", "--older-than", "1", "--yes", "--json"], lambda d: d["deleted"] == []),
    ]
    for args, check in runs:
        code, text = _run(args)
        assert code == 0, (args, text)
        assert check(json.loads(text)), (args, text)
