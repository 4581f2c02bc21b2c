"""Background reviews: quiet forks with restricted tools, due by turns or by tool steps."""

from __future__ import annotations

from typing import Any

from hermes.kernel import PluginHost, Tool, hookimpl
from hermes.kernel.agent.review import ReviewSchedule, after_tool_iterations, every_n_turns, run_review
from hermes.kernel.testing import Reply, ScriptedProvider, ToolCall
from hermes.kernel.tool_registry import ToolRegistry

NOTES: list[str] = []


def note_tools() -> ToolRegistry:
    def note(args: dict[str, Any], ctx) -> str:
        if args.get("action") == "add":
            NOTES.append(args["text"])
            return "saved"
        return "\n".join(NOTES)

    schema = {"type": "object", "properties": {"action": {"type": "string"}, "text": {"type": "string"}}}
    return ToolRegistry([Tool("note", "Keep notes.", schema, note, "notes")])


def schedule(due) -> ReviewSchedule:
    return ReviewSchedule(
        name="notes",
        prompt="Review the conversation; save anything worth remembering with the note tool.",
        tools=note_tools,
        due=due,
        is_change=lambda call: '"add"' in call.arguments,
    )


def test_review_sees_the_conversation_uses_only_its_tools_and_stays_quiet(make_agent, store) -> None:
    NOTES.clear()
    events: list[Any] = []

    class Loud:
        @hookimpl
        def on_turn_start(self, session_id, turn, message):
            events.append(("turn", message))

    host = PluginHost(load_plugins="")
    host.register(Loud())
    provider = ScriptedProvider(
        Reply("Your name is noted."),
        Reply(tool_calls=[ToolCall("note", {"action": "add", "text": "user is Ada"}, id="n1")]),
        Reply("Saved one note."),
    )
    agent = make_agent(provider, host=host, on_event=events.append)
    agent.run_conversation("I am Ada")
    review = schedule(every_n_turns(1))
    changes = run_review(agent, review)
    assert changes == ["note"] and NOTES == ["user is Ada"]
    review_request = provider.requests[1]
    assert [t["function"]["name"] for t in review_request.tools] == ["note"]
    assert review_request.messages[0]["content"] == agent.system_prompt  # same frozen prefix
    assert [m["content"] for m in review_request.messages if m["role"] == "user"] == ["I am Ada", review.prompt]
    assert [e for e in events if isinstance(e, tuple)] == [("turn", "I am Ada")]  # no hooks from the review
    assert [m["role"] for m in store.get_messages(agent.session_id)] == ["user", "assistant"]  # nothing persisted


def test_due_every_n_turns_runs_in_the_background_and_reports_one_line(make_agent) -> None:
    NOTES.clear()
    statuses: list[str] = []
    provider = ScriptedProvider(
        Reply("one"),
        Reply("two"),
        Reply(tool_calls=[ToolCall("note", {"action": "add", "text": "likes tea"}, id="n1")]),
        Reply("done reviewing"),
    )
    agent = make_agent(provider, on_event=lambda e: statuses.append(e.text) if e.kind == "status" else None)
    review = schedule(every_n_turns(2))
    agent.reviews.append(review)
    agent.run_conversation("first")
    assert review.threads == []
    agent.run_conversation("second")
    review.wait(10)
    assert NOTES == ["likes tea"]
    assert statuses == ["notes review: 1 change(s) (note)"]


def test_after_tool_iterations_counts_steps_and_resets_on_maintenance(make_agent) -> None:
    due = after_tool_iterations(3, frozenset({"note"}))
    steps = [Reply(tool_calls=[ToolCall("echo", {"text": str(i)}, id=f"e{i}")]) for i in range(2)]
    agent = make_agent(ScriptedProvider(*steps, Reply("a"), *steps, Reply("b")))
    agent.run_conversation("x")
    assert due(agent, {}) is False  # two tool steps
    agent.run_conversation("y")
    assert due(agent, {}) is True  # four
    assert due(agent, {}) is False  # counter reset
    agent.messages.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": "m", "type": "function", "function": {"name": "note", "arguments": "{}"}}]})  # fmt: skip
    assert due(agent, {}) is False
