"""One writer per session; results that exist are never called skipped (issue 27, item 6)."""

from __future__ import annotations

from typing import Any

from hermes.kernel.agent import AgentEvent
from hermes.kernel.agent.history import NO_RESULT, NO_RESULT_MARKER, repair_history
from hermes.kernel.agent.resuming import SessionWriter
from hermes.kernel.testing import Reply, ScriptedProvider


def _call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "echo", "arguments": "{}"}}


def _result(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "tool_name": "echo", "content": f"ran {call_id}"}


def test_a_second_writer_branches_with_one_warning_and_neither_history_interleaves(make_agent, store) -> None:
    events: list[AgentEvent] = []
    first = make_agent(ScriptedProvider(Reply("one"), Reply("three")), writer=SessionWriter(store))
    first.run_conversation("first")
    sid = first.session_id
    second = make_agent(ScriptedProvider(Reply("two")), session_id=sid, writer=SessionWriter(store), on_event=events.append)
    warnings = [e.text for e in events if e.kind == "status"]
    assert second.session_id != sid and len(warnings) == 1
    assert warnings[0].startswith(f"warning: session {sid} is open for writing in another hermes process (pid ")
    assert warnings[0].endswith(f"continuing in a new branch {second.session_id}, so the two chats never interleave in one session")
    second.run_conversation("second")
    first.run_conversation("third")
    assert [m["content"] for m in store.get_messages(sid)] == ["first", "one", "third", "three"]
    assert [m["content"] for m in store.get_messages(second.session_id)] == ["first", "one", "second", "two"]
    assert store.lineage(second.session_id)["ancestors"][0]["id"] == sid
    first.close()
    second.close()
    third = make_agent(ScriptedProvider(), session_id=sid, writer=SessionWriter(store))
    assert third.session_id == sid  # nobody writes it any more: resumed, not branched
    third.close()


def test_the_lease_follows_the_agent_to_its_next_session(make_agent, store) -> None:
    agent = make_agent(ScriptedProvider(Reply("a"), Reply("b")), writer=SessionWriter(store))
    agent.run_conversation("one")
    old = agent.session_id
    new = agent.new_session("new")
    assert not store.claim_writer(new).granted  # the agent holds its new session
    claim = store.claim_writer(old)
    assert claim.granted  # and let go of the one it left
    claim.release()
    agent.close()
    released = store.claim_writer(new)
    assert released.granted
    released.release()


def test_agents_without_a_writer_never_claim(make_agent, store) -> None:
    """hermes serve, sub-agents and reviews: turns are serialised by their owner, not by leases."""
    a = make_agent(ScriptedProvider(Reply("a")))
    a.run_conversation("one")
    b = make_agent(ScriptedProvider(), session_id=a.session_id)
    assert b.session_id == a.session_id
    claim = store.claim_writer(a.session_id)
    assert claim.granted
    claim.release()


def test_a_result_stored_after_other_messages_is_found_not_skipped() -> None:
    """What two interleaving writers left in one session: each call's result, further on."""
    history = [
        {"role": "user", "content": "from A"},
        {"role": "user", "content": "from B"},
        {"role": "assistant", "content": None, "tool_calls": [_call("a1")]},
        {"role": "assistant", "content": None, "tool_calls": [_call("b1")]},
        _result("a1"),
        _result("b1"),
        {"role": "assistant", "content": "done"},
    ]
    repaired = repair_history(history)
    assert [(m["role"], m.get("tool_call_id"), m["content"]) for m in repaired] == [
        ("user", None, "from A"), ("user", None, "from B"),
        ("assistant", None, None), ("tool", "a1", "ran a1"),
        ("assistant", None, None), ("tool", "b1", "ran b1"),
        ("assistant", None, "done"),
    ]  # fmt: skip
    assert not any(m.get("marker") for m in repaired)


def test_only_a_call_without_any_stored_result_gets_one_and_it_never_says_it_did_not_run() -> None:
    history = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [_call("x"), _call("y")]},
        {"role": "user", "content": "meanwhile"},
        _result("y"),
        {"role": "assistant", "content": "ok"},
    ]
    repaired = repair_history(history)
    assert [(m["role"], m.get("tool_call_id")) for m in repaired] == [
        ("user", None), ("assistant", None), ("tool", "y"), ("tool", "x"), ("user", None), ("assistant", None),
    ]  # fmt: skip
    missing = repaired[3]
    assert missing["content"] == NO_RESULT and missing["marker"] == NO_RESULT_MARKER
    assert "skipped" not in NO_RESULT and "may have run" in NO_RESULT


def test_a_reused_call_id_takes_the_latest_call_before_its_result() -> None:
    """Some providers number calls per reply (call_0 every time): a result answers the nearest call."""
    history = [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": None, "tool_calls": [_call("call_0")]},  # crashed before its result
        {"role": "user", "content": "two"},
        {"role": "assistant", "content": None, "tool_calls": [_call("call_0")]},
        _result("call_0"),
    ]
    repaired = repair_history(history)
    assert [(m["role"], m.get("marker")) for m in repaired] == [
        ("user", None), ("assistant", None), ("tool", NO_RESULT_MARKER), ("user", None), ("assistant", None), ("tool", None),
    ]  # fmt: skip

