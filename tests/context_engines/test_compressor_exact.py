"""The compressor's exact figures, texts and state: budgets at their edges, the guard, the status,
the error lines a user reads, and the pinned request on a second compression with an empty head.

Each test names the values a one-line bug would change (mutation testing, issue 20).
"""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest

from hermes.context_engines.compressor import Compressor
from hermes.context_engines.compressor.assembly import HANDOFF_PREFIX_INLINE, SYSTEM_NOTE
from hermes.context_engines.compressor.budget import setting, summary_budget, summary_input_cap, tail_budget, threshold_tokens
from hermes.context_engines.compressor.engine import FALLBACK_NOTE
from hermes.context_engines.compressor.failures import CompressionGuard, failure_action
from hermes.context_engines.compressor.summary import PREAMBLE
from hermes.kernel import ProviderError
from hermes.kernel.agent.summarizer import SummaryText
from hermes.kernel.context_engine import estimate_tokens
from hermes.kernel.testing import validate_messages

from .transcripts import assistant, call, result, user

GOOD = "## Active Task\nnow write the docs\n## Critical Context\nnone"


class Recorder:
    """A scripted summarizer: answers (or raises) in turn and records every call."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, str, int]] = []

    def __call__(self, system: str, prompt: str, max_tokens: int) -> Any:
        self.calls.append((system, prompt, max_tokens))
        answer = self.answers.pop(0) if self.answers else GOOD
        if isinstance(answer, BaseException):
            raise answer
        return answer


def chat(turns: int = 14, lines: int = 50) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [user("build the parser")]
    for i in range(turns):
        messages += [
            assistant(None, call(f"c{i}", "terminal", command=f"pytest -k t{i}")),
            result(f"c{i}", "exit code: 1\n" + f"failure {i}\n" * lines),
            assistant(f"test {i} fails; fixing"),
            user(f"continue with step {i}"),
        ]
    return messages + [assistant("ok"), user("now write the docs")]


def clocked(engine: Compressor, start: float = 1_000.0) -> list[float]:
    now = [start]
    engine.guard.clock = lambda: now[0]
    return now


# --- budget arithmetic at its edges ---------------------------------------------------------


def test_budget_figures_at_their_edges() -> None:
    assert threshold_tokens(60_000, 0.5) == 51_000  # 64k does not fit 85 % of 60k: the floor is 51k
    assert threshold_tokens(200_000, 0.1) == 64_000  # the floor wins over a small ratio
    assert tail_budget(1, 0.5) == 1 and tail_budget(10_000, 0.25) == 2_500
    assert summary_budget(40_000, 1_000_000) == 8_000  # 20 % of the content binds
    assert summary_budget(80_000, 100_000) == 5_000  # 5 % of the window binds
    assert summary_budget(10**7, 10**9) == 12_000 and summary_budget(0, 0) == 2_000
    assert summary_input_cap(1_000, 60_000) == 2_000  # the floor
    assert summary_input_cap(100_000, 50_000) == 50_000 and summary_input_cap(50_000, 90_000) == 30_000


def test_setting_reads_the_config_and_falls_back_to_the_default() -> None:
    assert setting(None, "k", 3) == 3
    assert setting({"k": 5}, "k", 3) == 5
    assert setting({"k": 0}, "k", 3) == 0  # a falsy value is still a value
    assert setting({"k": None}, "k", 3) == 3 and setting({}, "k", 3) == 3

    class Broken:
        def get(self, key: str, default: Any = None) -> Any:
            raise ValueError(key)

    assert setting(Broken(), "k", 3) == 3


# --- failures and the guard -------------------------------------------------------------------


def test_failure_action_names() -> None:
    assert failure_action(ConnectionError("reset")) == "unchanged"
    assert failure_action(TimeoutError()) == "unchanged"
    assert failure_action(ProviderError("timeout", "slow")) == "unchanged"
    assert failure_action(ProviderError("rate_limit", "slow")) == "fallback"
    assert failure_action(RuntimeError("x")) == "fallback"
    tagged = ConnectionError("reset")
    tagged.reason = "format_error"  # type: ignore[attr-defined]
    assert failure_action(tagged) == "fallback"  # a stated reason wins over the exception type


def test_guard_cooldowns_streak_resume_and_reset(caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    guard = CompressionGuard(clock=lambda: now[0])
    assert (guard.cooldown_until, guard.failures, guard.low_streak, guard.auto_enabled, guard.warning) == (0.0, 0, 0, True, None)
    assert not guard.in_cooldown() and guard.cooldown_left() == 0.0
    assert guard.failed() == 60.0 and guard.cooldown_left() == 60.0 and guard.failures == 1
    now[0] += 60  # the last instant of the rest is over
    assert not guard.in_cooldown() and guard.cooldown_left() == 0.0
    now[0] += 100
    assert guard.cooldown_left() == 0.0  # never negative
    assert guard.failed() == 600.0 and guard.failures == 2
    guard.succeeded()
    assert guard.failures == 0 and guard.failed() == 60.0  # a success starts the count again
    left = guard.cooldown_left()
    guard.start_cooldown(5)  # a shorter rest never shortens a longer one
    assert guard.cooldown_left() == left == 600.0

    assert guard.record(1_000, 950) is None and guard.low_streak == 1
    assert guard.record(1_000, 900) is None and guard.low_streak == 0  # exactly 10 % saved is enough
    assert guard.record(1, 0) is None and guard.low_streak == 0  # one token down to none saved everything
    assert guard.record(0, 0) is None and guard.low_streak == 1  # nothing to measure counts as no saving
    with caplog.at_level(logging.WARNING):
        warning = guard.record(1_000, 999)
    assert warning == (
        "the last 2 compressions each saved under 10%; automatic compression is off until /compress or /new "
        "(start a new session or compress with a focus topic)"
    )
    assert guard.warning == warning and guard.auto_enabled is False and guard.low_streak == 2
    assert caplog.messages == [f"context compression: {warning}"]
    assert guard.record(1_000, 1_000) is None  # already off: said once
    guard.resume()
    assert (guard.auto_enabled, guard.low_streak, guard.warning) == (True, 0, None)
    assert guard.record(1_000, 999) is None  # the streak starts again from nothing
    guard.reset()
    assert (guard.cooldown_until, guard.failures, guard.low_streak) == (0.0, 0, 0) and not guard.in_cooldown()


# --- the trigger --------------------------------------------------------------------------------


def test_usage_without_fields_counts_zero_and_output_tokens_are_kept_apart() -> None:
    engine = Compressor(context_length=8_000)
    engine.update_from_response(SimpleNamespace(prompt_tokens=1_234, output_tokens=56))
    assert (engine.last_prompt_tokens, engine.last_completion_tokens) == (1_234, 56)
    assert engine.get_status()["last_completion_tokens"] == 56
    engine.update_from_response(SimpleNamespace(prompt_tokens=0, output_tokens=0))
    assert (engine.last_prompt_tokens, engine.last_completion_tokens) == (0, 0)
    engine.update_from_response(object())
    assert (engine.last_prompt_tokens, engine.last_completion_tokens) == (0, 0)


def test_preflight_counts_messages_and_tools_and_the_overflow_edge() -> None:
    engine = Compressor(context_length=8_000)  # threshold 6,800 (85 % of the window)
    assert engine.threshold_tokens == 6_800
    messages = [user("x" * 4 * 3_500)]
    tools = [{"type": "function", "function": {"name": "t", "description": "d" * 4 * 3_500}}]
    assert not engine.should_compress_preflight(messages)
    assert not engine.should_compress_preflight([], tools)
    assert engine.should_compress_preflight(messages, tools)  # together they pass the threshold
    assert engine.near_overflow(7_600) and not engine.near_overflow(7_599)  # 95 % of the window


def test_skip_reason_text_counts_the_body_without_the_system_message() -> None:
    engine = Compressor(context_length=128_000, summarizer=Recorder())
    body = [user("hi"), assistant("hello"), user("bye")]
    kept = estimate_tokens(body)
    expected = (
        f"nothing to compress yet: the conversation ({kept:,} tokens, 3 messages) is all protected head "
        f"(first 3) and recent tail (at least 20 messages or {engine.tail_budget_tokens:,} tokens)"
    )
    assert engine.skip_reason(body) == expected
    assert engine.skip_reason([{"role": "system", "content": "You are hermes. " * 50}, *body]) == expected
    assert "0 messages" in str(engine.skip_reason([{"role": "system", "content": "You are hermes."}]))


def test_session_reset_forgets_every_per_conversation_value() -> None:
    engine = Compressor(context_length=8_000, summarizer=Recorder(RuntimeError("boom")))
    assert engine.last_compression == {} and engine.last_error is None
    assert engine.last_fidelity is None and engine.last_handoff is None
    clocked(engine)
    engine.compress(chat())
    assert engine.last_error and engine.system_note == FALLBACK_NOTE and engine.last_handoff
    engine.on_session_switch(old_session_id="a", new_session_id="b", reason="new")
    assert engine.last_compression == {} and engine.last_error is None
    assert engine.system_note is None and engine.last_fidelity is None and engine.last_handoff is None
    assert engine.guard.cooldown_left() == 0.0 and engine.guard.failures == 0


# --- the status and the error lines -------------------------------------------------------------


def test_status_and_last_compression_figures() -> None:
    engine = Compressor(context_length=8_000, summarizer=Recorder())
    messages = chat()
    out = engine.compress(messages, current_tokens=7_000)
    record = engine.get_status()["last_compression"]
    assert set(record) == {
        "messages_before", "messages_after", "tokens_before", "estimated_tokens_before", "estimated_tokens_after",
        "summarised_messages", "warning", "fallback", "fidelity",
    }  # fmt: skip
    assert record["messages_before"] == len(messages) and record["messages_after"] == len(out)
    assert record["tokens_before"] == 7_000 and record["estimated_tokens_before"] == estimate_tokens(messages)
    assert record["estimated_tokens_after"] == estimate_tokens(out) == engine.last_prompt_tokens
    handoff = next(i for i, m in enumerate(out) if m.get("marker") == "handoff")
    assert record["summarised_messages"] == len(messages) - (len(out) - 1)  # everything but the tail and the note
    assert handoff == 3 and record["warning"] is None and record["fallback"] is False
    assert record["fidelity"] == engine.last_fidelity and record["fidelity"]["score"] == 1.0
    engine.compress(messages)
    assert engine.last_compression["tokens_before"] == estimate_tokens(messages)  # no reported figure: the estimate


def test_status_rounds_the_cooldown_to_a_tenth_and_explains_the_wait() -> None:
    engine = Compressor(context_length=8_000, summarizer=Recorder(RuntimeError("boom")))
    now = clocked(engine)
    engine.compress(chat())
    assert engine.last_error == "summary call failed: boom (the summary model rests 60 s)"
    now[0] += 0.25
    status = engine.get_status()
    assert status["summary_cooldown_s"] == 59.8 and status["last_error"] == engine.last_error
    assert status["auto_compression"] is True and status["warning"] is None
    assert engine.skip_reason(chat()) == (
        "the summary model is resting after a failure (60 s left; summary call failed: boom (the summary model "
        "rests 60 s)); compression waits unless the window is about to overflow"
    )
    engine.last_error = None
    assert "(60 s left; no detail)" in str(engine.skip_reason(chat()))
    assert engine.skip_reason(chat(), ) is not None
    tokens = engine.context_length  # about to overflow: the rest no longer defers
    engine.last_prompt_tokens = tokens
    assert engine.skip_reason(chat()) is None


def test_the_error_lines_of_each_failure() -> None:
    engine = Compressor(context_length=8_000, summarizer=Recorder(ProviderError("rate_limit", "slow"), ""))
    now = clocked(engine)
    out = engine.compress(chat())
    note = engine.handoff_note(out)
    assert note.startswith(
        "[No summary: the summary call failed (rate_limit). Below is a mechanical list of what the compacted "
        "messages held, not a summary.]"
    )
    assert engine.last_error.startswith("summary call failed: ") and engine.last_error.endswith(" (the summary model rests 60 s)")
    now[0] += 61
    out = engine.compress(chat())  # the model answers nothing: a second failure rests 600 s
    assert engine.last_error == "the summary model returned nothing (it rests 600 s)"
    assert engine.handoff_note(out).startswith("[No summary: the summary model returned nothing. Below is")
    assert engine.last_compression["fallback"] is True and engine.system_note == FALLBACK_NOTE
    now[0] += 601
    out = engine.compress(chat())  # it works again: the old error is gone
    assert engine.last_error is None and engine.system_note == SYSTEM_NOTE
    assert engine.handoff_note(out) == GOOD and engine.last_compression["fallback"] is False


def test_no_summary_model_says_so_and_keeps_the_earlier_note_in_the_list() -> None:
    engine = Compressor(context_length=8_000, summarizer=None)
    clocked(engine)
    first = engine.compress(chat())
    assert engine.last_error == "no summary: no summary model is configured"
    assert engine.handoff_note(first).startswith("[No summary: no summary model is configured. Below is")
    assert "now write the docs" in engine.handoff_note(first)  # the latest request is listed
    grown = first + [assistant("more")] + chat()[1:]
    second = engine.compress(grown)
    validate_messages(second)
    assert "Earlier handoff:\n[No summary: no summary model is configured." in engine.handoff_note(second)


def test_unchanged_failure_is_logged_and_the_fallback_names_the_exception_type(caplog: pytest.LogCaptureFixture) -> None:
    engine = Compressor(context_length=8_000, summarizer=Recorder(ConnectionError("reset by peer")))
    now = clocked(engine)
    messages = chat()
    with caplog.at_level(logging.WARNING):
        assert engine.compress(messages) == messages
    assert "context compression skipped: reset by peer" in caplog.messages
    now[0] += 61
    engine.summarizer = Recorder(KeyError("k"))
    out = engine.compress(messages)
    assert engine.handoff_note(out).startswith("[No summary: the summary call failed (KeyError). Below is")


def test_a_resting_model_near_overflow_uses_the_estimate_when_no_figure_is_given() -> None:
    engine = Compressor(context_length=8_000, summarizer=Recorder())
    clocked(engine)
    engine.guard.start_cooldown(60)
    big = chat(14, 200)
    assert estimate_tokens(big) >= 7_600
    out = engine.compress(big)  # no reported figure: the estimate says the window is nearly full
    assert "resting after a failure and the window is nearly full" in engine.handoff_note(out)
    assert engine.last_error == "no summary: the summary model is resting after a failure and the window is nearly full"
    assert engine.summarizer.calls == []  # type: ignore[union-attr]
    small = chat(14, 20)
    assert engine.compress(small) == small  # far from full: it waits


def test_a_cut_off_note_is_asked_again_with_the_exact_request_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    summarizer = Recorder(SummaryText.of("## Active Task\nnow", "length"), SummaryText.of("", "length"))
    engine = Compressor(context_length=8_000, summarizer=summarizer)
    clocked(engine)
    with caplog.at_level(logging.WARNING):
        out = engine.compress(chat())
    assert "the summary hit its output limit (2600 tokens); asking once more with more room" in caplog.messages
    first, second = summarizer.calls
    assert second[1] == (
        f"{first[1]}\n\nYour previous note was cut off by the output limit: write it shorter, all sections."
    )
    assert second[2] == 5_200 and first[0] == second[0] == PREAMBLE
    # Cut off twice with nothing in it: nothing to keep, so the labelled list stands in.
    assert engine.last_error == "the summary model returned nothing (it rests 60 s)"
    assert engine.handoff_note(out).startswith("[No summary: the summary model returned nothing.")


def test_a_note_cut_off_twice_keeps_its_text_and_the_label() -> None:
    cut = SummaryText.of("  ## Active Task\nnow wr  ", "length")
    engine = Compressor(context_length=8_000, summarizer=Recorder(cut, cut))
    out = engine.compress(chat())
    assert engine.last_error == "the summary was cut off by the output limit twice; it is kept, marked as cut off"
    assert engine.handoff_note(out).startswith(
        "## Active Task\nnow wr\n\n[This note was cut off by the summary model's output limit; its last sections "
        "may be missing.]"
    )


# --- the prompt the summary model gets ----------------------------------------------------------


def test_the_prompt_carries_the_request_the_earlier_note_and_the_plugin_context() -> None:
    summarizer = Recorder("## Active Task\nfirst note", GOOD)
    engine = Compressor(context_length=8_000, summarizer=summarizer)
    engine.pre_compress_context = ["memory: tabs", 7]  # type: ignore[list-item]
    first = engine.compress(chat())
    system, prompt, max_tokens = summarizer.calls[0]
    assert "<latest-request>\nnow write the docs\n</latest-request>" in prompt
    assert "<plugin-context>\nmemory: tabs\n</plugin-context>" in prompt and prompt.count("<plugin-context>") == 1
    assert "previous-handoff" not in prompt and "FOCUS" not in prompt and "lost the facts" not in prompt
    assert "[assistant] test 0 fails; fixing" in prompt  # the middle is in it
    engine.compress(first + [assistant("more")] + chat()[1:], focus_topic="the lexer")
    second = summarizer.calls[1][1]
    assert "<previous-handoff>\n## Active Task\nfirst note\n</previous-handoff>" in second
    assert 'on everything about "the lexer"' in second


def test_the_summary_input_cap_follows_the_configured_tokens_and_the_summary_window() -> None:
    big = [user("start")] + [m for i in range(40) for m in (assistant(f"step {i} " + "w" * 8_000), user(f"go {i}"))]
    capped = Recorder()
    engine = Compressor(context_length=200_000, summarizer=capped,
                        config={"compression.summary_input_tokens": 3_000, "compression.tail_min_messages": 3})  # fmt: skip
    engine.compress(big)
    assert len(capped.calls[0][1]) <= 3_000 * 4 and "messages left out to fit" in capped.calls[0][1]
    roomy = Recorder()
    Compressor(context_length=200_000, summarizer=roomy, config={"compression.tail_min_messages": 3}).compress(big)
    assert len(roomy.calls[0][1]) > 3_000 * 4 and "messages left out" not in roomy.calls[0][1]
    small_window = Recorder()
    small_window.context_length = 10_000  # type: ignore[attr-defined]
    Compressor(context_length=200_000, summarizer=small_window, config={"compression.tail_min_messages": 3}).compress(big)
    assert len(small_window.calls[0][1]) <= 6_000 * 4  # 60 % of the summary model's own window


# --- the pinned request (issue 20) --------------------------------------------------------------


def _task_steps(prefix: str, count: int) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for i in range(count):
        steps += [assistant(None, call(f"{prefix}{i}", "terminal", command=f"step {i}")), result(f"{prefix}{i}", "r" * 6_000)]
    return steps


def test_a_request_that_opens_the_tail_stays_its_own_message_on_a_second_compression_with_an_empty_head() -> None:
    # No protected head: the handoff goes first. A newest request that opens the tail must be pinned,
    # or the handoff would be merged into the user's own message.
    engine = Compressor(context_length=8_000, summarizer=Recorder(),
                        config={"compression.protect_first_n": 0, "compression.tail_min_messages": 3})  # fmt: skip
    first = engine.compress([user("migrate the parser"), *_task_steps("a", 4), user("now fix the bug"), *_task_steps("b", 1)])
    validate_messages(first)
    request = user("and then the docs")
    second = engine.compress([*first, *_task_steps("x", 2), request, *_task_steps("c", 1)])
    validate_messages(second)
    assert engine.compression_count == 2
    assert [m for m in second if m["role"] == "user"] == [request]  # untouched, nothing merged into it
    marked = [m for m in second if m.get("marker") == "handoff"]
    assert len(marked) == 1 and marked[0]["role"] == "assistant"
    assert marked[0]["content"].startswith(HANDOFF_PREFIX_INLINE) and second[0] is request


# --- the retry with the missed facts ------------------------------------------------------------


def test_the_retry_keeps_every_piece_of_the_first_prompt_and_serialises_the_middle_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes.context_engines.compressor import engine as engine_module
    from hermes.context_engines.compressor.assembly import handoff_block

    from .test_fidelity import CORPUS, chat_with

    serialised: list[int] = []
    real = engine_module.serialize

    def counting(messages: Any, cap: int) -> str:
        serialised.append(len(messages))
        return real(messages, cap)

    monkeypatch.setattr(engine_module, "serialize", counting)
    budgets: list[int] = []
    real_budget = engine_module.summary_budget

    def counting_budget(tokens: int, window: int) -> int:
        budgets.append(tokens)
        return real_budget(tokens, window)

    monkeypatch.setattr(engine_module, "summary_budget", counting_budget)
    fact = CORPUS["path"][1]
    messages = chat_with("path")
    messages.insert(3, {"role": "user", "content": handoff_block("## Goal\nearlier note"), "marker": "handoff"})
    summarizer = Recorder(GOOD, f"{GOOD}\n- {fact}")
    engine = Compressor(context_length=16_000, summarizer=summarizer, config={"compression.tail_min_messages": 3})
    out = engine.compress(messages, focus_topic="the lexer")
    assert len(summarizer.calls) == 2 and engine.last_fidelity["retried"] is True
    first, retry = summarizer.calls[0][1], summarizer.calls[1][1]
    for piece in ("<previous-handoff>\n## Goal\nearlier note\n</previous-handoff>", 'everything about "the lexer"',
                  "<latest-request>\nship the fix\n</latest-request>"):  # fmt: skip
        assert piece in first and piece in retry
    assert retry.split("<conversation>")[1].split("</conversation>")[0] == first.split("<conversation>")[1].split("</conversation>")[0]
    assert serialised == [engine.last_compression["summarised_messages"]] and len(budgets) == 1  # once, for both calls
    assert fact in engine.handoff_note(out)


def test_a_labelled_list_is_not_asked_again_even_near_overflow() -> None:
    from .test_fidelity import chat_with

    engine = Compressor(context_length=16_000, summarizer=Recorder(RuntimeError("down")),
                        config={"compression.tail_min_messages": 3})  # fmt: skip
    clocked(engine)
    messages = chat_with("number")
    for message in messages:  # the fact moves off the first line, which is all the list keeps of a result
        if message["role"] == "tool" and "output mentions" in message["content"]:
            message["content"] = "header\n" + message["content"]
    out = engine.compress(messages, current_tokens=16_000)
    assert "[No summary: the summary call failed (RuntimeError)." in engine.handoff_note(out)
    assert engine.last_fidelity["summary_score"] < engine.min_fidelity
    assert engine.last_fidelity["retried"] is False and len(engine.summarizer.calls) == 1  # type: ignore[union-attr]


def test_a_conversation_without_a_user_message_has_no_latest_request() -> None:
    summarizer = Recorder()
    engine = Compressor(context_length=8_000, summarizer=summarizer, config={"compression.tail_min_messages": 3})
    messages = [m for m in chat() if m["role"] != "user"]
    out = engine.compress(messages)
    assert len(out) < len(messages) and engine.handoff_note(out) == GOOD
    assert len(summarizer.calls) == 1 and "<latest-request>" not in summarizer.calls[0][1]


# --- settings, the trigger and the record of a compression --------------------------------------


def test_every_setting_has_its_default_and_its_key() -> None:
    defaults = Compressor(context_length=200_000, model="m")
    assert (defaults.model, defaults.context_length, defaults.threshold_tokens, defaults.tail_budget_tokens) == ("m", 200_000, 100_000, 20_000)
    assert (defaults.protect_first_n, defaults.tail_min_messages, defaults.min_fidelity, defaults.enabled) == (3, 20, 0.85, True)
    config = {
        "compression.threshold": 0.6, "compression.target_ratio": 0.1, "compression.protect_first_n": 5,
        "compression.tail_min_messages": 2, "compression.min_fidelity": 0.5, "compression.enabled": 0,
    }  # fmt: skip
    engine = Compressor(context_length=200_000, config=config)
    assert (engine.threshold_tokens, engine.tail_budget_tokens, engine.protect_first_n) == (120_000, 12_000, 5)
    assert (engine.tail_min_messages, engine.min_fidelity, engine.enabled) == (3, 0.5, False)  # never under 3 messages
    engine.update_model("bigger", 400_000)
    assert (engine.model, engine.context_length, engine.threshold_tokens, engine.tail_budget_tokens) == ("bigger", 400_000, 240_000, 24_000)
    assert Compressor(context_length=200_000, config={"compression.tail_min_messages": 7}).tail_min_messages == 7


def test_should_compress_at_the_threshold_and_only_when_switched_on() -> None:
    engine = Compressor(context_length=200_000)
    engine.last_prompt_tokens = 100_000
    assert engine.should_compress() and not engine.should_compress(prompt_tokens=99_999)
    assert not engine.should_compress(prompt_tokens=0)  # an explicit figure wins, even zero
    engine.last_prompt_tokens = 99_999
    assert not engine.should_compress() and engine.should_compress(prompt_tokens=100_000)
    engine.guard.auto_enabled = False
    assert not engine.should_compress(prompt_tokens=10**6)


def test_finish_records_the_compression_and_puts_the_system_message_back() -> None:
    engine = Compressor(context_length=8_000)
    system = {"role": "system", "content": "You are hermes."}
    before = [system, user("a" * 400), assistant("b" * 400), user("c")]
    kept = [user("c")]
    record = engine.finish(before, kept, system, noted=False)
    assert kept[0] is system and record == {"before": estimate_tokens(before), "after": estimate_tokens(kept), "warning": None}
    assert engine.compression_count == 1 and engine.system_note == SYSTEM_NOTE and engine.last_prompt_tokens == record["after"]
    noted = [user("c")]
    engine.finish(before, noted, system, note="what happened")
    assert noted[0] == {"role": "system", "content": "You are hermes.\n\nwhat happened"} and engine.system_note == "what happened"
    assert engine.compression_count == 2
    bare = [user("c")]
    engine.finish(before[1:], bare, None)
    assert bare == [user("c")]
    status = engine.get_status()
    assert status["auto_compression"] is True and status["warning"] is None and status["compression_count"] == 3


def _with_earlier_note() -> list[dict[str, Any]]:
    from hermes.context_engines.compressor.assembly import handoff_block

    messages = chat(14, 200)
    messages.insert(3, {"role": "user", "content": handoff_block("## Goal\nearlier note"), "marker": "handoff"})
    return messages


@pytest.mark.parametrize("failure", ["raises", "empty", "resting", "no model"])
def test_every_labelled_list_carries_the_latest_request_and_the_earlier_note(failure: str) -> None:
    answers = {"raises": [RuntimeError("x")], "empty": [""], "resting": [], "no model": []}[failure]
    engine = Compressor(context_length=8_000, summarizer=None if failure == "no model" else Recorder(*answers))
    clocked(engine)
    if failure == "resting":
        engine.guard.start_cooldown(60)
    out = engine.compress(_with_earlier_note(), current_tokens=7_900)
    note = engine.handoff_note(out)
    assert note.startswith("[No summary: ")
    assert "Latest user request (verbatim):\nnow write the docs" in note
    assert "Earlier handoff:\n## Goal earlier note" in note


def test_an_empty_retry_keeps_the_first_summary_and_restores_the_facts() -> None:
    from .test_fidelity import CORPUS, chat_with

    summarizer = Recorder(GOOD, "")
    engine = Compressor(context_length=16_000, summarizer=summarizer, config={"compression.tail_min_messages": 3})
    out = engine.compress(chat_with("path"))
    assert len(summarizer.calls) == 2 and engine.last_fidelity["retried"] is False
    assert engine.handoff_note(out).startswith(GOOD) and CORPUS["path"][1] in engine.handoff_note(out)
    assert engine.last_error == "the summary model returned nothing (it rests 60 s)"


def test_the_conversation_fills_the_cap_less_a_tenth_kept_for_the_retry() -> None:
    from hermes.context_engines.compressor.summary import PREAMBLE

    messages = [user("start")] + [user(f"go {i:04}") if i % 2 else assistant(f"ok {i:04}") for i in range(3_000)]
    summarizer = Recorder()
    engine = Compressor(context_length=200_000, summarizer=summarizer, config={
        "compression.summary_input_tokens": 3_000, "compression.target_ratio": 0.01, "compression.tail_min_messages": 3,
    })  # fmt: skip
    engine.compress(messages)
    system, prompt, _ = summarizer.calls[0]
    used = len(system) + len(prompt)
    assert system == PREAMBLE and 12_000 - 1_200 - 60 <= used <= 12_000 - 1_200


def test_a_retry_as_good_as_the_first_summary_replaces_it_and_the_scores_are_rounded() -> None:
    from .test_fidelity import CORPUS, chat_with

    other = "## Active Task\nship the fix, retried\n## Critical Context\nnone"
    summarizer = Recorder("## Active Task\nship the fix\n## Critical Context\nnone", other)
    engine = Compressor(context_length=16_000, summarizer=summarizer, config={"compression.tail_min_messages": 3})
    out = engine.compress(chat_with("path"))
    record = engine.last_fidelity
    assert record["retried"] is True and record["summary_score"] == 0.667 and record["checked"] == 3
    note = engine.handoff_note(out)
    assert note.startswith(f"{other}\n\n## Facts kept verbatim") and CORPUS["path"][1] in note  # the retry's text, tied score
    assert record["restored"] == [f"path: {CORPUS['path'][1]}"] and record["score"] == 1.0


def test_a_score_exactly_at_the_minimum_is_not_retried() -> None:
    summarizer = Recorder()
    engine = Compressor(context_length=8_000, summarizer=summarizer, config={"compression.min_fidelity": 1.0})
    engine.compress(chat())
    assert engine.last_fidelity["score"] == 1.0 and engine.last_fidelity["retried"] is False and len(summarizer.calls) == 1


def test_masking_keeps_the_newest_requests_image_while_it_masks_around_it() -> None:
    from hermes.context_engines.masking import Masking

    from .transcripts import image_user

    request = image_user("do the big task")
    messages = [request]
    for i in range(10):
        messages += [assistant(None, call(f"c{i}", "terminal", command="ls")), result(f"c{i}", "r" * 2_000)]
    engine = Masking(context_length=64_000, config={
        "compression.tail_min_messages": 3, "compression.protect_first_n": 0, "compression.target_ratio": 0.02,
    })  # fmt: skip
    out = engine.compress(messages)
    assert engine.last_handoff is None  # masked only, nothing dropped
    assert out[0] is request and out[2]["content"] != messages[2]["content"]  # kept whole, the steps masked


def test_replace_handoff_in_an_empty_marked_message() -> None:
    from hermes.context_engines.compressor.assembly import handoff_block

    engine = Compressor(context_length=8_000)
    empty = [{"role": "user", "content": [], "marker": "handoff"}, assistant("a")]
    assert engine.replace_handoff(empty, "new") == [
        {"role": "user", "content": [{"type": "text", "text": handoff_block("new")}], "marker": "handoff"}, assistant("a"),
    ]  # fmt: skip


def test_the_conversation_keeps_at_least_1000_characters_when_the_frame_fills_the_cap() -> None:
    middle = [user(f"{i:02}" + "m" * 80) for i in range(11)]  # each renders as 89 characters: 11 × 91 = 1,001
    messages = [user("start"), *middle, assistant("a" * 8_000), user("q"), assistant("b" * 8_000)]
    summarizer = Recorder()
    summarizer.context_length = 1_000  # type: ignore[attr-defined]  # the input cap's floor: 2,000 tokens
    engine = Compressor(context_length=200_000, summarizer=summarizer,
                        config={"compression.target_ratio": 0.01, "compression.protect_first_n": 1, "compression.tail_min_messages": 3})  # fmt: skip
    engine.pre_compress_context = ["e" * 300] * 30  # plugin context fills the frame
    engine.compress(messages)
    assert engine.last_compression["summarised_messages"] == 11
    conversation = summarizer.calls[0][1].split("<conversation>\n")[1].split("\n</conversation>")[0]
    rendered = [f"[user] {m['content']}" for m in middle]
    assert conversation == "\n\n".join([rendered[0], "[… 1 messages left out to fit the summary model …]", *rendered[2:]])


def test_a_plain_text_answer_to_the_second_request_is_kept() -> None:
    summarizer = Recorder(SummaryText.of("## Active Task\nnow", "length"), "## Active Task\nnow write the docs, shorter")
    engine = Compressor(context_length=8_000, summarizer=summarizer)
    out = engine.compress(chat())
    assert engine.handoff_note(out) == "## Active Task\nnow write the docs, shorter" and engine.last_error is None


def test_a_score_exactly_at_the_minimum_gets_no_verbatim_block() -> None:
    from .test_fidelity import chat_with

    engine = Compressor(context_length=16_000, summarizer=Recorder("## Active Task\nship the fix\n## Critical Context\nnone"),
                        config={"compression.tail_min_messages": 3, "compression.min_fidelity": 2 / 3})  # fmt: skip
    out = engine.compress(chat_with("path"))
    record = engine.last_fidelity
    assert record["summary_score"] == 0.667 and record["retried"] is False and record["restored"] == []
    assert "Facts kept verbatim" not in engine.handoff_note(out)


def test_the_new_tail_starts_after_where_an_earlier_note_stood() -> None:
    from hermes.context_engines.compressor.assembly import handoff_block

    note = {"role": "user", "content": handoff_block("old"), "marker": "handoff"}
    messages = [user("q"), assistant("a"), user("q2"), assistant("a2"), note, assistant("b"), user("n")]
    sections = Compressor(context_length=200_000).cut(messages).sections
    assert sections.middle == [assistant("a2")] and sections.tail == [assistant("b"), user("n")]
