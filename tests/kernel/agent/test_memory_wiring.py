"""How the loop drives a memory manager: snapshot, sync after completed turns, refresh, shutdown."""

from __future__ import annotations

import time
from typing import Any

from hermes.kernel.testing import Reply, ScriptedProvider, ToolCall

from .test_compression import KeepLast


class FakeMemory:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.block = "## Memory\nuser likes tea"

    def start(self, session_id: str) -> None:
        self.calls.append(("start", session_id))

    def system_prompt_block(self) -> str:
        return self.block

    def refresh_snapshot(self) -> None:
        self.calls.append(("refresh",))
        self.block = "## Memory\nuser likes coffee now"

    def sync_turn(self, user: str, assistant: str, session_id: str, messages: Any = None) -> None:
        self.calls.append(("sync", user, assistant))
        self.synced_messages = [dict(m) for m in messages]

    def queue_prefetch(self, query: str, session_id: str) -> None:
        self.calls.append(("prefetch", query))

    def shutdown(self) -> None:
        self.calls.append(("shutdown",))


def test_memory_snapshot_sync_refresh_and_shutdown(make_agent) -> None:
    memory = FakeMemory()
    engine = KeepLast(context_length=100_000)
    provider = ScriptedProvider(Reply("hi Ada"), Reply("second"))
    agent = make_agent(provider, memory=memory, engine=engine, prompt_extras=lambda: {"skills_index": "## Skills\n- git-commit"})
    agent.run_conversation("I am Ada")
    assert memory.calls[0] == ("start", agent.session_id)
    assert memory.calls[1:] == [("sync", "I am Ada", "hi Ada"), ("prefetch", "I am Ada")]
    # sync_turn receives the turn's messages: the conversation as of the end of that turn.
    assert [(m["role"], m["content"]) for m in memory.synced_messages] == [("user", "I am Ada"), ("assistant", "hi Ada")]
    first_prompt = provider.requests[0].messages[0]["content"]
    assert "user likes tea" in first_prompt and "git-commit" in first_prompt
    engine.trigger_after = engine.responses
    agent.run_conversation("again")
    assert ("refresh",) in memory.calls
    assert "user likes coffee now" in provider.requests[-1].messages[0]["content"]  # rebuilt at the boundary
    agent.close()
    assert memory.calls[-1] == ("shutdown",)


def test_interrupted_turns_are_not_synced(make_agent) -> None:
    memory = FakeMemory()
    agent = None

    def halt(args, ctx):
        agent.interrupt()
        return "stopped"

    from hermes.kernel import Tool
    from hermes.kernel.tool_registry import ToolRegistry

    provider = ScriptedProvider(Reply(tool_calls=[ToolCall("halt", {}, id="h")]), Reply("never"))
    agent = make_agent(provider, memory=memory, tools=ToolRegistry([Tool("halt", "h", {"type": "object"}, halt, "t")]))
    assert agent.run_conversation("go")["interrupted"]
    assert [c[0] for c in memory.calls] == ["start"]


def test_a_real_memory_manager_through_the_loop(make_agent, tmp_path) -> None:
    from hermes.kernel import Config, HermesHome, MemoryManager, MemoryProvider, PluginHost

    log: list[tuple[Any, ...]] = []

    class Notes(MemoryProvider):
        name = "notes"

        def is_available(self) -> bool:
            return True

        def initialize(self, session_id: str, **kwargs: Any) -> None:
            log.append(("initialize", session_id))

        def system_prompt_block(self) -> str:
            return "## Notes\nuser drinks tea"

        def prefetch(self, query: str, session_id: str) -> str:
            return f"recalled for {query!r}"

        def sync_turn(self, user_content: str, assistant_content: str, session_id: str, messages: Any = None) -> None:
            time.sleep(0.2)  # slower than the loop: the session end must still wait for it
            log.append(("sync_turn", user_content, assistant_content, session_id, [(m["role"], m["content"]) for m in messages]))

        def on_session_end(self, session_id: str, messages: list[dict[str, Any]], reason: str) -> None:
            log.append(("on_session_end", session_id, reason))

        def shutdown(self) -> None:
            log.append(("shutdown",))

    host = PluginHost(load_plugins="")
    memory = MemoryManager(host, HermesHome(root=tmp_path / "home", profile="default"), Config({}), providers=[Notes()])
    provider = ScriptedProvider(Reply("hi Ada"), Reply("noted"))
    agent = make_agent(provider, memory=memory, host=host)
    agent.run_conversation("I am Ada")
    first = agent.session_id
    wire = provider.requests[0].messages
    assert "## Notes\nuser drinks tea" in wire[0]["content"]
    assert "recalled for 'I am Ada'" in wire[-1]["content"] and wire[-1]["content"].endswith("I am Ada")
    second = agent.new_session("new")
    agent.run_conversation("tea?")
    agent.end_session("user_exit")
    agent.close()
    assert log == [
        ("initialize", first),
        ("sync_turn", "I am Ada", "hi Ada", first, [("user", "I am Ada"), ("assistant", "hi Ada")]),
        ("on_session_end", first, "new"),
        ("sync_turn", "tea?", "noted", second, [("user", "tea?"), ("assistant", "noted")]),
        ("on_session_end", second, "user_exit"),
        ("shutdown",),
    ]
