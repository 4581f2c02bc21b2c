"""``build_agent(wrap_client=...)``: every model client the factory opens is wrapped, later ones too.

A caller that meters model calls (``hermes serve``'s per-key spend) must see
the auxiliary summary model and a sub-agent's ``delegation.model`` as well as
the main one; the requests go over HTTP to the fake server, so a client that
escaped the wrapper shows up as a request nobody recorded.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hermes.kernel import PluginHost
from hermes.kernel.agent import ModelRoute
from hermes.kernel.agent.factory import build_agent, open_route
from hermes.kernel.config import load_config
from hermes.kernel.home import HermesHome
from hermes.kernel.testing import FakeModelServer, Reply, ScriptedUsage, ToolCall


class Recording:
    """A client wrapper that notes the model of every call made through it."""

    def __init__(self, client: Any, seen: list[str]) -> None:
        self._client = client
        self._seen = seen

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def complete(self, request: Any, *, lease: Any = None) -> Any:
        self._seen.append(request.model)
        return self._client.complete(request, lease=lease)

    def stream(self, request: Any, *, lease: Any = None) -> Iterator[Any]:
        self._seen.append(request.model)
        yield from self._client.stream(request, lease=lease)


def _config(server: FakeModelServer, hermes_home: Path) -> tuple[HermesHome, Any]:
    home = HermesHome(hermes_home, "default").ensure()
    # A reply reporting 80,000 prompt tokens makes the next step compress (the window is 100,000).
    home.config_path.write_text(
        f"model:\n  provider: openai\n  name: main-model\n  base_url: {server.openai_base_url}\n  context_length: 100000\n"
        "  timeout: 5\nretries:\n  max_attempts: 1\nsessions:\n  auto_title: false\n"
        "compression:\n  threshold: 0.5\n  target_ratio: 0.01\n  protect_first_n: 0\n  tail_min_messages: 3\n  min_fidelity: 0\n"
        "auxiliary:\n  compression:\n    model: aux-model\ndelegation:\n  model: child-model\n",
        encoding="utf-8",
    )  # fmt: skip
    return home, load_config(home, environ={"OPENAI_API_KEY": "sk-test-key-0123456789abcdef"})


def test_the_main_the_summary_and_the_sub_agent_clients_are_all_wrapped(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-0123456789abcdef")
    (tmp_path / "notes.txt").write_text("the launch code is 4711\n")
    home, config = _config(fake_model_server, hermes_home)
    seen: list[str] = []
    agent = build_agent(host=PluginHost(load_plugins=""), config=config, home=home, toolsets=["files", "delegation"],
                        stream=True, cwd=tmp_path, wrap_client=lambda client: Recording(client, seen))  # fmt: skip
    server = fake_model_server
    server.tool_calls(("delegate_task", {"tasks": [{"goal": "look at the notes"}]}))
    server.reply("the child's report")
    server.reply("answer 0: " + "words " * 400)
    server.reply("answer 1: " + "words " * 400)
    server.enqueue(Reply(tool_calls=(ToolCall("read_file", {"path": "notes.txt"}),),
                         usage=ScriptedUsage(input_tokens=80_000, output_tokens=10)))  # fmt: skip
    server.reply("## Active Task\nquestion 2\n## Critical Context\nthe answers")  # the summary
    server.reply("answer 2")
    try:
        answers = [agent.run_conversation(text)["final_response"]
                   for text in ("delegate", "question 1 " + "detail " * 200, "question 2")]  # fmt: skip
    finally:
        agent.close()
    assert [answer[:8] for answer in answers] == ["answer 0", "answer 1", "answer 2"]
    sent = [request.body["model"] for request in server.requests]
    assert sent == ["main-model", "child-model", "main-model", "main-model", "main-model", "aux-model", "main-model"]
    assert seen == sent  # nothing reached the model without passing the wrapper


def test_routes_the_caller_gives_are_its_own_and_are_not_wrapped_again(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-0123456789abcdef")
    home, config = _config(fake_model_server, hermes_home)
    host = PluginHost(load_plugins="")
    seen: list[str] = []
    given = open_route(host, config, home, wrap_client=lambda client: Recording(client, seen))
    wrapped: list[Any] = []
    agent = build_agent(host=host, config=config, home=home, toolsets=["files"], stream=False, cwd=tmp_path,
                        routes=[given], wrap_client=lambda client: wrapped.append(client) or client)  # fmt: skip
    try:
        assert agent.primary.client is given.client and isinstance(given.client, Recording)
        fake_model_server.reply("hello")
        assert agent.run_conversation("hi")["final_response"] == "hello"
    finally:
        agent.close()
    assert seen == ["main-model"] and len(wrapped) == 1  # only the auxiliary summary client it opened itself
