"""Phase 4: the handoff block, its role, merging, tool pairs and the system note."""

from __future__ import annotations

from hermes.context_engines.compressor.assembly import (
    HANDOFF_END,
    HANDOFF_PREFIX,
    HANDOFF_PREFIX_INLINE,
    SYSTEM_NOTE,
    assemble,
    extract_handoff,
    with_system_note,
)
from hermes.kernel.testing import validate_messages

from .transcripts import assistant, call, result, user


def test_reference_only_prefix_and_end_marker() -> None:
    assert "background, not instructions" in HANDOFF_PREFIX and "respond only to the latest user message" in HANDOFF_PREFIX
    out = assemble([], "the summary", [assistant("a"), user("now")])
    assert out[0] == {"role": "user", "content": f"{HANDOFF_PREFIX}\n\nthe summary\n\n{HANDOFF_END}", "marker": "handoff"}
    validate_messages(out)


def test_role_is_chosen_to_alternate() -> None:
    after_user = assemble([user("q"), assistant("a"), user("q2")], "s", [user("q3"), assistant("a3")])
    assert [m["role"] for m in after_user] == ["user", "assistant", "user", "assistant", "user", "assistant"]
    after_tool = assemble([user("q"), assistant(None, call("x", "t")), result("x", "r")], "s", [assistant("a"), user("u")])
    assert after_tool[3]["role"] == "user"
    validate_messages(after_user)
    validate_messages(after_tool)


def test_merged_into_the_first_tail_message_when_both_roles_collide() -> None:
    out = assemble([user("q"), assistant("a"), user("q2")], "s", [assistant("a2"), user("newest")])
    assert len(out) == 5 and out[3]["role"] == "assistant"
    assert out[3]["content"].startswith(HANDOFF_PREFIX) and out[3]["content"].endswith("\n\na2")
    assert out[4] == user("newest")
    first_is_user = assemble([], "s", [user("older"), assistant("b"), user("newest")])
    assert first_is_user[0]["content"].endswith(f"{HANDOFF_END}\n\nolder") and len(first_is_user) == 3
    parts = assemble([], "s", [{"role": "user", "content": [{"type": "text", "text": "hi"}]}, assistant("x"), user("n")])
    assert parts[0]["content"][0]["text"].startswith(HANDOFF_PREFIX) and parts[0]["content"][1]["text"] == "hi"
    for out in (first_is_user, parts):
        validate_messages(out)


def test_orphans_dropped_and_missing_results_stubbed() -> None:
    out = assemble(
        [user("q")], "s",
        [result("gone", "orphan"), assistant(None, call("a", "t"), call("b", "t")), result("a", "r"), user("n"), assistant("z")],
    )  # fmt: skip
    assert all(m.get("tool_call_id") != "gone" for m in out)
    stub = next(m for m in out if m.get("tool_call_id") == "b")
    assert "no result was recorded" in stub["content"]
    validate_messages(out)
    open_end = assemble([user("q")], "s", [assistant("a"), user("n"), assistant(None, call("c", "t"))])
    assert open_end[-1]["tool_calls"][0]["id"] == "c"  # a batch still running stays open
    validate_messages([*open_end, result("c", "done")])


def test_extract_handoff_takes_the_block_out_of_plain_and_merged_messages() -> None:
    merged = assemble([], "old summary", [user("older"), assistant("b"), user("newest")])
    rest, found, floor = extract_handoff(merged)
    assert found == "old summary" and rest[0] == user("older") and floor == 0
    alone = assemble([user("q"), assistant("a")], "s2", [assistant("b"), user("n")])
    rest, found, floor = extract_handoff(alone)
    assert found == "s2" and rest == [user("q"), assistant("a"), assistant("b"), user("n")]
    assert floor == 2  # the next tail starts at the earliest where the block stood
    assert extract_handoff([user("x")]) == ([user("x")], None, 0)
    echoed = assemble([], f"text {HANDOFF_END} more", [assistant("a"), user("n")])
    assert extract_handoff(echoed)[1] == "text [end marker] more"


def test_system_note_is_added_once() -> None:
    once = with_system_note({"role": "system", "content": "You are hermes."})
    assert once["content"] == f"You are hermes.\n\n{SYSTEM_NOTE}"
    assert with_system_note(once) == once


def test_a_pinned_request_stays_its_own_message_on_the_right_side_of_the_block() -> None:
    request = user("the big task")
    after_tool = assemble([user("q"), assistant(None, call("x", "t")), result("x", "r")], "s", [assistant("step")], pinned=request)
    assert [m["role"] for m in after_tool] == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    assert after_tool[3]["content"].startswith(HANDOFF_PREFIX) and after_tool[4] is request
    no_head = assemble([], "s", [assistant(None, call("y", "t")), result("y", "r")], pinned=request)
    assert no_head[0] is request and no_head[1]["content"].startswith(HANDOFF_PREFIX_INLINE)
    assert no_head[1]["tool_calls"][0]["id"] == "y"  # merged into the next assistant message
    for out in (after_tool, no_head):
        validate_messages(out)


def test_a_request_in_the_head_gets_the_inline_wording() -> None:
    head = [user("the big task"), assistant(None, call("a", "t")), result("a", "r")]
    out = assemble(head, "s", [assistant(None, call("b", "t")), result("b", "r")])
    assert out[3]["content"].startswith(HANDOFF_PREFIX_INLINE) and [m["role"] for m in out].count("user") == 1
    ends_with_answer = assemble([user("task"), assistant("ok")], "s", [assistant(None, call("b", "t")), result("b", "r")])
    assert ends_with_answer[2] == {"role": "user", "content": ends_with_answer[2]["content"], "marker": "handoff"}
    assert ends_with_answer[2]["content"].startswith(HANDOFF_PREFIX_INLINE)
    for result_ in (out, ends_with_answer):
        validate_messages(result_)
