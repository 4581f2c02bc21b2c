"""MCP sampling on the session's model, through a real ``hermes chat``: the turn's provider,
model and key (the fake model server's request log shows which wire was used), or
``mcp.sampling.model``; accounted to the session; advertised only when enabled."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.e2e.test_chat import chat_env, db_rows, hermes_chat
from tests.plugins.mcp.servers import write_config

pytestmark = pytest.mark.slow

NOISY = Path(__file__).parents[1] / "plugins" / "mcp" / "noisy_server.py"
SERVER = {"noisy": {"command": sys.executable, "args": [str(NOISY), "secrets"]}}


def tool_texts(server: FakeModelServer) -> list[str]:
    """Tool results the model received in the last request (either wire format)."""
    texts = []
    for message in server.requests[-1].messages:
        if message.get("role") == "tool":
            texts.append(message["content"])
        for block in message["content"] if isinstance(message.get("content"), list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block["content"]
                texts.append(content if isinstance(content, str) else content[0]["text"])
    return texts


def last_user_text(message: dict) -> str:
    content = message["content"]
    return content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)


def test_sampling_follows_provider_and_model_flags_with_only_that_providers_key(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path
) -> None:
    server = fake_model_server
    write_config(hermes_home, SERVER, sampling={"enabled": True})
    env = {k: v for k, v in chat_env(server, "anthropic").items()}
    env.update(HERMES_MODEL__PROVIDER="openai", HERMES_MODEL__NAME="config-model")  # overridden by the flags
    server.tool_calls(("mcp_noisy_think", {"question": "what is 2+2?"}), ("mcp_noisy_caps", {}))
    server.reply("four")  # the server's sampling request
    server.reply("the server heard four")
    result = hermes_chat("--provider", "anthropic", "--model", "claude-route", "-q", "ask", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "the server heard four\n"
    assert [r.api for r in server.requests] == ["anthropic"] * 3
    sampling = server.requests[1]
    assert sampling.body["model"] == "claude-route"
    assert sampling.api_key == env["ANTHROPIC_API_KEY"]
    assert last_user_text(sampling.messages[-1]) == "what is 2+2?"
    think, caps = tool_texts(server)
    assert think.startswith("model ") and think.endswith("said: four") and "claude-route" in think
    assert caps == "sampling advertised: yes"
    # Accounted to the session: three calls, the sampled one in the request log with its route.
    ((calls,),) = db_rows(hermes_home, "SELECT api_call_count FROM sessions")
    assert calls == 3
    logged = [json.loads(line) for line in (hermes_home / "logs" / "requests.jsonl").read_text().splitlines()]
    assert len(logged) == 3 and {(e["provider"], e["model"]) for e in logged} == {("anthropic", "claude-route")}
    assert all(e["session_id"] == logged[0]["session_id"] for e in logged)


def test_mcp_sampling_model_names_another_model_on_the_turns_route(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path
) -> None:
    server = fake_model_server
    write_config(hermes_home, SERVER, sampling={"enabled": True, "model": "small-model"})
    server.tool_calls(("mcp_noisy_think", {"question": "hi"}))
    server.reply("hello")
    server.reply("done")
    result = hermes_chat("-q", "ask", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert [r.api for r in server.requests] == ["openai"] * 3
    assert [r.body["model"] for r in server.requests] == ["test-model", "small-model", "test-model"]
    assert tool_texts(server)[0].endswith("said: hello")


def test_sampling_is_not_advertised_when_it_is_off(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path
) -> None:
    server = fake_model_server
    write_config(hermes_home, SERVER)
    server.tool_calls(("mcp_noisy_caps", {}))
    server.reply("done")
    result = hermes_chat("-q", "ask", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert tool_texts(server) == ["sampling advertised: no"]
