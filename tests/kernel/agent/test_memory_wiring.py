"""How the loop drives a memory manager: snapshot, sync after completed turns, refresh, shutdown."""

from __future__ import annotations

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
