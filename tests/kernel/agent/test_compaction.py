"""The kernel's part of a compression: skip reasons, records, on_post_compress, review, notices."""

from __future__ import annotations

from typing import Any

from hermes.context_engines.compressor import Compressor
from hermes.kernel import PluginHost, hookimpl
from hermes.kernel.agent import ModelRoute
from hermes.kernel.agent.delegation import Delegator, DelegationTask
from hermes.kernel.testing import Reply, ScriptedProvider

NOTE = "## Active Task\nwrite the docs\n## Critical Context\nsrc/parser.py"


class Listener:
    def __init__(self) -> None:
        self.pre: list[str] = []
        self.post: list[tuple[str, str, Any]] = []

    @hookimpl
    def on_pre_compress(self, session_id, messages):
        self.pre.append(session_id)

    @hookimpl
    def on_post_compress(self, session_id, new_session_id, fidelity):
        self.post.append((session_id, new_session_id, fidelity))


def history(turns: int = 30) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "fix src/parser.py"}]
    for i in range(turns):
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{i}", "type": "function", "function": {"name": "echo", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": f"c{i}", "tool_name": "echo", "content": f"line {i}\n" * 300},
            {"role": "assistant", "content": f"step {i}"},
            {"role": "user", "content": f"go on {i}"},
        ]  # fmt: skip
    return messages


def resumed(make_agent, store, engine: Compressor, host: PluginHost, events: list[Any] | None = None):
    sid = store.create_session(source="cli", model="m", system_prompt="prompt")
    store.append_messages(sid, history())
    agent = make_agent(ScriptedProvider(Reply("ok")), host=host, engine=engine, session_id=sid,
                       on_event=(events.append if events is not None else None))  # fmt: skip
    return sid, agent


def test_compress_below_the_threshold_says_why_and_fires_no_hook(make_agent) -> None:
    host = PluginHost(load_plugins="")
    listener = Listener()
    host.register(listener)
    agent = make_agent(ScriptedProvider(Reply("hello")), host=host, engine=Compressor(context_length=128_000, summarizer=None))
    agent.run_conversation("hi")
    assert agent.compress(manual=True) is False
    assert "nothing to compress yet" in agent.compress_note
    assert listener.pre == [] and listener.post == []


def test_a_compression_stores_its_fidelity_and_note_and_fires_on_post_compress(make_agent, store) -> None:
    host = PluginHost(load_plugins="")
    listener = Listener()
    host.register(listener)
    events: list[Any] = []
    engine = Compressor(context_length=8_000, summarizer=lambda s, p, m: NOTE)
    sid, agent = resumed(make_agent, store, engine, host, events)
    assert agent.compress(manual=True)
    new = agent.session_id
    record = store.compaction(new)
    assert record["parent_session_id"] == sid and record["engine"] == "compressor" and not record["edited"]
    assert record["handoff"].startswith(NOTE) and 0 <= record["fidelity"] <= 1
    assert record["details"]["summary_score"] <= record["fidelity"]
    assert store.compaction(sid) == record  # found from the ended session too
    assert listener.post == [(sid, new, record["details"])]
    notice = [e.text for e in events if e.kind == "status" and e.text.startswith("compacted context")]
    assert notice and "fidelity" in notice[0] and new in notice[0]


def test_a_failed_summary_is_told_in_one_line(make_agent, store) -> None:
    events: list[Any] = []
    engine = Compressor(context_length=8_000, summarizer=lambda s, p, m: "")
    _, agent = resumed(make_agent, store, engine, PluginHost(load_plugins=""), events)
    assert agent.compress(manual=True)
    texts = [e.text for e in events if e.kind == "status"]
    assert any(t.startswith("compacted context with a mechanical list, NOT a summary") for t in texts)
    assert any(t.startswith("warning: the summary failed: the summary model returned nothing") for t in texts)
    assert engine.get_status()["last_error"]


def test_review_can_edit_the_note_or_cancel(make_agent, store) -> None:
    engine = Compressor(context_length=8_000, summarizer=lambda s, p, m: NOTE)
    sid, agent = resumed(make_agent, store, engine, PluginHost(load_plugins=""))
    shown: list[tuple[str, Any]] = []

    def cancel(note: str, fidelity: Any) -> tuple[str, str | None]:
        shown.append((note, fidelity))
        return "cancel", None

    agent.review_compression = cancel
    assert agent.compress(manual=True, review=True) is False
    assert agent.session_id == sid and "cancelled in review" in agent.compress_note
    assert shown[0][0].startswith(NOTE) and "score" in shown[0][1]
    agent.review_compression = lambda note, fidelity: ("edit", "## Active Task\nmy own words")
    assert agent.compress(manual=True) is True  # compression.review is off: no review without --review
    assert store.compaction(agent.session_id)["edited"] is False
    agent.messages += history(30)[1:]
    assert agent.compress(manual=True, review=True) is True
    record = store.compaction(agent.session_id)
    assert record["edited"] is True and record["handoff"] == "## Active Task\nmy own words"
    assert any("my own words" in str(m["content"]) for m in store.get_messages(agent.session_id))


def test_compression_review_ask_reviews_every_compression(make_agent, store) -> None:
    from hermes.kernel.config import Config

    engine = Compressor(context_length=8_000, summarizer=lambda s, p, m: NOTE)
    sid = store.create_session(source="cli", model="m", system_prompt="prompt")
    store.append_messages(sid, history())
    agent = make_agent(ScriptedProvider(Reply("ok")), engine=engine, session_id=sid,
                       config=Config({"compression": {"review": "ask"}}))  # fmt: skip
    seen: list[str] = []
    agent.review_compression = lambda note, fidelity: (seen.append(note), ("accept", None))[1]
    assert agent.compress()  # an automatic compression is reviewed too
    assert len(seen) == 1 and seen[0].startswith(NOTE)


def test_sub_agents_get_an_engine_of_their_own(make_agent) -> None:
    engine = Compressor(context_length=8_000, summarizer=lambda s, p, m: NOTE)
    parent = make_agent(ScriptedProvider(Reply("ok")), engine=engine)
    delegator = Delegator(parent, routes_for_child=lambda: [ModelRoute(parent.primary.client, "child")], tools_for=lambda t: parent.tools)
    child = delegator._make_child(DelegationTask("long task"), lambda event: None)
    try:
        assert isinstance(child.engine, Compressor) and child.engine is not engine
        assert child.engine.summarizer is engine.summarizer and child.engine.context_length == 8_000
        child.engine.compression_count = 5
        assert engine.compression_count == 0  # its own state
    finally:
        child.close()


def test_a_resting_summary_model_is_reported_once_not_on_every_step(make_agent, store) -> None:
    from hermes.kernel import ProviderError

    calls: list[int] = []

    def failing(system: str, prompt: str, max_tokens: int) -> str:
        calls.append(max_tokens)
        raise ProviderError("timeout", "summary model down")

    events: list[Any] = []
    engine = Compressor(context_length=32_000, summarizer=failing)  # ~18,000 tokens: far from overflowing
    _, agent = resumed(make_agent, store, engine, PluginHost(load_plugins=""), events)
    assert agent.compress() is False  # the call fails: the messages stay
    for _ in range(5):  # the next steps of the turn
        assert agent.compress() is False
    assert len(calls) == 1
    resting = [e.text for e in events if "resting" in e.text]
    assert len(resting) == 1
    assert agent.compress(manual=True) is False and "resting" in agent.compress_note  # /compress says why
