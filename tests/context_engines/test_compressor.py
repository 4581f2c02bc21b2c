"""The compressor engine end to end: summary calls, failures, cooldowns, anti-thrashing."""

from __future__ import annotations

from typing import Any

import pytest

from hermes.context_engines.compressor import Compressor
from hermes.context_engines.compressor.assembly import HANDOFF_PREFIX, SYSTEM_NOTE
from hermes.context_engines.compressor.failures import LOW_SAVINGS
from hermes.kernel import ProviderError
from hermes.kernel.testing import validate_messages

from .transcripts import assistant, call, image_user, result, user

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"


class Recorder:
    """A scripted summarizer: answers (or raises) in turn and records every call."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, str, int]] = []

    def __call__(self, system: str, prompt: str, max_tokens: int) -> str:
        self.calls.append((system, prompt, max_tokens))
        answer = self.answers.pop(0) if self.answers else "## Active Task\nsame"
        if isinstance(answer, BaseException):
            raise answer
        return answer


def long_chat(turns: int = 12) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [user("build the parser " + SECRET)]
    for i in range(turns):
        messages += [
            assistant(None, call(f"c{i}", "terminal", command=f"pytest -k t{i}")),
            result(f"c{i}", "exit code: 1\n" + f"failure {i}\n" * 200),
            assistant(f"test {i} fails; fixing"),
            user(f"continue with step {i}" + (f" using key {SECRET}" if i == 2 else "")),
        ]
    return messages + [assistant("ok"), user("now write the docs")]


def clocked(engine: Compressor) -> list[float]:
    now = [1_000.0]
    engine.guard.clock = lambda: now[0]
    return now


def test_compresses_through_the_summarizer_with_hooks_focus_and_redaction() -> None:
    summarizer = Recorder(f"## Active Task\nwrite the docs\n## Critical Context\nkey {SECRET}")
    engine = Compressor(context_length=8_000, summarizer=summarizer)
    engine.pre_compress_context = ["memory: the user likes short docs"]
    messages = [{"role": "system", "content": "You are hermes."}, *long_chat()]
    out = engine.compress(messages, focus_topic="the parser")
    validate_messages(out)
    system, prompt, budget = summarizer.calls[0]
    assert "different assistant" in system and budget == 2_600  # the 2,000-token budget with 1.3x headroom
    assert "memory: the user likes short docs" in prompt  # the on_pre_compress results matter
    assert 'on everything about "the parser"' in prompt
    assert SECRET not in prompt and "[REDACTED:openai-key]" in prompt  # redacted input
    handoff = next(m for m in out if HANDOFF_PREFIX in str(m["content"]))
    assert "write the docs" in handoff["content"] and SECRET not in handoff["content"]  # redacted output
    assert out[0]["content"].endswith(SYSTEM_NOTE) and out[1:4] == messages[1:4]
    assert out[-1] == user("now write the docs")
    assert engine.compression_count == 1 and len(out) < len(messages)
    assert engine.system_note == SYSTEM_NOTE  # for the kernel's rebuilt system prompt
    assert engine.get_status()["last_compression"]["summarised_messages"] > 0


def test_second_compression_updates_the_previous_summary_and_keeps_the_head() -> None:
    summarizer = Recorder("## Goal\nfirst summary", "## Goal\nsecond summary")
    engine = Compressor(context_length=8_000, summarizer=summarizer)
    first = engine.compress(long_chat())
    grown = first + [assistant("docs drafted")] + long_chat(8)[1:]
    second = engine.compress(grown)
    validate_messages(second)
    assert "<previous-handoff>\n## Goal\nfirst summary\n</previous-handoff>" in summarizer.calls[1][1]
    assert second[0] == first[0] == long_chat()[0]  # the protected head survives every compression
    note = next(m["content"] for m in second if m.get("marker") == "handoff")
    assert "second summary" in note and "first summary" not in str(second)
    assert sum(HANDOFF_PREFIX in str(m["content"]) for m in second) == 1


@pytest.mark.parametrize("reason", ["auth", "timeout", "server_error", "overloaded"])
def test_auth_or_network_failure_returns_the_messages_unchanged_and_rests_the_model(reason: str) -> None:
    summarizer = Recorder(ProviderError(reason, "down"))
    engine = Compressor(context_length=8_000, summarizer=summarizer)  # type: ignore[arg-type]
    now = clocked(engine)
    messages = long_chat()
    assert engine.compress(messages) == messages
    assert engine.compression_count == 0 and engine.guard.cooldown_left() == 60.0
    assert engine.get_status()["last_error"].startswith("summary call failed")
    for _ in range(5):  # every later step of the turn: no new call while the model rests
        assert engine.compress(messages) == messages
    assert len(summarizer.calls) == 1 and "resting" in engine.skip_reason(messages)
    now[0] += 61
    summarizer.answers.append(ProviderError(reason, "still down"))
    engine.compress(messages)
    assert len(summarizer.calls) == 2 and engine.guard.cooldown_left() == 600.0  # repeats rest longer


@pytest.mark.parametrize("failure", [ProviderError("rate_limit", "slow"), ProviderError("format_error", "bad"), RuntimeError("x"), ""])
def test_other_failures_insert_a_labelled_fallback_and_rest_the_model_60_s(failure: Any) -> None:
    summarizer = Recorder(failure)
    engine = Compressor(context_length=8_000, summarizer=summarizer)
    now = clocked(engine)
    out = engine.compress(long_chat())
    validate_messages(out)
    handoff = next(m["content"] for m in out if HANDOFF_PREFIX in str(m["content"]))
    assert "[No summary:" in handoff and "not a summary" in handoff
    assert "now write the docs" in handoff and "terminal ×" in handoff
    assert SECRET not in handoff
    assert engine.guard.cooldown_left() == 60.0
    engine.compress(long_chat())  # in cooldown: no call, the fallback again
    assert len(summarizer.calls) == 1
    now[0] += 61
    engine.compress(long_chat())
    assert len(summarizer.calls) == 2


def test_no_summary_model_means_fallback_and_a_600_s_cooldown() -> None:
    engine = Compressor(context_length=8_000, summarizer=None)
    clocked(engine)
    out = engine.compress(long_chat())
    validate_messages(out)
    assert "no summary model is configured" in str(out)
    assert engine.guard.cooldown_left() == 600.0


def test_two_low_saving_compressions_switch_automatic_compression_off(caplog: pytest.LogCaptureFixture) -> None:
    engine = Compressor(context_length=8_000, summarizer=Recorder("x" * 60_000, "y" * 60_000, "short"))
    engine.last_prompt_tokens = 10**6
    assert engine.should_compress()
    engine.compress(long_chat())  # a summary as big as what it replaced: no saving
    assert engine.guard.auto_enabled
    engine.compress(long_chat())
    assert not engine.guard.auto_enabled and not engine.should_compress(prompt_tokens=10**6)
    assert f"under {LOW_SAVINGS:.0%}" in engine.get_status()["warning"] and "automatic compression is off" in caplog.text
    engine.resume_automatic()  # /compress
    assert engine.should_compress(prompt_tokens=10**6)
    engine.guard.auto_enabled = False
    engine.on_session_switch(old_session_id="a", new_session_id="b", reason="new")  # /new
    assert engine.should_compress(prompt_tokens=10**6) and engine.compression_count == 0


def test_a_good_saving_resets_the_streak() -> None:
    engine = Compressor(context_length=8_000, summarizer=Recorder("x" * 60_000, "short", "y" * 60_000))
    for _ in range(3):
        engine.compress(long_chat())
    assert engine.guard.auto_enabled


def test_old_images_are_gone_from_the_summary_input() -> None:
    summarizer = Recorder()
    engine = Compressor(context_length=8_000, summarizer=summarizer)
    messages = long_chat()
    messages[4] = image_user("continue with step 0")
    engine.compress(messages)
    assert "base64" not in summarizer.calls[0][1] and "image removed" in summarizer.calls[0][1]


def test_short_conversations_are_left_alone() -> None:
    engine = Compressor(context_length=8_000, summarizer=Recorder())
    messages = [user("hi"), assistant("hello"), user("bye")]
    assert engine.compress(messages) == messages and engine.compression_count == 0


def test_one_long_task_compresses_again_and_again_around_its_request() -> None:
    engine = Compressor(context_length=8_000, summarizer=Recorder(), config={"compression.tail_min_messages": 3})
    request = user("migrate every module")
    messages: list[dict[str, Any]] = [request]
    for round_ in range(4):
        for i in range(10):
            call_id = f"r{round_}c{i}"
            messages += [assistant(None, call(call_id, "read_file", path=f"m{i}.py")), result(call_id, "code\n" * 400, "read_file")]
        before = len(messages)
        messages = engine.compress(messages)
        validate_messages(messages)
        assert len(messages) < before and request in messages
        assert [m for m in messages if m["role"] == "user"] == [request]
    assert engine.compression_count == 4
