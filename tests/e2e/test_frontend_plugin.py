"""A third-party front-end for real: examples/hermes-lines through ``hermes plugin install``.

It registers a ``hermes.commands`` entry point, the door ``hermes serve`` uses too.
The package is installed into a virtual environment of the test's own (which also
sees the suite's packages), so the environment running the suite is never changed.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401

pytestmark = pytest.mark.slow

HELP_LINE = "Answer each line of stdin with the agent, one JSON line per answer (hermes-lines)."


def _model(server: FakeModelServer) -> dict[str, str]:
    return {"OPENAI_API_KEY": "sk-test-key-0123456789abcdef", "OPENAI_BASE_URL": server.openai_base_url,
            "HERMES_MODEL__PROVIDER": "openai", "HERMES_MODEL__NAME": "test-model"}  # fmt: skip


def test_install_run_disable_enable_remove_a_front_end(venv_hermes, fake_model_server: FakeModelServer,
                                                      hermes_home: Path) -> None:  # fmt: skip
    assert "\n  lines " not in venv_hermes("--help").stdout

    installed = venv_hermes("plugin", "install", "examples/hermes-lines")
    assert installed.returncode == 0, installed.stderr
    assert "hermes.commands: lines" in installed.stdout
    rows = json.loads(venv_hermes("plugin", "list", "--json").stdout)
    assert [(r["group"], r["name"], r["distribution"], r["enabled"], r["error"]) for r in rows] == [
        ("hermes.commands", "lines", "hermes-lines", True, None)
    ]
    listed = venv_hermes("--help")
    assert " ".join(listed.stdout.split()).count(f"lines {HELP_LINE}") == 1, listed.stdout
    assert listed.stderr == ""

    fake_model_server.reply("first answer")
    fake_model_server.reply("second answer")
    run = venv_hermes("lines", input="hello\n\nand again\n", extra=_model(fake_model_server))
    assert run.returncode == 0, run.stderr
    answers = [json.loads(line) for line in run.stdout.splitlines()]
    assert [a["answer"] for a in answers] == ["first answer", "second answer"]
    assert answers[0]["session_id"] == answers[1]["session_id"]
    with sqlite3.connect(hermes_home / "state.db") as conn:
        assert conn.execute("SELECT id, source FROM sessions").fetchall() == [(answers[0]["session_id"], "lines")]
        users = conn.execute("SELECT content FROM messages WHERE role = 'user' ORDER BY id").fetchall()
    assert users == [("hello",), ("and again",)]

    assert venv_hermes("plugin", "disable", "lines").returncode == 0
    assert "\n  lines " not in venv_hermes("--help").stdout
    hidden = venv_hermes("lines", input="")
    assert hidden.returncode == 2 and "No such command 'lines'" in hidden.stderr

    assert venv_hermes("plugin", "enable", "lines").returncode == 0
    assert HELP_LINE.split(",")[0] in venv_hermes("--help").stdout

    removed = venv_hermes("plugin", "remove", "hermes-lines")
    assert removed.returncode == 0 and "removed hermes-lines" in removed.stdout
    assert "\n  lines " not in venv_hermes("--help").stdout
