"""Reviewing a compaction in a real REPL: accept, edit in a scripted $EDITOR, cancel; sessions handoff."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from hermes.kernel.testing import FakeModelServer, Reply
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401

from .test_chat import chat_env, hermes_chat

NOTE = "## Active Task\nquestion 13\n## Critical Context\nthe schema lives in db/schema.sql"
QUESTIONS = "".join(f"question {n}\n" for n in range(14))


def _editor(tmp_path: Path, body: str, code: int = 0) -> str:
    script = tmp_path / f"editor_{code}.py"
    script.write_text(
        "import pathlib, sys\n"
        f"path = pathlib.Path(sys.argv[1])\n"
        f"assert 'db/schema.sql' in path.read_text()  # the editor gets the note the model wrote\n"
        f"path.write_text({body!r})\n"
        f"sys.exit({code})\n"
    )
    return f"{sys.executable} {script}"


def _env(server: FakeModelServer, editor: str) -> dict[str, str]:
    return {**chat_env(server), "HERMES_MODEL__CONTEXT_LENGTH": "8000", "EDITOR": editor, "VISUAL": ""}


def _chat(server: FakeModelServer, tmp_path: Path, env: dict[str, str], after: str):
    for n in range(15):
        server.reply(f"answer {n}: " + "details " * 60)
    server.lane("<conversation>", Reply(NOTE))
    return hermes_chat(input=QUESTIONS + after + "/exit\n", env=env, cwd=tmp_path)


def test_review_edit_in_editor_becomes_the_summary(fake_model_server: FakeModelServer, tmp_path: Path, hermes) -> None:
    edited = "## Active Task\nquestion 13, edited by the user\n## Critical Context\nthe schema lives in db/schema.sql\n"
    env = _env(fake_model_server, _editor(tmp_path, edited))
    result = _chat(fake_model_server, tmp_path, env, "/compress --review\ne\nquestion 14\n")
    assert result.returncode == 0, result.stderr
    assert "--- handoff note" in result.stderr and "db/schema.sql" in result.stderr
    assert "fidelity " in result.stderr  # the score is shown before the choice and in the notice
    assert "compressed; now" in result.stderr, result.stderr
    sessions = json.loads(hermes("sessions", "list", "--json").stdout)
    parent = next(s for s in sessions if s["end_reason"] == "compression")
    child = next(s for s in sessions if s["parent_session_id"] == parent["id"])
    record = json.loads(hermes("sessions", "handoff", child["id"], "--json").stdout)
    assert record["edited"] is True and record["handoff"] == edited.strip() and record["parent_session_id"] == parent["id"]
    shown = hermes("sessions", "show", child["id"], "--json")
    data = json.loads(shown.stdout)
    assert data["compaction"]["edited"] is True and 0 <= data["compaction"]["fidelity"] <= 1
    assert any("edited by the user" in json.dumps(m["content"]) for m in data["messages"])
    last = fake_model_server.requests[-1].body["messages"]
    assert any("edited by the user" in json.dumps(m) for m in last)  # the model continued from the edit
    plain = hermes("sessions", "show", child["id"]).stdout
    assert f"compacted from {parent['id']}: fidelity" in plain and "note edited" in plain
    text = hermes("sessions", "handoff", parent["id"])  # the ended session finds its compression too
    assert text.returncode == 0 and "edited in review" in text.stdout and "edited by the user" in text.stdout


def test_review_cancel_keeps_the_old_context(fake_model_server: FakeModelServer, tmp_path: Path, hermes) -> None:
    env = _env(fake_model_server, _editor(tmp_path, "unused"))
    result = _chat(fake_model_server, tmp_path, env, "/compress --review\nc\n")
    assert result.returncode == 0, result.stderr
    assert "not compressed: compression cancelled in review; the context stays as it was" in result.stderr
    (session,) = json.loads(hermes("sessions", "list", "--json").stdout)
    assert session["end_reason"] == "user_exit"
    unknown = hermes("sessions", "handoff", "nope")
    assert unknown.returncode == 1 and unknown.stderr.strip() == "error: no session 'nope'; see `hermes sessions list`"
    missing = hermes("sessions", "handoff", session["id"])
    assert missing.returncode == 1
    assert missing.stderr.strip().splitlines() == [
        f"error: session {session['id']} was not created or ended by a compression; see `hermes sessions show {session['id']}`"
    ]


@pytest.mark.parametrize("editor", ["exits 3", "missing"])
def test_a_failing_editor_is_reported_and_the_note_can_still_be_accepted(
    fake_model_server: FakeModelServer, tmp_path: Path, hermes, editor: str
) -> None:
    command = _editor(tmp_path, "broken", code=3) if editor == "exits 3" else str(tmp_path / "no-such-editor")
    env = _env(fake_model_server, command)
    result = _chat(fake_model_server, tmp_path, env, "/compress --review\ne\na\n")
    assert result.returncode == 0, result.stderr
    said = "exited with 3; the note is unchanged" if editor == "exits 3" else "could not start the editor"
    assert said in result.stderr and "compressed; now" in result.stderr
    assert "Traceback" not in result.stderr
    sessions = json.loads(hermes("sessions", "list", "--json").stdout)
    child = next(s for s in sessions if s["parent_session_id"])
    record = json.loads(hermes("sessions", "handoff", child["id"], "--json").stdout)
    assert record["edited"] is False and record["handoff"].startswith(NOTE)


def test_compress_below_the_threshold_says_why(fake_model_server: FakeModelServer, tmp_path: Path) -> None:
    fake_model_server.reply("hello")
    result = hermes_chat(input="hi\n/compress\n/exit\n", env=chat_env(fake_model_server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "not compressed: nothing to compress yet" in result.stderr
    assert "compacting context" not in result.stderr
