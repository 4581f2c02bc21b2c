"""The streamed call as the agent loop consumes it: interrupts between deltas, the reported cost."""

from __future__ import annotations

from hermes.kernel.agent import AgentEvent
from hermes.kernel.testing import Reply, ScriptedProvider

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
