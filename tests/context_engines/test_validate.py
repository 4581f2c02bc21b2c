"""The strict message-list validator plugin authors get from hermes.kernel.testing."""

from __future__ import annotations

import pytest

from hermes.kernel.testing import InvalidMessages, message_problems, validate_messages

from .transcripts import assistant, call, image_user, result, user


def test_a_valid_tool_conversation_passes() -> None:
    validate_messages([
        {"role": "system", "content": "sys"},
        image_user("look"),
        assistant(None, call("a", "terminal", command="ls"), call("b", "read_file", path="x")),
        result("a", "exit code: 0\nx"),
        result("b", "text"),
        user("thanks"),  # a tool result then a user message: one user turn for Anthropic
        assistant("done"),
    ])  # fmt: skip


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([assistant("hi"), user("x")], "first message after the system prompt is 'assistant'"),
        ([user("a"), user("b")], "two user messages in a row"),
        ([user("a"), assistant("b"), assistant("c")], "two assistant messages in a row"),
        ([user("a"), {"role": "system", "content": "late"}], "system message after the conversation started"),
        ([user("  ")], "user message with empty content"),
        ([user("a"), assistant(None)], "assistant message with empty content and no tool calls"),
        ([user("a"), assistant(None, call("a", "t"))], "tool calls ['a'] have no result"),
        ([user("a"), assistant(None, call("a", "t")), user("b")], "have no result before this user message"),
        ([user("a"), assistant("b"), result("a", "x")], "answers no call"),
        ([user("a"), assistant(None, call("a", "t")), result("a", "x"), result("a", "y")], "a second result"),
        ([user("a"), assistant(None, call("a", "t")), result("a", "")], "tool result with empty content"),
        ([user("a"), {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "function": {"name": "t", "arguments": "{no"}}]},
          result("a", "x")], "arguments that are not a JSON object"),
        ([user("a"), assistant(None, call("a", "t"), call("a", "t")), result("a", "x")], "used twice"),
        ([{"role": "human", "content": "x"}], "unknown role"),
        ([{"role": "user", "content": [{"type": "text", "text": ""}]}], "empty text part"),
    ],
)
def test_each_rule_is_enforced(messages, problem) -> None:
    problems = message_problems(messages)
    assert any(problem in p for p in problems), problems
    with pytest.raises(InvalidMessages, match="invalid message list"):
        validate_messages(messages)


def test_system_messages_can_be_forbidden() -> None:
    assert message_problems([{"role": "system", "content": "s"}, user("a")], allow_system=False)
    assert message_problems([]) == ["no user message at all"]
