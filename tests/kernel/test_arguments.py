"""Tool arguments decode within size and depth limits, and every reader of arguments goes through
the decoder: nothing a model writes raises past them (RecursionError once did, at ~2 KB of ``[``)."""

from __future__ import annotations

import json
import random

import pytest

from hermes.kernel import ArgumentsError, ToolContext, decode_arguments
from hermes.kernel.arguments import MAX_ARGUMENT_CHARS, MAX_ARGUMENT_DEPTH, nesting_depth
from hermes.kernel.cli._display import short_arguments
from hermes.kernel.testing import message_problems
from hermes.kernel.tool_registry import ToolCall, ToolRegistry, plan_batches

DEEP = "[" * 2_000 + "]" * 2_000


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def test_limits_and_what_the_errors_say() -> None:
    assert decode_arguments("") == {} and decode_arguments("  \n") == {}
    assert decode_arguments('{"a": [1, {"b": null}]}') == {"a": [1, {"b": None}]}
    at_limit = "[" * MAX_ARGUMENT_DEPTH + "]" * MAX_ARGUMENT_DEPTH
    assert _depth(decode_arguments(at_limit)) == MAX_ARGUMENT_DEPTH
    cases = {
        "[" + at_limit + "]": ("depth", f"nest {MAX_ARGUMENT_DEPTH + 1} levels deep, more than the {MAX_ARGUMENT_DEPTH} accepted"),
        DEEP: ("depth", f"nest 2,000 levels deep, more than the {MAX_ARGUMENT_DEPTH} accepted"),
        "[" * 100_000: ("depth", f"nest 100,000 levels deep, more than the {MAX_ARGUMENT_DEPTH} accepted"),
        '{"a": ': ("json", "are not valid JSON (Expecting value at position 6)"),
        " " * (MAX_ARGUMENT_CHARS + 1): ("size", f"are {MAX_ARGUMENT_CHARS + 1:,} characters long, more than the {MAX_ARGUMENT_CHARS:,} accepted"),
    }
    for text, (reason, message) in cases.items():
        with pytest.raises(ArgumentsError) as caught:
            decode_arguments(text)
        assert (caught.value.reason, str(caught.value)) == (reason, message)
        assert isinstance(caught.value, ValueError)  # old `except ValueError` sites hold too
    # Brackets inside strings, escaped quotes and backslashes do not count.
    text = json.dumps({"code": "[" * 500 + '\\"[{' * 100, "k\\": [[1]]})
    assert nesting_depth(text) == 3 and decode_arguments(text)["k\\"] == [[1]]


def test_nesting_depth_equals_the_decoded_depth() -> None:
    rng = random.Random(27)
    leaves = ["a\\", 'b"[{', '\\\\"', "}]", 1, None, "日本"]

    def value(depth: int) -> object:
        if depth == 0 or rng.random() < 0.2:
            return rng.choice(leaves)
        if rng.random() < 0.5:
            return [value(depth - 1) for _ in range(rng.randint(0, 3))]
        return {f"{i}\\\"[": value(depth - 1) for i in range(rng.randint(0, 3))}

    for _ in range(2_000):
        v = value(rng.randint(0, 9))
        assert nesting_depth(json.dumps(v, ensure_ascii=rng.random() < 0.5)) == _depth(v)


def test_every_reader_of_arguments_survives_deep_nesting(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from hermes.context_engines._messages import call_arguments
    from hermes.context_engines.compressor.pruning import _VALUE_KEEP, shrink_arguments
    from hermes.kernel import Tool
    from hermes.kernel.agent.wiring import _action
    from hermes.plugins.anthropic_provider import _assistant_blocks

    obj = {"type": "object", "properties": {}}
    reader = Tool(name="read", description="", parameters=obj, handler=lambda a, c: "read", toolset="t", read_only=True, path_params=("path",))
    registry = ToolRegistry([reader])
    deep, a, b = (ToolCall(n, "read", f'{{"path": {p}}}') for n, p in (("1", DEEP), ("2", '"a"'), ("3", '"b"')))
    # Batching cannot tell the deep call's paths, so it runs alone; dispatch answers it with an error.
    assert plan_batches([deep, a, b], registry, tmp_path) == [[deep], [a, b]]
    result = registry.dispatch(deep, ToolContext(cwd=tmp_path))
    assert result.is_error and result.content == (
        f"error: the arguments for read nest 2,001 levels deep, more than the {MAX_ARGUMENT_DEPTH} accepted; send a single JSON object"
    )
    assert short_arguments(DEEP) == "[" * 79 + "…"
    assert _action(deep) == ""
    message = {"role": "assistant", "content": None, "tool_calls": [{"id": "1", "type": "function", "function": {"name": "read", "arguments": DEEP}}]}
    assert call_arguments(message["tool_calls"][0]) == {}
    assert json.loads(shrink_arguments(DEEP)) == {"_shrunk": "[" * _VALUE_KEEP + "…"}
    assert _assistant_blocks(message)[-1]["input"] == {"_raw_arguments": DEEP}
    problems = message_problems([{"role": "user", "content": "x"}, message, {"role": "tool", "tool_call_id": "1", "content": "r"}])
    assert problems == ["message 1: tool call '1' has arguments that are not a JSON object"]
