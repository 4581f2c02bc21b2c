"""A context engine's own tools reach the model, and ``on_session_start`` is called, in a real ``hermes chat``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401

ENGINE = """
import json
from pathlib import Path

from hermes.kernel import ContextEngine


class RecallEngine(ContextEngine):
    name = "recall-engine"

    def update_from_response(self, usage):
        self.last_prompt_tokens = usage.prompt_tokens

    def should_compress(self, prompt_tokens=None):
        return False

    def compress(self, messages, current_tokens=None, focus_topic=None):
        return messages

    def on_session_start(self, session_id, **kwargs):
        with open(Path(kwargs["hermes_home"]) / "engine-starts.jsonl", "a") as fh:
            fh.write(json.dumps({"session_id": session_id, "resumed": kwargs["resumed"]}) + "\\n")

    def get_tool_schemas(self):
        return [{"name": "engine_recall", "description": "Look up compressed turns.",
                 "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}]

    def handle_tool_call(self, name, args):
        return f"{name}: nothing compressed matches {args['query']!r}"
"""


def test_engine_tools_are_offered_and_called_and_on_session_start_fires(
    fake_model_server: FakeModelServer, fake_dists, hermes_home: Path, tmp_path: Path
) -> None:
    fake_dists.add("recall-engine", {"hermes.context_engines": {"recall-engine": "recall_engine:RecallEngine"}},
                   {"recall_engine": ENGINE})  # fmt: skip
    env = {
        **os.environ,
        "OPENAI_API_KEY": "sk-test-key-0123456789abcdef",
        "OPENAI_BASE_URL": fake_model_server.openai_base_url,
        "HERMES_MODEL__PROVIDER": "openai",
        "HERMES_MODEL__NAME": "test-model",
        "HERMES_CONTEXT__ENGINE": "recall-engine",
        "HERMES_LOAD_PLUGINS": "recall-engine",
    }
    work = tmp_path / "project"
    work.mkdir()

    def chat(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "hermes.kernel", "chat", *args], capture_output=True, text=True,
                              env=env, cwd=work, timeout=120)  # fmt: skip

    fake_model_server.tool_calls(("engine_recall", {"query": "the old plan"}))
    fake_model_server.reply("Nothing was compressed yet.")
    first = chat("-q", "what did we compress?")
    assert first.returncode == 0, first.stderr
    assert "engine_recall" in {t["function"]["name"] for t in fake_model_server.requests[0].body["tools"]}
    (result,) = [m for m in fake_model_server.requests[1].body["messages"] if m["role"] == "tool"]
    assert result["content"] == "engine_recall: nothing compressed matches 'the old plan'"

    starts = [json.loads(line) for line in (hermes_home / "engine-starts.jsonl").read_text().splitlines()]
    (session,) = {s["session_id"] for s in starts}
    assert starts == [{"session_id": session, "resumed": False}]
    fake_model_server.reply("Still nothing.")
    assert chat("-q", "and now?", "--resume", session).returncode == 0
    starts = [json.loads(line) for line in (hermes_home / "engine-starts.jsonl").read_text().splitlines()]
    assert starts[-1] == {"session_id": session, "resumed": True}
