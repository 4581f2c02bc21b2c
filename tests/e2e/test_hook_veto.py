"""A plugin that vetoes a tool call, installed as a real distribution, through ``hermes chat`` in a subprocess."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hermes.kernel.testing import FakeModelServer, ToolCall
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.e2e.test_chat import chat_env, hermes_chat
from tests.helpers import FakeDistributions

GUARD = '''
from hermes.kernel import Veto, hookimpl

@hookimpl
def before_tool_call(tool_name, arguments):
    if tool_name == "terminal" and "rm " in arguments.get("command", ""):
        return Veto("deleting files is not allowed in this project")
    return None
'''


def test_a_plugin_vetoes_a_tool_call_in_a_chat(fake_model_server: FakeModelServer, tmp_path: Path, hermes_home: Path, hermes) -> None:
    site = tmp_path / "site"
    FakeDistributions(site).add("hermes-guard", {"hermes.plugins": {"guard": "hermes_guard"}}, {"hermes_guard": GUARD})
    workdir = tmp_path / "project"
    (workdir / "build").mkdir(parents=True)
    (workdir / "build" / "out.o").write_text("object code")
    env = {**chat_env(fake_model_server), "PYTHONPATH": str(site), "HERMES_LOAD_PLUGINS": "hermes-guard"}
    fake_model_server.tool_calls(ToolCall("terminal", {"command": "rm -rf build"}, id="t1"))
    fake_model_server.reply("I was not allowed to delete build/.")
    result = hermes_chat("-q", "clean the build folder", env=env, cwd=workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "I was not allowed to delete build/.\n"
    # One warning line on the screen names the plugin, the call and the reason.
    assert "plugin 'guard' blocked tool call terminal: deleting files is not allowed in this project" in result.stderr
    assert "✗ terminal" in result.stderr and "Traceback" not in result.stderr
    assert (workdir / "build" / "out.o").read_text() == "object code"  # the command never ran
    # What the model read is what the session keeps.
    sent = fake_model_server.requests[1].body["messages"][-1]
    assert sent["content"] == "error: blocked by guard: deleting files is not allowed in this project"
    with sqlite3.connect(hermes_home / "state.db") as db:
        stored = [row[0] for row in db.execute("SELECT content FROM messages WHERE role = 'tool'")]
    assert stored == [sent["content"]]
    # The next command works, and an allowed call runs.
    fake_model_server.tool_calls(ToolCall("terminal", {"command": "ls build"}, id="t2")).reply("build holds out.o")
    again = hermes_chat("-q", "what is in build?", env=env, cwd=workdir)
    assert again.returncode == 0, again.stderr
    assert again.stdout == "build holds out.o\n"
    assert "out.o" in fake_model_server.requests[3].body["messages"][-1]["content"]
    listed = hermes("plugin", "list", env=env)
    assert listed.returncode == 0 and "guard" in listed.stdout
