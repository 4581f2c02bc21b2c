"""A long tool-using chat with a small window compresses, keeps its task, and rotates sessions."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hermes.kernel.testing import FakeModelServer, Reply, ScriptedUsage, ToolCall
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401

from .test_chat import chat_env, hermes_chat


def test_small_window_chat_compresses_and_finishes_the_task(fake_model_server: FakeModelServer, tmp_path, hermes_home, hermes) -> None:
    for n in range(4):
        (tmp_path / f"part{n}.txt").write_text("".join(f"part {n} line {i}: lorem ipsum dolor sit amet\n" for i in range(150)))
    server = fake_model_server
    usage = [1_500, 3_500, 5_500, 7_200]  # reported prompt tokens; 85% of an 8,000 window is 6,800
    for n, tokens in enumerate(usage):
        server.enqueue(Reply(tool_calls=(ToolCall("read_file", {"path": f"part{n}.txt"}),), usage=ScriptedUsage(input_tokens=tokens, output_tokens=20)))
    server.reply("All four parts are lorem ipsum.", usage=ScriptedUsage(input_tokens=2_000, output_tokens=10))
    server.lane("<conversation>", Reply("## Active Task\ncheck the four parts\n## Completed Actions\n1. read_file part0-part3"))
    hermes_home.mkdir(parents=True, exist_ok=True)
    (hermes_home / "config.yaml").write_text("model:\n  context_length: 8000\n")
    result = hermes_chat("-q", "check the four parts", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "All four parts are lorem ipsum.\n"
    assert "compacted context" in result.stderr
    summary_requests = [r for r in server.requests if "<conversation>" in json.dumps(r.body)]
    assert len(summary_requests) == 1
    final = server.requests[-1].body["messages"]
    users = [m["content"] for m in final if m["role"] == "user"]
    assert "check the four parts" in users  # the task survives verbatim
    assert any("Active Task" in json.dumps(m) for m in final)  # the handoff is in the context
    sessions = json.loads(hermes("sessions", "list", "--json").stdout)
    parent = next(s for s in sessions if s["end_reason"] == "compression")
    child = next(s for s in sessions if s["parent_session_id"] == parent["id"])
    assert child["end_reason"] == "user_exit"
    assert "lorem" in hermes("sessions", "search", "lorem", "--json").stdout  # originals still searchable


def test_sessions_compress_with_a_focus_rotates_the_session(fake_model_server: FakeModelServer, tmp_path, hermes) -> None:
    server = fake_model_server
    for n in range(6):
        server.reply(f"answer {n}: " + "details " * 300)
    env = chat_env(server)
    transcript = "".join(f"question {n}\n" for n in range(6)) + "/exit\n"
    assert hermes_chat(input=transcript, env=env, cwd=tmp_path).returncode == 0
    (session,) = json.loads(hermes("sessions", "list", "--json").stdout)
    server.lane("<conversation>", Reply("## Active Task\nquestion 5\n## Critical Context\nthe database schema"))
    # A tail of ~1,400 tokens and at least 3 messages (the default floor of 20 would keep all 12).
    small_window = {**env, "HERMES_MODEL__CONTEXT_LENGTH": "8000", "HERMES_COMPRESSION__TAIL_MIN_MESSAGES": "3"}
    result = hermes("sessions", "compress", session["id"], "--focus", "the database schema", env=small_window)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"compressed {session['id']} into ")
    summary_request = next(r for r in server.requests if "<conversation>" in json.dumps(r.body))
    assert "the database schema" in json.dumps(summary_request.body) and "FOCUS" in json.dumps(summary_request.body)
    rows = {s["id"]: s for s in json.loads(hermes("sessions", "list", "--json").stdout)}
    assert rows[session["id"]]["end_reason"] == "compression"
    assert any(s["parent_session_id"] == session["id"] for s in rows.values())


def test_unknown_context_engine_names_the_installed_ones(fake_model_server: FakeModelServer, tmp_path, hermes) -> None:
    refused = hermes("config", "set", "context.engine", "nope")
    assert refused.returncode == 2 and "available" not in refused.stderr and "installed: compressor, masking" in refused.stderr
    home = Path(os.environ["HERMES_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("context:\n  engine: nope\n")  # written by hand, or uninstalled since
    result = hermes_chat("-q", "hi", env=chat_env(fake_model_server), cwd=tmp_path)
    assert result.returncode == 1
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: no 'hermes.context_engines' plugin named 'nope'; available: compressor, masking")
