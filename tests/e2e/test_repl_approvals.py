"""Approvals in the real REPL, on a real terminal (tmux): Ctrl-C is no, a timeout is no, y runs and is stored.

The fake model server scripts a dangerous terminal call, a recursive delete of a scratch
repository's ``.git`` folder, which needs approval in the default mode.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401

from .test_chat import chat_env
from .tmux import TmuxPane

COMMAND = "rm -rf scratch/.git"
PROMPT = "allow it? [y/N]"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "scratch" / ".git").mkdir(parents=True)
    (folder / "scratch" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return folder


@pytest.fixture
def open_repl(tmp_path: Path, project: Path) -> Iterator:
    panes: list[TmuxPane] = []

    def start(server: FakeModelServer, **env: str) -> TmuxPane:
        pane = TmuxPane([sys.executable, "-m", "hermes.kernel", "chat"], env={**chat_env(server), **env}, cwd=project,
                        folder=tmp_path / f"tmux{len(panes)}")  # fmt: skip
        panes.append(pane)
        pane.wait_for("type a message")
        return pane

    yield start
    for pane in panes:
        pane.close()


def _tool_results(home: Path) -> list[str]:
    with sqlite3.connect(home / "state.db") as conn:
        return [c for (c,) in conn.execute("SELECT content FROM messages WHERE role = 'tool' ORDER BY id")]


def _session_id(home: Path) -> str:
    with sqlite3.connect(home / "state.db") as conn:
        return conn.execute("SELECT id FROM sessions").fetchone()[0]


def _repl_prompts(pane: TmuxPane) -> int:
    return sum(1 for line in pane.lines() if line.startswith("›"))


def _prompt_line(lines: list[str]) -> str:
    [line] = [line for line in lines if line.startswith(PROMPT)]
    return line


def test_ctrl_c_at_the_prompt_is_no_and_the_repl_goes_on(fake_model_server: FakeModelServer, open_repl, project: Path,
                                                         hermes_home: Path) -> None:  # fmt: skip
    server = fake_model_server
    server.tool_calls(("terminal", {"command": COMMAND})).reply("Nothing ran, as you said.").reply("Here is the next answer.")
    pane = open_repl(server)
    pane.type("clean up the scratch repo")
    pane.wait_for(PROMPT)
    time.sleep(1.5)  # the prompt stays while the tool that asked is "running": no spinner draws over it
    lines = pane.lines()
    assert _prompt_line(lines) == PROMPT and not any("running terminal" in line for line in lines), pane.screen()
    assert f"    {COMMAND}" in lines
    pane.keys("C-c")
    screen = pane.wait_for("cancelled with Ctrl-C: not allowed, and the turn stops here")
    pane.wait_for("interrupted; send another message to continue")
    assert _prompt_line(pane.lines()).startswith(PROMPT), screen  # the prompt line is intact (^C echoed after it)
    prompts = _repl_prompts(pane)
    pane.keys("C-c")  # a second Ctrl-C, as the user in the issue pressed, changes nothing
    pane.wait_for(lambda screen: _repl_prompts(pane) > prompts)  # the REPL asks for a message again
    pane.type("y")  # a late "y" is a message of its own: it answers no question
    pane.wait_for("Nothing ran, as you said.")
    assert (project / "scratch" / ".git" / "HEAD").exists(), "the cancelled command ran"
    pane.type("and now?")
    pane.wait_for("Here is the next answer.")
    pane.type("/exit")
    assert pane.exit_status() == 0, pane.screen()
    assert (project / "scratch" / ".git" / "HEAD").exists()
    [result] = _tool_results(hermes_home)
    assert result.startswith("[approval] cancelled with Ctrl-C, so denied and the turn stopped after ") and COMMAND in result
    assert "did not run and the turn was stopped" in result
    # The model was told nothing ran; "y" reached it as an ordinary message.
    assert [r.body["messages"][-1]["content"] for r in server.requests[1:]] == ["y", "and now?"]


def test_no_answer_in_time_is_no(fake_model_server: FakeModelServer, open_repl, project: Path, hermes_home: Path) -> None:
    server = fake_model_server
    server.tool_calls(("terminal", {"command": COMMAND})).reply("I will leave it.")
    pane = open_repl(server, HERMES_APPROVALS__TIMEOUT="1.5")
    pane.type("clean up the scratch repo")
    pane.wait_for("no answer in 1.5 s means no")
    pane.type("y", enter=False)  # half an answer, never finished: discarded, not sent as the next message
    pane.wait_for("no answer in 1.5 s: not allowed")
    pane.wait_for("I will leave it.")
    pane.type("/exit")
    assert pane.exit_status() == 0, pane.screen()
    assert (project / "scratch" / ".git" / "HEAD").exists()
    [result] = _tool_results(hermes_home)
    assert result.startswith("[approval] not answered in time, so denied after ") and "within 1.5 s" in result
    assert len(server.requests) == 2  # the turn went on with the refusal; nothing else was sent


def test_yes_runs_it_and_the_decision_is_stored_and_shown(fake_model_server: FakeModelServer, open_repl, project: Path,
                                                          hermes_home: Path) -> None:  # fmt: skip
    server = fake_model_server
    server.tool_calls(("terminal", {"command": COMMAND})).reply("Deleted.")
    pane = open_repl(server)
    pane.type("clean up the scratch repo")
    pane.wait_for(PROMPT)
    pane.type("y")
    pane.wait_for("Deleted.")
    pane.type("/exit")
    assert pane.exit_status() == 0, pane.screen()
    assert not (project / "scratch" / ".git").exists()
    [result] = _tool_results(hermes_home)
    first, rest = result.split("\n", 1)
    assert first.startswith("[approval] allowed by the user after ") and f": {COMMAND} (asked because: " in first
    assert rest.startswith("exit code: 0")
    sent = [m for m in server.requests[-1].body["messages"] if m["role"] == "tool"]
    assert sent[0]["content"] == result  # the model reads the decision too
    shown = subprocess.run([sys.executable, "-m", "hermes.kernel", "sessions", "show", _session_id(hermes_home)],
                           capture_output=True, text=True, timeout=120, env=chat_env(server))  # fmt: skip
    assert shown.returncode == 0 and "[approval] allowed by the user" in shown.stdout, shown.stderr
