"""Phase 1 exactly: every one-line description with its limits and defaults, argument shrinking at
its edges, and deduplication by position (mutation testing, issue 20)."""

from __future__ import annotations

import json

import pytest

from hermes.context_engines._messages import IMAGE_PLACEHOLDER
from hermes.context_engines.compressor.pruning import describe_result, prune, shrink_arguments

from .transcripts import assistant, call, image_user, result, user


@pytest.mark.parametrize(
    ("name", "args", "output", "line"),
    [
        ("terminal", {"command": "c"}, "exit code: 0", "[terminal] ran 'c' -> exit 0, 0 lines"),
        ("terminal", {"command": "c"}, "exit code: 137: killed\na\nb\nc", "[terminal] ran 'c' -> exit 137: killed, 3 lines"),
        ("terminal", {"command": "a  b\n c"}, "\n\n  done  \nmore\nrest", "[terminal] ran 'a b c' -> done"),
        ("terminal", {"command": "x" * 60}, "ok", f"[terminal] ran '{'x' * 60}' -> ok"),
        ("terminal", {"command": "x" * 61}, "y" * 61, f"[terminal] ran '{'x' * 59}…' -> {'y' * 59}…"),
        ("terminal", {}, "z" * 60, f"[terminal] ran '' -> {'z' * 60}"),
        ("read_file", {}, "abc", "[read_file] read ? from line 1 (3 chars)"),
        ("read_file", {"path": "a.py", "offset": 40}, "c" * 1_234, "[read_file] read a.py from line 40 (1,234 chars)"),
        ("write_file", {"path": "a.py", "content": "x" * 1_500}, "wrote it\nmore", "[write_file] wrote a.py (1,500 chars) -> wrote it"),
        ("write_file", {}, "w" * 61, f"[write_file] wrote ? (0 chars) -> {'w' * 59}…"),
        ("patch", {"path": "b.py"}, "p" * 80, f"[patch] edited b.py -> {'p' * 80}"),
        ("patch", {}, "p" * 81, f"[patch] edited ? -> {'p' * 79}…"),
        ("search_files", {"pattern": "q" * 40, "path": ""}, "", f"[search_files] searched '{'q' * 40}' in . -> 0 lines"),
        ("search_files", {"pattern": "q" * 41}, "a\nb", f"[search_files] searched '{'q' * 39}…' in . -> 2 lines"),
        ("search_files", {}, "a", "[search_files] searched '' in . -> 1 lines"),
        ("todo", {}, "first\nsecond\nthird", "[todo] no arguments -> 3 lines, 18 chars: first"),
        ("todo", {"b": "é", "a": 1}, "x" * 1_000, f'[todo] {{"a": 1, "b": "é"}} -> 1 lines, 1,000 chars: {"x" * 59}…'),
        ("todo", {"k": "v" * 60}, "f" * 60, f'[todo] {{"k": "{"v" * 52}… -> 1 lines, 60 chars: {"f" * 60}'),
    ],
)
def test_one_line_per_tool_exactly(name: str, args: dict, output: str, line: str) -> None:
    assert describe_result(name, args, output) == line


def test_shrinking_arguments_at_the_edges() -> None:
    exactly = json.dumps({"a": "x" * 491})
    assert len(exactly) == 500 and shrink_arguments(exactly) == exactly
    assert json.loads(shrink_arguments(json.dumps({"a": "x" * 160, "b": "y" * 400}))) == {
        "a": "x" * 160, "b": "y" * 120 + "… [280 more chars]",
    }  # fmt: skip
    assert json.loads(shrink_arguments(json.dumps({"a": "x" * 161, "b": "y" * 400})))["a"] == "x" * 120 + "… [41 more chars]"
    ten = json.loads(shrink_arguments(json.dumps({"items": list(range(10)), "pad": "p" * 500})))
    assert ten["items"] == list(range(10))
    eleven = json.loads(shrink_arguments(json.dumps({"items": list(range(11)), "pad": "p" * 500})))
    assert eleven["items"] == [*range(10), "… [1 more items]"]
    nested = json.loads(shrink_arguments(json.dumps({"outer": {"inner": "n" * 600}})))
    assert nested == {"outer": {"inner": "n" * 120 + "… [480 more chars]"}}
    assert shrink_arguments("é" * 600) == '{"_shrunk": "' + "é" * 120 + '…"}'
    listed = json.dumps(["a"] * 200)
    assert shrink_arguments(listed) == json.dumps({"_shrunk": listed[:120] + "…"}, ensure_ascii=False)
    assert shrink_arguments(json.dumps({"ä": "é" * 600})) == '{"ä": "' + "é" * 120 + '… [480 more chars]"}'
    many = {f"{'k' * 42}{i:02}": "v" * 30 for i in range(25)}
    assert json.loads(shrink_arguments(json.dumps(many))) == {"_shrunk_keys": ["k" * 40] * 20}
    umlauts = {f"ä{i:02}": "v" * 30 for i in range(25)}
    assert shrink_arguments(json.dumps(umlauts)) == '{"_shrunk_keys": [' + ", ".join(f'"ä{i:02}"' for i in range(20)) + "]}"


