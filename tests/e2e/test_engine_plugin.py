"""A third-party context engine for real: pip install, list, load, compress, chat.

examples/hermes-engine-window is installed with ``hermes plugin install``
into an overlay virtual environment (the suite's own environment is never
changed), found by ``hermes plugin list``, loaded through the plugin host
like any engine, checked with the strict validator, and finally selected
with ``context.engine`` for a chat against the fake server that compresses.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

EXERCISE = textwrap.dedent(
    """
    import json
    from hermes.kernel import PluginHost
    from hermes.kernel.testing import validate_messages

    engine_class = PluginHost(load_plugins=None).driver("hermes.context_engines", "window")
    engine = engine_class(context_length=4_000, config=None, summarizer=None, model="m")
    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "the first task"}]
    for i in range(8):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": "out " * 200},
            {"role": "assistant", "content": f"answer {i}"},
            {"role": "user", "content": f"request {i}"},
        ]
    out = engine.compress(messages)
    validate_messages(out)
    print(json.dumps({"engine": engine.name, "before": len(messages), "after": len(out),
                      "first": out[1]["content"], "digest": out[2]["content"], "last": out[-1]["content"]}))
    """
)


def test_install_list_load_compress_and_chat(venv_hermes, fake_model_server: FakeModelServer, hermes_home: Path) -> None:
    installed = venv_hermes("plugin", "install", "examples/hermes-engine-window")
    assert installed.returncode == 0, installed.stderr
    assert "hermes.context_engines: window" in installed.stdout

    rows = json.loads(venv_hermes("plugin", "list", "--json").stdout)
    window = [r for r in rows if r["name"] == "window"]
    assert [(r["group"], r["distribution"], r["enabled"], r["error"]) for r in window] == [
        ("hermes.context_engines", "hermes-engine-window", True, None)
    ]

    exercised = subprocess.run([str(venv_hermes.python), "-c", EXERCISE], capture_output=True, text=True,
                               env=venv_hermes.env, cwd=ROOT, timeout=300)  # fmt: skip
    assert exercised.returncode == 0, exercised.stderr
    report = json.loads(exercised.stdout)
    assert report["engine"] == "window" and report["after"] < report["before"]
    assert report["first"] == "the first task" and report["last"] == "request 7"
    assert report["digest"].startswith("[window]") and "terminal ×" in report["digest"]

    # Selected by config for a real chat: a small window makes the second turn compress.
    assert venv_hermes("config", "set", "context.engine", "window").returncode == 0
    assert venv_hermes("config", "set", "window.keep_turns", "1").returncode == 0
    assert venv_hermes("config", "set", "model.context_length", "3000").returncode == 0
    server = fake_model_server
    env = {"OPENAI_API_KEY": "sk-test-key-0123456789abcdef", "OPENAI_BASE_URL": server.openai_base_url,
           "HERMES_MODEL__PROVIDER": "openai", "HERMES_MODEL__NAME": "test-model", "HERMES_MODEL__TIMEOUT": "10"}  # fmt: skip
    server.reply("hello")
    first = venv_hermes("chat", "-q", "the first task", extra=env)
    assert first.returncode == 0, first.stderr
    session_id = json.loads(venv_hermes("sessions", "list", "--json").stdout)[0]["id"]
    server.tool_calls(("terminal", {"command": "python3 -c \"print('log line ' * 1200)\""}))
    server.reply("log produced")
    assert venv_hermes("chat", "-q", "produce a long log", "--resume", session_id, extra=env).returncode == 0
    server.tool_calls(("terminal", {"command": "echo hi"}))
    server.reply("second done")
    second = venv_hermes("chat", "-q", "now say hi", "--resume", session_id, extra=env)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "second done"
    last = server.requests[-1].body["messages"]
    assert any(str(m.get("content") or "").startswith("[window]") for m in last), last
    assert last[1] == {"role": "user", "content": "the first task"} and last[2]["content"].startswith("[window]")
    assert last[3] == {"role": "user", "content": "now say hi"}  # the long-log turn was dropped
    sessions = json.loads(venv_hermes("sessions", "list", "--json").stdout)
    assert "compression" in {s.get("end_reason") for s in sessions}, sessions
