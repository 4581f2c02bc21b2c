"""The summarizer callback as the compressor calls it from the CLI: auxiliary model first, main once.

tests/kernel/agent/test_summarizer.py checks ``make_summarizer`` on its own;
here ``hermes sessions compress`` builds it from config, the engine calls it,
and the requests go over HTTP through the real SDK to the fake server.
"""

from __future__ import annotations

import json

from hermes.kernel.testing import Fault, FakeModelServer, Reply
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401

from .test_chat import chat_env, hermes_chat


def test_a_missing_auxiliary_model_falls_back_to_the_main_model_once(fake_model_server: FakeModelServer, tmp_path, hermes) -> None:
    server = fake_model_server
    for n in range(6):
        server.reply(f"answer {n}: " + "details " * 300)
    env = chat_env(server)
    assert hermes_chat(input="".join(f"question {n}\n" for n in range(6)) + "/exit\n", env=env, cwd=tmp_path).returncode == 0
    (session,) = json.loads(hermes("sessions", "list", "--json").stdout)
    server.lane("<conversation>", Fault("model_not_found"), Reply("## Active Task\nquestion 5\n## Critical Context\nthe answers"))
    small = {**env, "HERMES_MODEL__CONTEXT_LENGTH": "8000", "HERMES_COMPRESSION__TAIL_MIN_MESSAGES": "3",
             "HERMES_AUXILIARY__COMPRESSION__MODEL": "no-such-summary-model"}  # fmt: skip
    result = hermes("sessions", "compress", session["id"], env=small)
    assert result.returncode == 0, result.stderr
    summary_requests = [r.body for r in server.requests if "<conversation>" in json.dumps(r.body)]
    assert [b["model"] for b in summary_requests] == ["no-such-summary-model", "test-model"]
    child = next(s for s in json.loads(hermes("sessions", "list", "--json").stdout) if s["parent_session_id"] == session["id"])
    shown = json.loads(hermes("sessions", "show", child["id"], "--json").stdout)
    assert any("the answers" in json.dumps(m) for m in shown["messages"])
    assert "sk-test-key" not in result.stderr + result.stdout
