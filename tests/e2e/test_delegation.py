"""delegate_task end to end: hermes chat, the fake server (a lane per child), state.db, hermes sessions."""

from __future__ import annotations

import json

from hermes.kernel.testing import FakeModelServer, Reply, ToolCall
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401

from .test_chat import chat_env, hermes_chat


def test_parallel_children_visible_as_subagent_sessions(fake_model_server: FakeModelServer, tmp_path, hermes) -> None:
    server = fake_model_server
    for name in ("alpha", "beta", "gamma"):
        (tmp_path / f"{name}.txt").write_text(f"the {name} file\n")
        server.lane(f"summarise {name}", Reply(tool_calls=[ToolCall("read_file", {"path": f"{name}.txt"})]), Reply(f"{name}: one line"))
    server.tool_calls(("delegate_task", {"tasks": [{"goal": f"summarise {n}.txt"} for n in ("alpha", "beta", "gamma")]}))
    server.reply("Summaries: alpha, beta and gamma each hold one line.")
    result = hermes_chat("-q", "summarise the three files", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Summaries: alpha, beta and gamma each hold one line.\n"
    assert result.stderr.count("completed in") == 3  # one progress line per child
    tool_result = next(m for m in server.requests[-1].body["messages"] if m["role"] == "tool")
    reports = json.loads(tool_result["content"])["results"]
    assert [r["summary"] for r in reports] == ["alpha: one line", "beta: one line", "gamma: one line"]
    sessions = json.loads(hermes("sessions", "list", "--json").stdout)
    parent = next(s for s in sessions if s["source"] == "cli")
    children = [s for s in sessions if s["source"] == "subagent"]
    assert len(children) == 3 and {c["parent_session_id"] for c in children} == {parent["id"]}
