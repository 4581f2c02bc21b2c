"""ModelClient as its real caller drives it: the agent loop, the openai SDK, the fake server.

The loop reads the client's stream on a helper thread and stops at the response; when
the user interrupts, the helper abandons the stream without finishing it. Bookkeeping
that runs only once the stream is exhausted (the cooldown a success clears) is then
never done, which a unit test that drains the stream cannot see.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel import PluginHost, Tool
from hermes.kernel.agent import Agent, ModelRoute
from hermes.kernel.config import load_config
from hermes.kernel.credentials import AuthStore
from hermes.kernel.home import HermesHome
from hermes.kernel.providers.client import ModelClient, open_model_client
from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from hermes.kernel.tool_registry import ToolRegistry

KEY = "sk-only-aaaaaaaaaaaaaaaaaaaa"


def echo_tools(ran: list[str]) -> ToolRegistry:
    def echo(args: dict[str, Any], ctx: Any) -> str:
        ran.append(str(args.get("text", "")))
        return f"echo: {args.get('text', '')}"

    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    return ToolRegistry([Tool("echo", "Echo text back.", schema, echo, "test", read_only=True)])


def agent_over(server: FakeModelServer, hermes_home: Path, tmp_path: Path, sleep: Callable[[float], None],
               ran: list[str]) -> tuple[Agent, ModelClient]:
    """One key in auth.json; three attempts per key; streamed calls, as in ``hermes chat``."""
    home = HermesHome(hermes_home, "default").ensure()
    home.config_path.write_text(
        f"model:\n  provider: openai\n  base_url: {server.openai_base_url}\n  timeout: 5\n"
        "retries:\n  max_attempts: 3\n", encoding="utf-8")
    AuthStore(home.auth_path).add("openai", KEY, "only", 0)
    host = PluginHost(load_plugins="")
    client = open_model_client(host, load_config(home, environ={}), home, environ={}, sleep=sleep)
    store = SQLiteSessionStore(tmp_path / "state.db")
    agent = Agent(routes=[ModelRoute(client, "gpt-4o", lease=client.lease())], tools=echo_tools(ran), host=host,
                  store=store, results_dir=tmp_path / "results", cwd=tmp_path, stream=True)
    return agent, client


def cooldown(client: ModelClient) -> dict[str, Any]:
    assert client.pool is not None
    [(_, state)] = client.pool.statuses()
    return state


def test_a_key_that_answered_after_a_rate_limit_is_usable_for_the_next_turn(
        fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path) -> None:
    # Two 429s without a reset time: the second cools the only key for 60 s, the third attempt answers.
    fake_model_server.fault("rate_limit").fault("rate_limit").tool_calls(("echo", {"text": "ran"}))
    fake_model_server.reply("done").reply("next turn")
    waits: list[float] = []
    ran: list[str] = []
    agent, client = agent_over(fake_model_server, hermes_home, tmp_path, waits.append, ran)
    assert agent.run_conversation("hi")["final_response"] == "done"
    assert ran == ["ran"] and len(waits) == 2 and cooldown(client) == {}
    assert agent.run_conversation("again")["final_response"] == "next turn"
    assert [r.api_key for r in fake_model_server.requests] == [KEY] * 5
    agent.close()


def test_a_key_that_answered_an_interrupted_turn_is_usable_for_the_next_one(
        fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path) -> None:
    # The user presses Ctrl-C while the client waits out the backoff after the second 429 (which
    # cooled the only key for 60 s). The abandoned helper's retry then gets an answer (a tool call,
    # no text, so the answer is the stream's first item) and drops it without finishing the stream.
    fake_model_server.fault("rate_limit").fault("rate_limit").tool_calls(("echo", {"text": "never"}))
    fake_model_server.reply("after the interrupt")
    turn_over = threading.Event()
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 2:
            agent.interrupt()
            assert turn_over.wait(10)  # the retry runs once the interrupted turn has ended

    ran: list[str] = []
    agent, client = agent_over(fake_model_server, hermes_home, tmp_path, sleep, ran)
    first = agent.run_conversation("hi")
    assert first["interrupted"] and not first["completed"]
    assert cooldown(client)["reason"] == "rate_limit"  # still cooling: nothing has answered yet
    turn_over.set()
    for thread in [t for t in threading.enumerate() if t.name == "hermes-model-call"]:
        thread.join(10)
    assert len(fake_model_server.requests) == 3 and ran == []  # answered, and dropped unread
    assert cooldown(client) == {}  # the key answered: usable now, not in 60 s
    second = agent.run_conversation("go on")
    assert second["final_response"] == "after the interrupt", second.get("error")
    assert [r.api_key for r in fake_model_server.requests] == [KEY] * 4
    agent.close()