def test_a_shrunk_object_of_exactly_500_characters_keeps_its_values() -> None:
    base = {"long": "z" * 1_000, "a": "p" * 150, "c": "r" * 100}
    kept = {"long": "z" * 120 + "… [880 more chars]", "a": "p" * 150, "c": "r" * 100}
    pad = 500 - len(json.dumps({**kept, "b": ""}, ensure_ascii=False))
    assert 0 < pad <= 160
    shrunk = shrink_arguments(json.dumps({**base, "b": "q" * pad}))
    assert len(shrunk) == 500 and json.loads(shrunk) == {**kept, "b": "q" * pad}
    over = shrink_arguments(json.dumps({**base, "b": "q" * (pad + 1)}))
    assert json.loads(over) == {"_shrunk_keys": ["long", "a", "c", "b"]}


def test_prune_shrinks_only_long_calls_and_keeps_calls_without_a_function() -> None:
    edge = assistant(None, call("e", "t", a="x" * 491))
    assert len(edge["tool_calls"][0]["function"]["arguments"]) == 500
    messages = [user("go"), edge, result("e", "ok")]
    assert prune(messages, 1, 3)[1] is edge  # 500 characters are not shrunk
    bare = {"id": "n", "type": "function"}
    long = call("l", "t", a="x" * 600)
    message = {"role": "assistant", "content": "text", "tool_calls": [bare, long]}
    out = prune([user("go"), message, result("l", "ok"), result("n", "ok")], 1, 4)[1]
    assert out["content"] == "text" and out["tool_calls"][0] == {**bare, "function": {"arguments": "{}"}}
    shrunk = json.dumps({"a": "x" * 120 + "… [480 more chars]"}, ensure_ascii=False)
    assert out["tool_calls"][1]["function"] == {"name": "t", "arguments": shrunk}
    assert out["tool_calls"][1]["id"] == "l" and message["tool_calls"][1] is long  # the input is untouched


def test_prune_names_results_by_their_call_or_their_tool_name() -> None:
    big = "line\n" * 100
    messages = [
        user("go"),
        assistant(None, call("a", "read_file", path="x.py", offset=3)), result("a", "r" * 500, "wrong_name"),
        {"role": "tool", "tool_call_id": "gone", "tool_name": "grep", "content": big},
        {"role": "tool", "tool_call_id": "gone2", "content": "other\n" * 100},
        user("keep me"),
    ]  # fmt: skip
    out = prune(messages, 1, 6, keep={5})
    assert out[2]["content"] == "[read_file] read x.py from line 3 (500 chars)"
    assert out[3]["content"] == "[grep] no arguments -> 101 lines, 500 chars: line"
    assert out[4]["content"] == "[tool] no arguments -> 101 lines, 600 chars: other"
    assert out[5] is messages[5] and out[0] is messages[0]


def test_a_line_as_long_as_the_output_leaves_the_output() -> None:
    output = "exit code: 0\n" + "a" * 24
    assert len(describe_result("terminal", {"command": "c"}, output)) == len(output) == 37
    messages = [user("go"), assistant(None, call("a", "terminal", command="c")), result("a", output)]
    assert prune(messages, 1, 3)[2] is messages[2]
    longer = [*messages[:2], result("a", output + "a")]
    assert prune(longer, 1, 3)[2]["content"] == "[terminal] ran 'c' -> exit 0, 1 lines"


def _batch(call_id: str, text: str) -> list[dict]:
    return [assistant(None, call(call_id, "terminal", command="cat log")), result(call_id, text)]


def test_duplicates_by_position() -> None:
    same = "s" * 200  # exactly the minimum length
    messages = [user("go"), *_batch("a", same), user("between"), *_batch("b", same), *_batch("c", same)]
    out = prune(messages, 1, 8)
    removed = "[terminal] same output as a later terminal call (duplicate removed)"
    assert [out[i]["content"] for i in (2, 5, 7)] == [removed, removed, "[terminal] ran 'cat log' -> " + "s" * 59 + "…"]
    # The oldest copy sits exactly at the start of the range and is still found.
    assert prune(messages, 2, 8)[2]["content"] == removed
    short = "t" * 199
    few = [user("go"), *_batch("a", short), *_batch("b", short)]
    assert prune(few, 1, 5)[2]["content"] == "[terminal] ran 'cat log' -> " + "t" * 59 + "…"  # too short to deduplicate
    short_last = [user("go"), *_batch("a", same), *_batch("b", same), *_batch("c", "ok")]
    assert prune(short_last, 1, 3)[2]["content"] == removed  # a short result after them ends nothing
    odd = "\ud800" + "o" * 300  # a lone surrogate (from a broken decode) still hashes
    assert prune([user("go"), *_batch("a", odd), *_batch("b", odd)], 1, 3)[2]["content"] == removed
    newest_last = [user("go"), *_batch("a", same), *_batch("b", same)]
    assert prune(newest_last, 1, 3)[2]["content"] == removed  # the newest copy, outside the range, counts


def test_images_are_stripped_only_in_range_and_not_from_kept_messages() -> None:
    messages = [image_user("a"), image_user("b"), image_user("c")]
    out = prune(messages, 0, 2, keep={1})
    assert out[0]["content"] == [{"type": "text", "text": "a"}, {"type": "text", "text": IMAGE_PLACEHOLDER}]
    assert out[1] is messages[1] and out[2] is messages[2]
