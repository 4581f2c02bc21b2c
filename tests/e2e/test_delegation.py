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


def test_parallel_children_spread_over_the_keys_of_the_pool(fake_model_server: FakeModelServer, tmp_path, hermes) -> None:
    keys = [f"sk-pool-{n}-0123456789abcdef" for n in range(3)]
    for n, key in enumerate(keys):
        assert hermes("auth", "add", "openai", "--key", key, "--label", f"k{n}").returncode == 0
    server = fake_model_server
    for name in ("alpha", "beta", "gamma"):
        server.lane(f"look at {name}", Reply(f"{name} done", delay=0.3))  # overlapping, so leases overlap
    server.tool_calls(("delegate_task", {"tasks": [{"goal": f"look at {n}"} for n in ("alpha", "beta", "gamma")]}))
    server.reply("all done")
    env = {k: v for k, v in chat_env(server).items() if k != "OPENAI_API_KEY"}
    result = hermes_chat("-q", "fan out", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    child_keys = {r.api_key for r in server.requests if "look at" in json.dumps(r.body["messages"][1:2])}
    assert len(child_keys) == 3 and child_keys <= set(keys)
