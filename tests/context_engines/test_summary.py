"""Phase 3: the summary prompt, its template, iterative update, focus and the input cap."""

from __future__ import annotations

import re

from hermes.context_engines.compressor.summary import FOCUS_SHARE, PREAMBLE, SECTIONS, build_prompt, serialize

from .transcripts import assistant, call, result, user


def test_template_sections_in_order() -> None:
    prompt = build_prompt("[user] hi", budget=2_000)
    headings = re.findall(r"^## (.+)$", prompt, flags=re.M)
    assert headings == list(SECTIONS)
    assert SECTIONS[0] == "Active Task" and SECTIONS[-1] == "Critical Context" and len(SECTIONS) == 13
    assert "2,000 tokens" in prompt
    assert "different assistant" in PREAMBLE and "Do not answer" in PREAMBLE


def test_iterative_update_carries_the_previous_summary() -> None:
    prompt = build_prompt("[user] more", budget=2_000, previous="## Goal\nship v2")
    assert "UPDATE it rather than rewriting" in prompt and "<previous-handoff>\n## Goal\nship v2\n</previous-handoff>" in prompt
    assert "preserve" in prompt and "move items" in prompt
    assert "previous-handoff" not in build_prompt("[user] more", budget=2_000)


def test_focus_topic_gets_its_share_of_the_budget() -> None:
    prompt = build_prompt("[user] x", budget=4_000, focus_topic="the migration")
    assert 0.60 <= FOCUS_SHARE <= 0.70
    assert 'about 65% of the note (about 2,600 tokens) on everything about "the migration"' in prompt


def test_hook_context_and_the_active_task_reach_the_prompt() -> None:
    prompt = build_prompt("[user] x", budget=2_000, extra_context=["memory: likes tabs", " ", None], active_task="fix bug 7")  # type: ignore[list-item]
    assert "<plugin-context>\nmemory: likes tabs\n</plugin-context>" in prompt
    assert prompt.count("<plugin-context>") == 1
    assert "<latest-request>\nfix bug 7\n</latest-request>" in prompt


def test_serialize_renders_calls_and_caps_the_input_keeping_the_newest() -> None:
    messages = [user("first request"), assistant(None, call("a", "terminal", command="ls")), result("a", "exit code: 0")]
    text = serialize(messages, 10_000)
    assert '[user] first request' in text and '-> calls terminal({"command": "ls"})' in text
    assert "[tool result (terminal)] exit code: 0" in text
    many = [user(f"message {i} " + "w" * 500) for i in range(200)]
    capped = serialize(many, 8_000)
    assert len(capped) <= 8_000
    assert "message 0 " in capped and "message 199 " in capped and "messages left out to fit" in capped
    assert len(serialize([user("x" * 50_000)], 100_000)) < 5_000  # one message never takes it all
