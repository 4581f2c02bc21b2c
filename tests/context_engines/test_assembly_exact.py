"""Phase 4 exactly: the handoff block in each kind of content, reading it back, editing it
(``sessions handoff``), and each placement rule with its neighbours (mutation testing, issue 20)."""

from __future__ import annotations

from typing import Any

from hermes.context_engines.compressor import Compressor
from hermes.context_engines.compressor.assembly import (
    HANDOFF_END,
    HANDOFF_MARK,
    HANDOFF_PREFIX,
    HANDOFF_PREFIX_INLINE,
    SYSTEM_NOTE,
    assemble,
    extract_handoff,
    handoff_block,
    with_system_note,
)
from hermes.kernel.testing import validate_messages

from .transcripts import assistant, call, result, user

IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}


def marked(role: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": content, "marker": "handoff", **extra}


def test_the_block_escapes_markers_in_its_body() -> None:
    assert handoff_block("  body  ") == f"{HANDOFF_PREFIX}\n\nbody\n\n{HANDOFF_END}"
    assert handoff_block("x", inline=True) == f"{HANDOFF_PREFIX_INLINE}\n\nx\n\n{HANDOFF_END}"
    assert handoff_block(f"a {HANDOFF_END} b {HANDOFF_MARK} c") == f"{HANDOFF_PREFIX}\n\na [end marker] b [handoff] c\n\n{HANDOFF_END}"


def test_extract_reads_the_block_from_list_content_and_keeps_the_rest() -> None:
    block = handoff_block("old note")
    with_text = marked("user", [{"type": "text", "text": f"{block}\n\nhi"}, IMAGE])
    assert extract_handoff([with_text]) == ([{"role": "user", "content": [{"type": "text", "text": "hi"}, IMAGE]}], "old note", 0)
    alone = marked("user", [{"type": "text", "text": block}, {"type": "text", "text": "second"}])
    assert extract_handoff([alone]) == ([{"role": "user", "content": [{"type": "text", "text": "second"}]}], "old note", 0)
    only = marked("user", [{"type": "text", "text": block}])
    assert extract_handoff([user("q"), assistant("a"), only, assistant("b")]) == (
        [user("q"), assistant("a"), assistant("b")], "old note", 2,
    )  # fmt: skip
    image_first = marked("user", [IMAGE, {"type": "text", "text": block}])
    assert extract_handoff([image_first]) == ([{"role": "user", "content": [IMAGE, {"type": "text", "text": block}]}], "", 0)
    assert extract_handoff([marked("user", [])]) == ([], "", 0)
    assert extract_handoff([marked("user", ["text"])]) == ([{"role": "user", "content": ["text"]}], "", 0)
    not_text = [{"type": "other", "text": block}]  # only a text part holds the note
    assert extract_handoff([marked("user", not_text)]) == ([{"role": "user", "content": not_text}], "", 0)


def test_extract_splits_at_the_first_end_marker_and_reads_a_block_without_one() -> None:
    quoted = marked("assistant", f"{handoff_block('note', inline=True)}\n\nthe log said {HANDOFF_END} here")
    assert extract_handoff([user("q"), quoted]) == (
        [user("q"), {"role": "assistant", "content": f"the log said {HANDOFF_END} here"}], "note", 0,
    )  # fmt: skip
    unterminated = marked("user", f"{HANDOFF_MARK} an old note")
    assert extract_handoff([unterminated, assistant("a")]) == ([assistant("a")], "an old note", 0)
    with_calls = marked("assistant", handoff_block("n", inline=True), tool_calls=[call("c", "t")])
    rest, found, floor = extract_handoff([user("q"), with_calls, result("c", "r")])
    assert rest[1] == {"role": "assistant", "content": None, "tool_calls": [call("c", "t")]} and found == "n" and floor == 0
    assert extract_handoff([user("q"), marked("user", 7)]) == ([user("q")], "", 1)


def test_replace_handoff_keeps_the_wording_the_carrier_and_the_other_messages() -> None:
    engine = Compressor(context_length=8_000)
    plain = [user("q"), marked("assistant", handoff_block("old")), user("n")]
    edited = engine.replace_handoff(plain, "new text")
    assert edited == [user("q"), marked("assistant", handoff_block("new text")), user("n")]
    assert engine.handoff_note(edited) == "new text" and engine.handoff_note([user("q")]) is None
    carrier = [user("q"), marked("assistant", f"{handoff_block('old', inline=True)}\n\nmy answer")]
    assert engine.replace_handoff(carrier, "new")[1]["content"] == f"{handoff_block('new', inline=True)}\n\nmy answer"
    parts = [marked("user", [{"type": "text", "text": f"{handoff_block('old')}\n\nhi"}, IMAGE]), assistant("a")]
    assert engine.replace_handoff(parts, "new")[0] == marked(
        "user", [{"type": "text", "text": handoff_block("new")}, {"type": "text", "text": "hi"}, IMAGE]
    )
    inline_parts = [marked("assistant", [{"type": "text", "text": handoff_block("old", inline=True)}])]
    assert engine.replace_handoff(inline_parts, "new")[0]["content"] == handoff_block("new", inline=True)
    assert engine.handoff_note(parts) == "old"


def test_an_open_batch_at_the_end_of_the_head_gets_its_stub_result() -> None:
    out = assemble([user("q"), assistant(None, call("x", "t"))], "s", [assistant("a"), user("n")])
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "user", "assistant", "user"]
    assert out[2]["tool_call_id"] == "x" and "no result was recorded" in out[2]["content"]
    validate_messages(out)
    # The stub closes the head, so the block follows a tool result: before a user message it is the assistant's.
    before_user = assemble([user("q"), assistant(None, call("x", "t"))], "s", [user("n"), assistant("b")])
    assert [m["role"] for m in before_user] == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    assert before_user[3] == marked("assistant", handoff_block("s")) and before_user[4] == user("n")


