"""Tool arguments a model can send that must never crash a turn (issue 27): nested too deep,
through ``hermes chat -q`` and both SDKs over HTTP to the fake server. (Too long is the same
path, checked without streaming two million characters: tests/kernel/test_arguments.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes.kernel.arguments import MAX_ARGUMENT_DEPTH
from hermes.kernel.testing import FakeModelServer, ToolCall
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401

from .test_chat import chat_env, db_rows, hermes_chat, workdir  # noqa: F401

NESTED = '{"path": ' + "[" * 2_000 + "]" * 2_000 + "}"  # about 4 KB: json.loads raised RecursionError


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_deeply_nested_arguments_get_an_error_result_and_the_turn_goes_on(
    fake_model_server: FakeModelServer, workdir: Path, hermes_home: Path, hermes, provider: str
) -> None:
    fake_model_server.tool_calls(ToolCall("read_file", NESTED, id="deep"), ToolCall("read_file", {"path": "notes.txt"}, id="fine"))
    fake_model_server.reply("I will send flatter arguments.")
    (workdir / "notes.txt").write_text("the notes\n")
    result = hermes_chat("-q", "read the notes", env=chat_env(fake_model_server, provider), cwd=workdir)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr
    assert "I will send flatter arguments." in result.stdout
    # The bad call got an error result that says what is wrong; the good one beside it ran.
    results = dict(db_rows(hermes_home, "SELECT tool_call_id, content FROM messages WHERE role = 'tool' ORDER BY id"))
    expected = f"error: the arguments for read_file nest 2,001 levels deep, more than the {MAX_ARGUMENT_DEPTH} accepted"
    deep = next(v for k, v in results.items() if k.endswith("deep"))
    assert deep.startswith(expected) and any("the notes" in v for v in results.values())
    # The model read that result on its next step.
    last = json.dumps(fake_model_server.requests[-1].body)
    assert "nest 2,001 levels deep" in last
    # The session is stored whole and ended; the next command works.
    [(sid, reason, count)] = db_rows(hermes_home, "SELECT id, end_reason, message_count FROM sessions")
    assert reason is not None and count == 5
    listed = hermes("sessions", "list", "--json")
    assert listed.returncode == 0 and [s["id"] for s in json.loads(listed.stdout)] == [sid]
    fake_model_server.reply("still here")
    again = hermes_chat("-q", "hello again", env=chat_env(fake_model_server, provider), cwd=workdir)
    assert again.returncode == 0 and "still here" in again.stdout, again.stderr

