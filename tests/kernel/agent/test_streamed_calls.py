"""The streamed call as the agent loop consumes it: interrupts between deltas, the reported cost.

The last tests drive it over HTTP, as a chat does: the real ModelClient and
openai SDK against the in-process fake server (no CLI subprocess, so they
stay fast enough to run once per mutant).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes.kernel import PluginHost
from hermes.kernel.agent import Agent, AgentEvent, ModelRoute
from hermes.kernel.credentials import CredentialPool
from hermes.kernel.credentials.pool import CredentialLease
from hermes.kernel.home import HermesHome
from hermes.kernel.providers.client import ModelClient
from hermes.kernel.providers.retry import RetryPolicy
from hermes.kernel.testing import FakeModelServer, Reply, ScriptedProvider
from hermes.plugins.credential_strategies import FillFirst
from hermes.plugins.openai_provider import OpenAIProvider

from .conftest import echo_tools

LONG = " ".join(f"word{i}" for i in range(200))


def test_an_interrupt_between_deltas_stops_the_answer_at_once(make_agent, store) -> None:
    # Every delta is already queued, so only the check after each delta can stop the stream.
    seen: list[str] = []

    def on_event(event: AgentEvent) -> None:
        if event.kind == "text":
            seen.append(event.text)
            agent.interrupt()

    agent = make_agent(ScriptedProvider(Reply(LONG), Reply("next answer")), stream=True, on_event=on_event)
    result = agent.run_conversation("talk")
    assert result["interrupted"] and not result["completed"]
    assert seen == ["word0 "]
    stored = store.get_messages(result["session_id"])
    assert [(m["role"], m["content"], m["finish_reason"]) for m in stored][-1] == ("assistant", "word0 ", "interrupted")
    agent.on_event = None
    assert agent.run_conversation("go on")["final_response"] == "next answer"


def test_a_provider_reported_cost_of_zero_is_stored_as_actual(make_agent, store) -> None:
    agent = make_agent(ScriptedProvider(Reply("free", cost_usd=0.0)), stream=True)
    result = agent.run_conversation("hi")
    cost = store.usage(result["session_id"]).cost
    assert (cost.status, cost.amount_usd) == ("actual", 0.0)


# --- the same calls through the agent loop over HTTP: real ModelClient, real openai SDK, the fake server ---

KEY_A, KEY_B = "sk-first-aaaaaaaaaaaaaaaa", "sk-second-bbbbbbbbbbbbbbb"


def http_agent(server: FakeModelServer, tmp_path: Path, store, *, stream: bool = True, **kw: Any) -> Agent:
    """An agent whose route leases the pool's second key (fill_first alone would pick the first)."""
    pool = CredentialPool("openai", home=HermesHome(tmp_path / "home", "default"), strategy=FillFirst(),
                          config_keys=[KEY_A, KEY_B], environ={})  # fmt: skip
    client = ModelClient("openai", OpenAIProvider, pool, base_url=server.openai_base_url, timeout=10,
                         retry=RetryPolicy(max_attempts=1), sleep=lambda s: None)  # fmt: skip
    lease = CredentialLease(pool, pool.credentials()[1], "test-lease")
    return Agent(routes=[ModelRoute(client, "gpt-4o", lease)], tools=echo_tools(), host=PluginHost(load_plugins=""),
                 store=store, cwd=tmp_path, stream=stream, **kw)  # fmt: skip


@pytest.mark.parametrize("stream", [True, False])
def test_the_loop_asks_over_http_with_the_sessions_leased_key(fake_model_server: FakeModelServer, tmp_path: Path,
                                                              store, stream: bool) -> None:
    fake_model_server.reply("over the wire")
    result = http_agent(fake_model_server, tmp_path, store, stream=stream).run_conversation("hi")
    assert result["final_response"] == "over the wire" and result["completed"]
    (sent,) = fake_model_server.requests
    assert (sent.api_key, sent.stream) == (KEY_B, stream)


def test_an_interrupt_between_deltas_over_http_stops_the_answer_and_the_next_turn_works(
        fake_model_server: FakeModelServer, tmp_path: Path, store) -> None:  # fmt: skip
    fake_model_server.reply(LONG).reply("next answer")
    seen: list[str] = []

    def on_event(event: AgentEvent) -> None:
        if event.kind == "text":
            seen.append(event.text)
            agent.interrupt()

    agent = http_agent(fake_model_server, tmp_path, store, on_event=on_event)
    result = agent.run_conversation("talk")
    assert result["interrupted"] and result["partial"] and not result["completed"] and seen == ["word0 "]
    assert result["final_response"] == "word0 "
    stored = store.get_messages(result["session_id"])
    assert [(m["role"], m["content"], m["finish_reason"]) for m in stored][-1] == ("assistant", "word0 ", "interrupted")
    agent.on_event = None
    # The abort closed the connection under the abandoned reader; the client opens a new one.
    assert agent.run_conversation("go on")["final_response"] == "next answer"
    assert len(fake_model_server.requests) == 2


def test_a_stream_dropped_mid_answer_over_http_keeps_the_text_and_continues(fake_model_server: FakeModelServer,
                                                                            tmp_path: Path, store) -> None:
    fake_model_server.fault("drop_stream").reply("the rest.")
    statuses: list[str] = []
    agent = http_agent(fake_model_server, tmp_path, store,
                       on_event=lambda e: statuses.append(e.text) if e.kind == "status" else None)  # fmt: skip
    result = agent.run_conversation("write")
    cut = "This answer will be cut off in "  # what reached the user before the connection dropped
    assert (result["final_response"], result["partial"], result["completed"], result["api_calls"]) == (cut + "the rest.", True, True, 2)
    assert statuses == ["the stream broke mid-answer (server_error); the text so far is kept",
                        "the answer was cut off in transit; asking the model to continue"]  # fmt: skip
    stored = [(m["role"], m["content"], m["finish_reason"]) for m in store.get_messages(result["session_id"])]
    assert stored[1] == ("assistant", cut, "incomplete") and stored[-1] == ("assistant", "the rest.", "stop")
    assert fake_model_server.requests[1].messages[2] == {"role": "assistant", "content": cut}
