"""Phase 1: deduplication, one-line results, images, argument shrinking."""

from __future__ import annotations

import json

from hermes.context_engines._messages import IMAGE_PLACEHOLDER
from hermes.context_engines.compressor.pruning import describe_result, prune, shrink_arguments

from .transcripts import assistant, call, image_user, result, user

BIG = "line of output\n" * 40


def test_identical_outputs_keep_only_the_newest_copy() -> None:
    messages = [
        user("go"),
        assistant(None, call("a", "terminal", command="cat log")), result("a", BIG),
        assistant(None, call("b", "terminal", command="cat log")), result("b", BIG),
        assistant(None, call("c", "terminal", command="cat log")), result("c", BIG),
    ]  # fmt: skip
    out = prune(messages, 1, 5)  # the newest copy (c) is outside the pruned range
    assert out[2]["content"] == out[4]["content"] == "[terminal] same output as a later terminal call (duplicate removed)"
    assert out[6]["content"] == BIG
    assert messages[2]["content"] == BIG  # input untouched


def test_short_duplicates_are_not_deduplicated_but_summarised_lines_are_used_only_when_shorter() -> None:
    messages = [user("go"), assistant(None, call("a", "todo", items=[])), result("a", "ok", "todo")]
    assert prune(messages, 1, 3)[2]["content"] == "ok"


def test_one_informative_line_per_tool() -> None:
    assert describe_result("terminal", {"command": "pytest"}, "exit code: 0\n" + "\n".join(["x"] * 47)) == (
        "[terminal] ran 'pytest' -> exit 0, 47 lines"
    )
    assert describe_result("read_file", {"path": "config.py"}, "c" * 3_400) == (
        "[read_file] read config.py from line 1 (3,400 chars)"
    )
    assert describe_result("search_files", {"pattern": "TODO", "path": "src"}, "a\nb\nc") == (
        "[search_files] searched 'TODO' in src -> 3 lines"
    )
    assert describe_result("terminal", {"command": "sleep 99"}, "timed out after 5 s: killed").startswith(
        "[terminal] ran 'sleep 99' -> timed out after 5 s"
    )
    line = describe_result("my_tool", {"q": "x"}, "first\nsecond")
    assert line == '[my_tool] {"q": "x"} -> 2 lines, 12 chars: first'


def test_long_arguments_shrink_to_valid_json() -> None:
    raw = json.dumps({"path": "a.py", "content": "z" * 5_000, "lines": list(range(100))})
    shrunk = shrink_arguments(raw)
    parsed = json.loads(shrunk)
    assert len(shrunk) <= 500 and parsed["path"] == "a.py" and "4,880 more chars" in parsed["content"]
    assert json.loads(shrink_arguments("not json" * 100)) == {"_shrunk": ("not json" * 100)[:120] + "…"}
    many = json.dumps({f"key{i}": "v" * 100 for i in range(50)})
    assert "_shrunk_keys" in json.loads(shrink_arguments(many))
    assert shrink_arguments('{"a": 1}') == '{"a": 1}'


def test_old_images_are_stripped_and_tool_results_condensed_only_in_range() -> None:
    messages = [
        image_user("see this"),
        assistant(None, call("a", "read_file", path="x.py", blob="q" * 900)),
        result("a", "r" * 1_000, "read_file"),
        image_user("and this"),
        assistant("fine"),
    ]
    out = prune(messages, 1, 3)
    assert out[0] is messages[0] and out[3] is messages[3]  # head and tail untouched
    assert out[2]["content"] == "[read_file] read x.py from line 1 (1,000 chars)"
    assert len(out[1]["tool_calls"][0]["function"]["arguments"]) <= 500
    stripped = prune(messages, 0, 1)[0]["content"]
    assert stripped == [{"type": "text", "text": "see this"}, {"type": "text", "text": IMAGE_PLACEHOLDER}]
