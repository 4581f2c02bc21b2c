"""The pool as its real caller uses it: an agent built from config, its turns streamed over the real SDK to
the fake server. The unit tests drain ModelClient's generator; the agent stops at the response, and a
cooldown cleared only at the generator's end once stayed behind (issue 20)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from hermes.kernel import PluginHost
from hermes.kernel.agent.factory import build_agent
from hermes.kernel.config import load_config
from hermes.kernel.credentials import AuthStore, key_id
from hermes.kernel.home import HermesHome
from hermes.kernel.testing import FakeModelServer

A, B = "sk-first-aaaaaaaaaaaaaaaa", "sk-second-bbbbbbbbbbbbbbb"


def agent_for(server: FakeModelServer, hermes_home: Path, keys: list[str], extra: str = ""):
    home = HermesHome(hermes_home, "default").ensure()
    home.config_path.write_text(
        f"model:\n  provider: openai\n  name: gpt-4o\n  base_url: {server.openai_base_url}\n  timeout: 5\n"
        f"retries:\n  max_attempts: 3\n  base_delay: 0.01\nsessions:\n  auto_title: false\n{extra}", encoding="utf-8")
    store = AuthStore(home.auth_path)
    for index, key in enumerate(keys, start=1):
        store.add("openai", key, f"k{index}", 0)
    agent = build_agent(host=PluginHost(load_plugins=""), config=load_config(home, environ={}), home=home,
                        toolsets=["todo"], stream=True, cwd=hermes_home)
    return agent, home.auth_path


def auth(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_a_rate_limit_the_retry_recovers_leaves_no_cooldown_after_a_streamed_turn(
        fake_model_server: FakeModelServer, hermes_home: Path) -> None:
    agent, path = agent_for(fake_model_server, hermes_home, [A])
    fake_model_server.fault("rate_limit", retry_after=0.05).reply("after the limit")
    try:
        result = agent.run_conversation("hi")
        assert result["final_response"] == "after the limit"
        assert [r.api_key for r in fake_model_server.requests] == [A, A]
        data = auth(path)
        assert data["state"] == {}  # the success cleared the cooldown although the stream was not drained
        assert list(data["leases"]) == [key_id(A)]  # the session holds its key while it lasts
        assert agent.routes[0].client.pool.statuses()[0][1] == {}
    finally:
        agent.close()
    assert auth(path)["leases"] == {}  # closing the session released it


def test_a_rotated_session_stays_on_the_working_key(fake_model_server: FakeModelServer, hermes_home: Path) -> None:
    agent, path = agent_for(fake_model_server, hermes_home, [A, B])
    fake_model_server.fault("rate_limit", retry_after=30).reply("from the second key").reply("still the second")
    try:
        assert agent.run_conversation("hi")["final_response"] == "from the second key"
        started = time.time()
        assert agent.run_conversation("again")["final_response"] == "still the second"
        assert [r.api_key for r in fake_model_server.requests] == [A, B, B]
        state = auth(path)["state"]
        assert list(state) == [key_id(A)]  # A cools down as long as the provider said, B is clean
        assert state[key_id(A)]["reason"] == "rate_limit" and state[key_id(A)]["status"] == 429
        assert started - 1 < state[key_id(A)]["exhausted_until"] - 30 <= started
    finally:
        agent.close()


def test_a_long_session_renews_its_lease_between_calls(fake_model_server: FakeModelServer, hermes_home: Path) -> None:
    agent, path = agent_for(fake_model_server, hermes_home, [A], "credential_pool:\n  lease_ttl: 1\n")
    fake_model_server.reply("one").reply("two")
    try:
        agent.run_conversation("first")
        ((lease_id, first),) = auth(path)["leases"][key_id(A)].items()
        time.sleep(0.55)  # past half the lease time
        agent.run_conversation("second")
        ((same_id, renewed),) = auth(path)["leases"][key_id(A)].items()
        assert same_id == lease_id and renewed >= first + 0.55
    finally:
        agent.close()
