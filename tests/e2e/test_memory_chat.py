"""Memory in a real chat: the sqlite example installed for real, selected by config, recalled next session.

``hermes plugin install examples/hermes-memory-sqlite`` into a virtual
environment of the test's own, ``hermes config set memory.provider sqlite``,
then ``hermes chat`` against the fake server: the real CLI, the real SDK over
HTTP, state.db and the provider's own SQLite file on disk.
"""

from __future__ import annotations

import json
import functools
import sqlite3
from pathlib import Path

import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture
def venv_hermes(venv_hermes, tmp_path: Path):
    """Chats run in a project folder of their own, not in the repository."""
    work = tmp_path / "project"
    work.mkdir()
    return functools.partial(venv_hermes, cwd=work)


def user_messages(body: dict) -> list[str]:
    return [m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
            for m in body["messages"] if m["role"] == "user"]  # fmt: skip


def test_the_selected_provider_changes_what_the_next_session_recalls(
    venv_hermes, fake_model_server: FakeModelServer, hermes_home: Path
) -> None:
    assert venv_hermes("plugin", "install", str(ROOT / "examples" / "hermes-memory-sqlite")).returncode == 0
    assert venv_hermes("config", "set", "memory.provider", "sqlite").returncode == 0
    server = fake_model_server
    env = {"OPENAI_API_KEY": "sk-test-key-0123456789abcdef", "OPENAI_BASE_URL": server.openai_base_url,
           "HERMES_MODEL__PROVIDER": "openai", "HERMES_MODEL__NAME": "test-model", "HERMES_MODEL__TIMEOUT": "10"}  # fmt: skip

    # Session 1: the model saves a user fact with the memory tool; sync_turn stores the turn.
    server.tool_calls(("memory", {"action": "add", "target": "user", "content": "Works on the staging cluster"}))
    server.reply("Staging listens on port 8443.")
    first = venv_hermes("chat", "-q", "Which port does staging use?", extra=env)
    assert first.returncode == 0, first.stderr
    assert "Works on the staging cluster" in (hermes_home / "memories" / "USER.md").read_text()
    db = hermes_home / "memory-sqlite.db"
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT user_content, assistant_content FROM turns").fetchall() == [
            ("Which port does staging use?", "Staging listens on port 8443.")
        ]

    # Session 2: the snapshot is in the system prompt; the recall is fenced in the user message only.
    server.reply("It is 8443, as before.")
    second = venv_hermes("chat", "-q", "remind me: what port for staging?", extra=env)
    assert second.returncode == 0, second.stderr
    body = server.requests[-1].body
    assert "Works on the staging cluster" in body["messages"][0]["content"]
    (asked,) = user_messages(body)
    assert asked.startswith("<memory-context>\n[Recalled background") and "Staging listens on port 8443." in asked
    assert asked.endswith("</memory-context>\n\nremind me: what port for staging?")
    with sqlite3.connect(hermes_home / "state.db") as conn:
        stored = [c for (c,) in conn.execute("SELECT content FROM messages WHERE role = 'user' ORDER BY id")]
    assert stored == ["Which port does staging use?", "remind me: what port for staging?"]  # never persisted

    # Session 3 in the REPL, with a small window and tail so that /compress has a middle to summarise:
    # on_pre_compress text reaches the summary request, and the rotation fires on_session_switch.
    turns = 8
    for i in range(turns + 2):  # spare replies: a summary request takes one too
        server.reply(f"answer {i} " + "detail " * 60)
    asked = "".join(f"step {i} of the deployment plan\n" for i in range(turns))
    third = venv_hermes("chat", "--repl", input=f"{asked}/compress\n/exit\n", extra={**env, "HERMES_MODEL__CONTEXT_LENGTH": "8000", "HERMES_COMPRESSION__TARGET_RATIO": "0.05", "HERMES_COMPRESSION__TAIL_MIN_MESSAGES": "3"})
    assert third.returncode == 0, third.stderr
    assert "compacted context" in third.stderr, third.stderr
    summaries = [json.dumps(r.body) for r in server.requests if "<plugin-context>" in json.dumps(r.body)]
    assert summaries and "kept by hermes-memory-sqlite" in summaries[-1] and "step 0 of the deployment plan" in summaries[-1]
    with sqlite3.connect(db) as conn:
        switches = [d for (d,) in conn.execute("SELECT detail FROM events WHERE kind = 'session_switch'")]
        writes = [d for (d,) in conn.execute("SELECT detail FROM events WHERE kind = 'memory_write'")]
        synced = conn.execute("SELECT count(*) FROM turns").fetchone()[0]
    assert switches and all(s.endswith("(compression)") for s in switches)
    assert writes == ["add user: Works on the staging cluster"]
    assert synced == 2 + turns

    # `hermes memory off`: no snapshot, no recall, no memory tools; the files stay.
    assert venv_hermes("memory", "off").returncode == 0
    server.reply("No memory here.")
    off = venv_hermes("chat", "-q", "what port for staging?", extra=env)
    assert off.returncode == 0, off.stderr
    body = server.requests[-1].body
    names = {t["function"]["name"] for t in body.get("tools", [])}
    assert not names & {"memory", "past_turns_search"} and "Works on the staging cluster" not in json.dumps(body)
    assert user_messages(body) == ["what port for staging?"]
    assert "Works on the staging cluster" in (hermes_home / "memories" / "USER.md").read_text()
