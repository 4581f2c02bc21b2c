"""Phase 3 exactly: the whole prompt as the summary model reads it, each piece's share of the cap,
how messages are rendered, and where serialising stops (mutation testing, issue 20)."""

from __future__ import annotations

from hermes.context_engines.compressor.summary import _clip, build_prompt, redact, serialize

from .transcripts import assistant, call, result, user

TEMPLATE = """Write the handoff note in Markdown with exactly these sections, in this order, in at most about 2,000 tokens. Write 'none' under a section with nothing to say.

## Active Task
<the user's latest unfulfilled request, copied verbatim>

## Goal
<what the user is trying to achieve overall>

## Constraints & Preferences
<rules, styles and preferences the user stated>

## Completed Actions
<a numbered list; name the tool of each action (e.g. 1. [terminal] ran the tests: 3 failed)>

## Active State
<the current state of files, processes, branches, environment>

## In Progress
<what was being done when this window ended>

## Blocked
<what is stuck and why>

## Key Decisions
<decisions made and their reasons>

## Resolved Questions
<questions that were answered, with the answer>

## Pending User Asks
<things the user asked that are not done yet>

## Relevant Files
<paths and what matters in each>

## Remaining Work
<the next steps, in order>

## Critical Context
<exact values, names, errors and numbers that must not be lost>"""

FULL = f"""An earlier handoff note exists. UPDATE it rather than rewriting it: preserve everything in it that is still true, add what the new conversation below did, and move items that are now finished from In Progress / Remaining Work / Pending User Asks to Completed Actions or Resolved Questions.

<previous-handoff>
prev
</previous-handoff>

<conversation>
CONV
</conversation>

Context from the agent's plugins (for example memory) to take into account:
<plugin-context>
memo
</plugin-context>

<plugin-context>
m2
</plugin-context>

The user's latest request, for the Active Task section (copy it verbatim if it is not yet fulfilled):
<latest-request>
do it
</latest-request>

A first draft of this note lost the facts below. The note MUST contain each of them, copied exactly (in Critical Context, Relevant Files or wherever they belong):
- a: 1
- b: 2

FOCUS: spend about 65% of the note (about 1,300 tokens) on everything about "é topic"; keep the other sections brief.

{TEMPLATE}"""


def test_the_whole_prompt_word_for_word() -> None:
    prompt = build_prompt(
        "CONV", budget=2_000, previous=" prev ", focus_topic=" é topic ", extra_context=["  memo  ", "m2", " ", 3],  # type: ignore[list-item]
        active_task=" do it ", must_keep=["a: 1", "b: 2"],
    )  # fmt: skip
    assert prompt == FULL
    assert build_prompt("CONV", budget=2_000, focus_topic="  ") == f"<conversation>\nCONV\n</conversation>\n\n{TEMPLATE}"


def test_without_a_cap_nothing_is_clipped() -> None:
    long = "p" * 5_000
    prompt = build_prompt("c", budget=2_000, previous=long, active_task=long, extra_context=[long], must_keep=[long])
    assert "omitted" not in prompt and prompt.count(long) == 4


def test_each_piece_gets_its_share_of_the_cap() -> None:
    prompt = build_prompt(
        "c", budget=2_000, cap_chars=8_000,
        previous="p" * 2_010,  # a quarter: 2,000
        extra_context=["e" * 600, "f" * 500],  # an eighth, shared: 500 each
        active_task="t" * 1_800,  # a fifth: 1,600
        must_keep=["m" * 1_048],  # a tenth: 800 ("- " comes first)
        focus_topic="o" * 650,  # 500
    )  # fmt: skip
    assert "[70 chars omitted]" in prompt and "[160 chars omitted]" in prompt and "[260 chars omitted]" in prompt
    assert "[160 chars omitted]" in prompt and "f" * 500 in prompt and "[210 chars omitted]" in prompt
    assert "[310 chars omitted]" in prompt
    assert prompt.count("chars omitted") == 5  # the 500-character extra fits its share exactly
    many = build_prompt("c", budget=2_000, cap_chars=8_000, extra_context=["x" * 201] * 10)
    assert many.count("[61 chars omitted]") == 10  # never under 200 characters each


def test_clip_keeps_three_quarters_from_the_start_and_a_quarter_from_the_end() -> None:
    text = "".join(chr(ord("a") + i % 26) for i in range(200))
    assert _clip(text, 200) == text
    assert _clip(text, 100) == f"{text[:30]}\n… [160 chars omitted] …\n{text[-10:]}"
    assert _clip(text, 63) == "ab\n… [197 chars omitted] …\n"  # almost nothing left: no tail at all
    assert _clip(text, 20) == "\n… [200 chars omitted] …\n"


def test_messages_are_rendered_with_their_role_calls_and_tool_name() -> None:
    text = serialize(
        [
            {"content": "no role"},
            user("  "),
            assistant("thinking", call("a", "terminal", command="ls"), {"id": "b", "type": "function", "function": {"name": "t"}}),
            {"role": "tool", "tool_call_id": "a", "content": "out"},
            result("a", "done", "terminal"),
            assistant(None, call("c", "t", blob="z" * 700)),
        ],
        100_000,
    )
    blob = '{"blob": "' + "z" * 700 + '"}'
    clipped = f"{blob[:405]}\n… [172 chars omitted] …\n{blob[-135:]}"
    assert text == "\n\n".join([
        "[?] no role",
        "[user] (empty)",
        '[assistant] thinking\n-> calls terminal({"command": "ls"})\n-> calls t({})',
        "[tool result ()] out",
        "[tool result (terminal)] done",
        f"[assistant] -> calls t({clipped})",
    ])  # fmt: skip


def _numbered(count: int) -> list[dict]:
    messages = [user(f"{i:02}" + "x" * 91) for i in range(count)]  # each renders as exactly 100 characters
    assert all(len(f"[user] {m['content']}") == 100 for m in messages)
    return messages


def test_serialize_stops_exactly_at_the_cap() -> None:
    five = _numbered(5)
    rendered = [f"[user] {m['content']}" for m in five]
    assert serialize(five, 510) == "\n\n".join(rendered)  # 5 × (100 + 2) fits exactly
    assert serialize(five, 509) == "\n\n".join(["[… 1 messages left out to fit the summary model …]", *rendered[1:]])


def test_serialize_keeps_the_start_briefly_and_makes_room_for_it() -> None:
    twelve = _numbered(12)
    rendered = [f"[user] {m['content']}" for m in twelve]
    marker = "[… 3 messages left out to fit the summary model …]"
    # A fifth of 1,000 holds one message; the tail gives up its oldest so the whole fits.
    assert serialize(twelve, 1_000) == "\n\n".join([rendered[0], marker, *rendered[4:]])
    # 590: five fit, a fifth holds one, and one of the tail goes so that exactly 80 characters are left.
    assert serialize(twelve, 590) == "\n\n".join([rendered[0], "[… 7 messages left out to fit the summary model …]", *rendered[8:]])
    # A fifth of 1,020 holds exactly two.
    assert serialize(twelve, 1_020) == "\n\n".join([*rendered[:2], marker, *rendered[5:]])


def test_redact_uses_the_kernel_rules() -> None:
    assert redact("key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD") == "key [REDACTED:openai-key]"
