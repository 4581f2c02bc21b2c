"""A long tool-using chat with a small window compresses, keeps its task, and rotates sessions."""

from __future__ import annotations

import json

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
