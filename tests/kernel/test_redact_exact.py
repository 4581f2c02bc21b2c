"""Redaction's edges: mask lengths, where a secret section or mapping starts, images, config, the log filter."""

from __future__ import annotations

import logging

from hermes.kernel.redact import (
    RedactingFilter,
    mask_secret,
    mask_secrets,
    redact_data,
    redact_tool_results,
    tool_output_redaction,
)
from hermes.kernel.tool_registry import ToolResult

SECRET = "ghp_" + "Ab3dEf6hIj9lMn2pQr5tUv8xYz1bCd4f" + "abcd"


def test_a_mask_shows_the_ends_only_from_sixteen_characters() -> None:
    assert mask_secret("0123456789abcdef") == "0123...cdef"
    assert mask_secret("0123456789abcde") == "****"


def test_env_and_credentials_mask_everything_below_them_only_where_they_start() -> None:
    assert mask_secrets({"mcp": {"env": {"X": "plain"}}}) == {"mcp": {"env": {"X": "****"}}}
    assert mask_secrets({"mcp": {"s": {"env": {"X": "plain"}}}}) == {"mcp": {"s": {"env": {"X": "****"}}}}
    assert mask_secrets({"credentials": {"keys": ["plainvalue"]}}) == {"credentials": {"keys": ["****"]}}
    assert mask_secrets({"mcp": {"env": {"ARGS": ["plain"]}}}) == {"mcp": {"env": {"ARGS": ["****"]}}}  # a list inherits it
    # A nested "credentials" is not the top-level section: its plain values stay.
    assert mask_secrets({"x": {"credentials": {"a": "plain"}}}) == {"x": {"credentials": {"a": "plain"}}}
    assert mask_secrets({"x": [{"credentials": {"a": "plain"}}]}) == {"x": [{"credentials": {"a": "plain"}}]}
    assert mask_secrets({"credentials": {"port": 5, "on": True}}) == {"credentials": {"port": 5, "on": True}}


def test_only_real_image_data_skips_the_scan() -> None:
    assert SECRET not in redact_data("x;base64, " + SECRET)
    assert SECRET not in redact_data("data:" + "x" * 88 + ";base64," + SECRET)  # the marker ends past 100
    assert redact_data("data:image/png;base64," + SECRET) == "data:image/png;base64," + SECRET
    assert SECRET not in str(redact_data({"type": "text", "data": SECRET}))


def test_tool_output_redaction_is_on_unless_turned_off() -> None:
    assert tool_output_redaction(object()) is True and tool_output_redaction({}) is True
    assert tool_output_redaction({"security.redact_tool_output": False}) is False
    results = [ToolResult("a", "t", ["not text"]), ToolResult("b", "t", "key " + SECRET)]
    redact_tool_results(results)
    assert results[0].content == ["not text"] and SECRET not in results[1].content


def test_the_log_filter_keeps_bad_records_and_redacts_stack_info() -> None:
    bad = logging.LogRecord("x", logging.INFO, __file__, 1, "%s %s", ("one",), None)
    assert RedactingFilter().filter(bad) is True
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "hi", None, None, sinfo="Stack: " + SECRET)
    assert RedactingFilter().filter(record) is True
    assert SECRET not in record.stack_info and record.stack_info.startswith("Stack: ")
