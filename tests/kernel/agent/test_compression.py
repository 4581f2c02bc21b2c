"""Compression in the loop: triggers, the on_pre_compress hook, and session rotation."""

from __future__ import annotations

from typing import Any

from hermes.kernel import ContextEngine, PluginHost, hookimpl
from hermes.kernel.testing import Fault, Reply, ScriptedProvider, ToolCall


class KeepLast(ContextEngine):
    """Compress to a summary line plus the newest user message when told to."""

    name = "keep-last"

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.trigger_after: int | None = None
        self.responses = 0
        self.seen_context: list[list[str]] = []
        self.focus: list[str | None] = []

    def update_from_response(self, usage: Any) -> None:
        self.responses += 1
        self.last_prompt_tokens = usage.prompt_tokens

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        return self.trigger_after is not None and self.responses >= self.trigger_after

    def compress(self, messages, current_tokens=None, focus_topic=None):
        self.compression_count += 1
        self.trigger_after = None
        self.seen_context.append(list(self.pre_compress_context))
        self.focus.append(focus_topic)
        newest_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        return [{"role": "user", "content": "[summary of earlier turns]"}, {"role": "assistant", "content": "noted"}, *messages[newest_user:]]


class Listener:
    def __init__(self) -> None:
        self.switches: list[tuple[str | None, str, str]] = []

    @hookimpl
    def on_pre_compress(self, session_id, messages):
        return f"keep: {len(messages)} messages in {session_id}"

    @hookimpl
    def on_session_switch(self, old_session_id, new_session_id, reason):
        self.switches.append((old_session_id, new_session_id, reason))


def test_reported_tokens_trigger_a_rotation(make_agent, store) -> None:
    host = PluginHost(load_plugins="")
    listener = Listener()
    host.register(listener)
    engine = KeepLast(context_length=100_000)
    provider = ScriptedProvider(
        Reply(tool_calls=[ToolCall("echo", {"text": "a"}, id="c1")]), Reply("first done"), Reply("second done")
    )
    agent = make_agent(provider, host=host, engine=engine)
    first = agent.run_conversation("step one")
    old_session = first["session_id"]
    engine.trigger_after = engine.responses  # compress before the next call
    agent.tool_context.state["carry_over"] = {"Your task list (carried over)": "- [>] 1. finish step two"}
    second = agent.run_conversation("step two")
    assert second["final_response"] == "second done"
    new_session = second["session_id"]
    assert new_session != old_session
    parent = store.get_session(old_session)
    child = store.get_session(new_session)
    assert (parent["end_reason"], child["parent_session_id"]) == ("compression", old_session)
    assert len(store.get_messages(old_session)) == 5  # the originals stay in the ended session
    assert [m["content"] for m in store.get_messages(new_session)][:3] == ["[summary of earlier turns]", "noted", "step two"]
    assert listener.switches == [(old_session, new_session, "compression")]
    assert engine.seen_context == [[f"keep: 5 messages in {old_session}"]]  # the hook reached the engine
    sent = provider.requests[-1].messages
    assert sent[0]["content"] == child["system_prompt"] and new_session in sent[0]["content"]
    assert "finish step two" in sent[0]["content"]  # carry-over notes reach the rebuilt prompt
    assert [m["role"] for m in sent[1:]] == ["user", "assistant", "user"] and sent[-1]["content"] == "step two"


def test_recall_stays_on_the_newest_user_message_after_rotation(make_agent) -> None:
    class Recall:
        @hookimpl
        def prefetch(self, session_id, query):
            return "recalled fact"

    host = PluginHost(load_plugins="")
    host.register(Recall())
    engine = KeepLast(context_length=100_000)
    engine.trigger_after = 1
    provider = ScriptedProvider(Reply(tool_calls=[ToolCall("echo", {"text": "a"}, id="c1")]), Reply("done"))
    result = make_agent(provider, host=host, engine=engine).run_conversation("the task")
    assert result["completed"]
    last_user = [m for m in provider.requests[-1].messages if m["role"] == "user"][-1]
    assert last_user["content"].startswith("<memory-context>") and last_user["content"].endswith("the task")


def test_overflow_steps_the_window_down_then_compresses(make_agent) -> None:
    engine = KeepLast(context_length=200_000)
    provider = ScriptedProvider(Fault("context_overflow", limit=32_000), Reply("fits"))
    result = make_agent(provider, engine=engine).run_conversation("big")
    assert result["final_response"] == "fits"
    assert engine.context_length == 32_000 and engine.compression_count == 1


def test_preflight_compresses_a_resumed_session_that_no_longer_fits(make_agent, store) -> None:
    sid = store.create_session(source="cli", model="m", system_prompt="prompt")
    store.append_messages(sid, [{"role": "user", "content": "x" * 40_000}, {"role": "assistant", "content": "y" * 40_000}])
    engine = KeepLast(context_length=8_000)  # ~20,000 tokens of history against a 6,800-token threshold
    provider = ScriptedProvider(Reply("answered after compressing"))
    agent = make_agent(provider, engine=engine, session_id=sid)
    result = agent.run_conversation("continue")
    assert result["completed"] and engine.compression_count == 1
    assert result["session_id"] != sid and store.get_session(sid)["end_reason"] == "compression"
    assert sum(len(str(m["content"])) for m in provider.requests[0].messages) < 10_000


def test_manual_compress_with_a_focus_topic(make_agent) -> None:
    engine = KeepLast(context_length=100_000)
    agent = make_agent(ScriptedProvider(Reply("one"), Reply("two")), engine=engine)
    agent.run_conversation("hello")
    before = agent.session_id
    assert agent.compress(focus_topic="the database schema") is True
    assert engine.focus == ["the database schema"] and agent.session_id != before


def test_an_engine_that_changes_nothing_does_not_rotate(make_agent) -> None:
    class Stubborn(KeepLast):
        def compress(self, messages, current_tokens=None, focus_topic=None):
            return list(messages)

    engine = Stubborn(context_length=100_000)
    agent = make_agent(ScriptedProvider(Reply("one")), engine=engine)
    agent.run_conversation("hello")
    before = agent.session_id
    assert agent.compress() is False and agent.session_id == before
