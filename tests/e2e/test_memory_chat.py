"""A third-party memory provider in real chats: recall fenced in the request, turns synced,
pre-compress context in the summary request, session switches on compression."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from hermes.kernel.testing import FakeModelServer, Reply, ScriptedUsage, ToolCall
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.helpers import overlay_venv

ROOT = Path(__file__).resolve().parents[2]
DB_NAME = "memory-sqlite.db"  # where examples/hermes-memory-sqlite keeps its turns, in HERMES_HOME
pytestmark = pytest.mark.slow


def test_sqlite_memory_provider_across_two_chats(fake_model_server: FakeModelServer, tmp_path: Path, hermes_home: Path) -> None:
    python = overlay_venv(tmp_path / "venv")
    env = {k: v for k, v in os.environ.items() if k not in ("HERMES_LOAD_PLUGINS", "PYTHONPATH")}
    env.update({
        "OPENAI_API_KEY": "sk-test-0123456789abcdef", "OPENAI_BASE_URL": fake_model_server.openai_base_url,
        "HERMES_MODEL__NAME": "test-model",
    })  # fmt: skip

    def hermes(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(python), "-m", "hermes.kernel", *args], capture_output=True, text=True,
                              env=env, cwd=cwd, timeout=300)  # fmt: skip

    assert hermes("plugin", "install", "examples/hermes-memory-sqlite").returncode == 0
    assert hermes("config", "set", "memory.provider", "sqlite").returncode == 0
    assert hermes("config", "set", "model.context_length", "8000").returncode == 0
    work = tmp_path / "work"
    work.mkdir()

    server = fake_model_server
    server.reply("Backups go to s3://acme-backups every night.")
    first = hermes("chat", "-q", "where do the backups go?", cwd=work)
    assert first.returncode == 0, first.stderr

    for n in range(4):
        (work / f"part{n}.txt").write_text("".join(f"part {n} line {i}: lorem ipsum dolor sit amet\n" for i in range(150)))
    for n, tokens in enumerate([1_500, 3_500, 5_500, 7_200]):
        server.enqueue(Reply(tool_calls=(ToolCall("read_file", {"path": f"part{n}.txt"}),), usage=ScriptedUsage(input_tokens=tokens)))
    server.reply("The backups bucket is s3://acme-backups; the parts are lorem ipsum.", usage=ScriptedUsage(input_tokens=2_000))
    server.lane("<conversation>", Reply("## Active Task\nremind me about the backups, then read the parts"))
    second = hermes("chat", "-q", "remind me about the backups, then read the parts", cwd=work)
    assert second.returncode == 0, second.stderr

    second_turn = next(r for r in server.requests if "remind me about the backups" in json.dumps(r.body))
    user = [m for m in second_turn.body["messages"] if m["role"] == "user"][-1]["content"]
    assert user.startswith("<memory-context>") and "s3://acme-backups" in user
    assert user.endswith("remind me about the backups, then read the parts")
    summary = next(r for r in server.requests if "<conversation>" in json.dumps(r.body))
    assert "kept by hermes-memory-sqlite" in json.dumps(summary.body)  # on_pre_compress reached the summary

    with sqlite3.connect(hermes_home / DB_NAME) as conn:
        turns = conn.execute("SELECT user_content FROM turns ORDER BY id").fetchall()
        switches = conn.execute("SELECT detail FROM events WHERE kind = 'session_switch'").fetchall()
    assert [t[0] for t in turns] == ["where do the backups go?", "remind me about the backups, then read the parts"]
    assert any("(compression)" in s[0] for s in switches)
    stored = json.dumps([r for r in sqlite3.connect(hermes_home / "state.db").execute("SELECT content FROM messages")])
    assert "memory-context" not in stored  # recall is never persisted
