"""Parsing the two OpenAI request shapes; bad input is a 400 naming the field."""

from __future__ import annotations

import pytest

from hermes.plugins.serve.errors import RequestError
from hermes.plugins.serve.wire_chat import parse_chat
from hermes.plugins.serve.wire_responses import parse_response_id, parse_responses, response_id


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
        ({"input": [{"type": "function_call_output"}]}, "needs a call_id"),
        ({"input": [{"type": "function_call_output", "call_id": "c1", "output": "x"}, {"role": "user", "content": "y"}]},
         "'c1'"),
        ({"input": [{"type": "item_reference", "id": "x"}]}, "only message, function_call"),
        ({"input": "x", "stream": "false"}, "'stream' must be a boolean"),
        ({"input": "x", "tools": [{"type": "function", "name": "bad name"}]}, "'tools\\[0\\].name'"),
        ({"input": "x", "previous_response_id": "resp_1_a", "conversation": "c"}, "not both"),
        ({"input": "x", "conversation": "has space"}, "'conversation' must be an id"),
    ]:
        with pytest.raises(RequestError, match=message):
            parse_responses(body)


def test_response_ids_name_the_session_and_its_length() -> None:
    rid = response_id(12, "20261130_201800_abc123")
    assert parse_response_id(rid) == ("20261130_201800_abc123", 12, True)
    assert parse_response_id("resp_7_20261130_201800_abc123") == ("20261130_201800_abc123", 7, False)  # older servers' ids
    assert parse_response_id("resp_abc") is None and parse_response_id("chatcmpl-1") is None


_CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}
_TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}


def test_chat_tools_choice_and_format_pass_through() -> None:
    parsed = parse_chat({"messages": [{"role": "user", "content": "weather?"}], "tools": [_TOOL],
                         "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
                         "parallel_tool_calls": False,
                         "response_format": {"type": "json_schema", "json_schema": {"name": "w", "schema": {}}}})  # fmt: skip
    assert [t["function"]["name"] for t in parsed.tools] == ["get_weather"]
    assert parsed.options["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert parsed.options["parallel_tool_calls"] is False and parsed.options["response_format"]["type"] == "json_schema"


def test_chat_tool_results_continue_the_turn() -> None:
    parsed = parse_chat({"messages": [{"role": "user", "content": "weather?"},
                                      {"role": "assistant", "content": None, "tool_calls": [_CALL]},
                                      {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}], "tools": [_TOOL]})  # fmt: skip
    assert parsed.message is None and [m["role"] for m in parsed.history] == ["user", "assistant"]
    assert parsed.tool_results == [{"role": "tool", "content": "sunny", "tool_call_id": "call_1"}]


@pytest.mark.parametrize(("field", "value", "param"), [
    ("stream", "false", "stream"), ("stream", 1, "stream"), ("model", 5, "model"), ("temperature", "hot", "temperature"),
    ("max_tokens", 1.5, "max_tokens"), ("n", True, "n"), ("stream_options", [], "stream_options"),
    ("tools", {"a": 1}, "tools"), ("tool_choice", 3, "tool_choice"), ("parallel_tool_calls", "yes", "parallel_tool_calls"),
    ("response_format", {"type": "yaml"}, "response_format"), ("user", 7, "user"), ("metadata", "x", "metadata"),
])  # fmt: skip
def test_wrong_types_are_a_400_naming_the_field(field: str, value: object, param: str) -> None:
    with pytest.raises(RequestError) as error:
        parse_chat({"messages": [{"role": "user", "content": "hi"}], field: value})
    assert error.value.status == 400 and error.value.param == param


def test_a_tool_result_for_an_unknown_call_names_the_id() -> None:
    with pytest.raises(RequestError) as error:
        parse_chat({"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": None, "tool_calls": [_CALL]},
                                 {"role": "tool", "tool_call_id": "call_9", "content": "x"}]})  # fmt: skip
    assert "'call_9'" in str(error.value) and error.value.param == "messages[2].tool_call_id"
    with pytest.raises(RequestError, match="arguments"):
        bad = {**_CALL, "function": {"name": "f", "arguments": {"a": 1}}}
        parse_chat({"messages": [{"role": "assistant", "tool_calls": [bad]}, {"role": "user", "content": "q"}]})


def test_pages_and_terminal_text_survive_lone_surrogates_and_tool_only_messages() -> None:
    from hermes.kernel.cli._terminal import printable, printable_for
    from hermes.plugins.serve.pages import message_html

    html = message_html({"id": 1, "role": "assistant", "content": None, "tool_calls": [_CALL]})
    assert "null" not in html and "calls get_weather" in html and "Oslo" in html
    page = message_html({"id": 2, "role": "user", "content": "bad \ud800 text"})
    page.encode("utf-8")  # a lone surrogate would make the page unencodable (a 500)
    assert "\ufffd" in page
    import io

    assert printable("x\ud800\x00") == "x\ufffd^@"
    printable_for(io.StringIO(), "y\udfff").encode("utf-8")