def test_placement_with_an_empty_tail() -> None:
    assert assemble([], "s", []) == [marked("user", handoff_block("s"))]
    request = user("the task")
    assert assemble([user("q"), assistant("a")], "s", [], pinned=request) == [
        user("q"), assistant("a"), request, marked("assistant", handoff_block("s", inline=True)),
    ]  # fmt: skip
    assert assemble([user("q"), assistant(None, call("x", "t")), result("x", "r")], "s", []) == [
        user("q"), assistant(None, call("x", "t")), result("x", "r"), marked("user", handoff_block("s", inline=True)),
    ]  # fmt: skip


def test_a_request_in_the_head_rides_on_the_next_assistant_message() -> None:
    head = [user("the big task"), assistant(None, call("a", "t")), result("a", "r")]
    out = assemble(head, "s", [assistant("step", call("b", "t")), result("b", "r"), assistant("done")])
    assert out == [
        *head,
        {**assistant("step", call("b", "t")), "content": f"{handoff_block('s', inline=True)}\n\nstep", "marker": "handoff"},
        result("b", "r"), assistant("done"),
    ]  # fmt: skip
    after_answer = assemble([user("task"), assistant("ok")], "s", [assistant("more"), user("next")])
    assert after_answer == [user("task"), assistant("ok"), marked("user", handoff_block("s")), assistant("more"), user("next")]
    user_tail = assemble([user("q"), assistant("a")], "s", [user("n"), assistant("b")])
    assert user_tail == [user("q"), assistant("a"), marked("user", f"{handoff_block('s')}\n\nn"), assistant("b")]


def test_a_pinned_request_after_a_user_or_tool_head_follows_the_block() -> None:
    request = user("the task")
    for last in (user("q2"), result("x", "r")):
        head = [user("q"), assistant(None, call("x", "t")), last] if last["role"] == "tool" else [user("q"), assistant("a"), last]
        out = assemble(head, "s", [assistant("step")], pinned=request)
        assert out == [*head, marked("assistant", handoff_block("s")), request, assistant("step")]
    after_assistant = assemble([user("q"), assistant("a")], "s", [assistant("step")], pinned=request)
    assert after_assistant == [
        user("q"), assistant("a"), request, {**assistant("step"), "content": f"{handoff_block('s', inline=True)}\n\nstep", "marker": "handoff"},
    ]  # fmt: skip
    before_user = assemble([user("q"), assistant("a")], "s", [user("u"), assistant("b")], pinned=request)
    assert before_user[3] == marked("assistant", handoff_block("s", inline=True)) and before_user[4] == user("u")


def test_merging_into_empty_or_blank_content_and_the_system_note() -> None:
    out = assemble([], "s", [user("   "), assistant("b"), user("n")])
    assert out[0] == marked("user", handoff_block("s"))
    none_content = assemble([user("q"), assistant("a"), user("u")], "s", [assistant(None, call("c", "t")), result("c", "r")])
    assert none_content[3]["content"] == handoff_block("s", inline=True) and none_content[3]["tool_calls"][0]["id"] == "c"
    system = {"role": "system", "content": "You are hermes."}
    assert with_system_note(system, "custom note") == {"role": "system", "content": "You are hermes.\n\ncustom note"}
    assert with_system_note({"role": "system", "content": ""}) == {"role": "system", "content": SYSTEM_NOTE}
    parts = {"role": "system", "content": [{"type": "text", "text": "x"}]}
    assert with_system_note(parts) is parts
