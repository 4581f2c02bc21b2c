"""Parsing the two OpenAI request shapes; bad input is a 400 naming the field."""

from __future__ import annotations

import pytest

from hermes.kernel.serve.errors import RequestError
from hermes.kernel.serve.wire_chat import parse_chat
from hermes.kernel.serve.wire_responses import parse_response_id, parse_responses, response_id


def test_chat_history_system_and_last_user_message() -> None:
    parsed = parse_chat({"model": "hermes", "messages": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "part one"}, {"type": "text", "text": "part two"}]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c", "content": "out"},
        {"role": "user", "content": "now?"},
    ], "stream": True, "stream_options": {"include_usage": True}})  # fmt: skip
    assert parsed.system == "be brief" and parsed.message == "now?" and parsed.stream and parsed.include_usage
    assert [m["role"] for m in parsed.history] == ["user", "assistant", "tool"]
    assert parsed.history[0]["content"] == "part one\npart two" and parsed.history[2]["tool_call_id"] == "c"


@pytest.mark.parametrize(("body", "message"), [
    ([], "the request body must be a JSON object"),
    ({"messages": []}, "'messages' must be a non-empty list"),
    ({"messages": [{"role": "wizard", "content": "x"}]}, "messages[0] needs a role"),
    ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]}, "only text content"),
    ({"messages": [{"role": "tool", "content": "x"}, {"role": "user", "content": "y"}]}, "without tool_call_id"),
    ({"messages": [{"role": "user", "content": "  "}]}, "the last message must be a user message"),
])  # fmt: skip
def test_bad_chat_requests(body: object, message: str) -> None:
    with pytest.raises(RequestError) as error:
        parse_chat(body)
    assert message in str(error.value) and error.value.status == 400


def test_responses_input_forms_and_conflicts() -> None:
    parsed = parse_responses({"input": "hi", "conversation": {"id": "c-1"}, "instructions": "be kind"})
    assert (parsed.message, parsed.conversation, parsed.instructions) == ("hi", "c-1", "be kind")
    listed = parse_responses({"input": [{"role": "developer", "content": "rules"}, {"type": "message", "role": "user",
                              "content": [{"type": "input_text", "text": "q"}]}]})  # fmt: skip
    assert listed.message == "q" and listed.instructions == "rules"
    for body, message in [
        ({"input": 5}, "'input' must be a string"),
        ({"input": [{"type": "function_call_output"}]}, "only message items"),
        ({"input": "x", "previous_response_id": "resp_1_a", "conversation": "c"}, "not both"),
        ({"input": "x", "conversation": "has space"}, "'conversation' must be an id"),
    ]:
        with pytest.raises(RequestError, match=message):
            parse_responses(body)


def test_response_ids_name_the_session_and_its_length() -> None:
    rid = response_id(12, "20261130_201800_abc123")
    assert parse_response_id(rid) == ("20261130_201800_abc123", 12)
    assert parse_response_id("resp_abc") is None and parse_response_id("chatcmpl-1") is None
