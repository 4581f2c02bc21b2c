"""One test per defect of issue 15 that lives in an engine (each fails on the code before it)."""

from __future__ import annotations

from typing import Any

from hermes.context_engines.compressor import Compressor
from hermes.context_engines.compressor.engine import FALLBACK_NOTE
from hermes.context_engines.compressor.assembly import SYSTEM_NOTE
from hermes.context_engines.masking import DROPPED_NOTE, MASKED_NOTE, Masking
from hermes.kernel import ProviderError
from hermes.kernel.agent.summarizer import SummaryText
from hermes.kernel.context_engine import IMAGE_TOKENS, estimate_tokens
from hermes.kernel.testing import validate_messages

from .transcripts import assistant, call, result, user


class Recorder:
    def __init__(self, *answers: Any, context_length: int | None = None) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, str, int]] = []
        if context_length is not None:
            self.context_length = context_length

    def __call__(self, system: str, prompt: str, max_tokens: int) -> str:
        self.calls.append((system, prompt, max_tokens))
        answer = self.answers.pop(0) if self.answers else "## Active Task\nnow write the docs"
        if isinstance(answer, BaseException):
            raise answer
        return answer


def chat(turns: int = 14, output_lines: int = 200) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [user("build the parser")]
    for i in range(turns):
        messages += [
            assistant(None, call(f"c{i}", "terminal", command=f"pytest -k t{i}")),
            result(f"c{i}", "exit code: 1\n" + f"failure {i}\n" * output_lines),
            assistant(f"test {i} fails; fixing"),
            user(f"continue with step {i}"),
        ]
    return messages + [assistant("ok"), user("now write the docs")]


def clocked(engine: Compressor) -> list[float]:
    now = [1_000.0]
    engine.guard.clock = lambda: now[0]
    return now


def test_a_resting_summary_model_defers_compression_until_the_window_would_overflow() -> None:
    summarizer = Recorder(ProviderError("rate_limit", "slow"))
    engine = Compressor(context_length=8_000, summarizer=summarizer)
    clocked(engine)
    first = engine.compress(chat(14, 50))
    assert "[No summary:" in engine.handoff_note(first)
    messages = chat(14, 50)
    assert engine.compress(messages, current_tokens=5_000) == messages  # waits: no digest instead of a summary
    assert len(summarizer.calls) == 1 and "resting" in engine.skip_reason(messages)
    rescued = engine.compress(messages, current_tokens=7_900)  # about to overflow: a labelled fallback
    assert rescued != messages and "resting after a failure and the window is nearly full" in engine.handoff_note(rescued)
    assert len(summarizer.calls) == 1


def test_the_whole_summary_request_is_capped_by_the_summary_models_window() -> None:
    pinned = "please do this: " + "x" * 407_000  # a huge newest request
    messages = chat()[:-1] + [user(pinned)] + [
        assistant(None, call(f"d{i}", "terminal", command="ls")) if k == 0 else result(f"d{i}", "ok\n" * 300)
        for i in range(12) for k in range(2)
    ]  # fmt: skip
    summarizer = Recorder(context_length=16_000)  # a small summary model; the main window is 200,000
    engine = Compressor(context_length=200_000, summarizer=summarizer, config={"compression.tail_min_messages": 3})
    engine.compress(messages)
    system, prompt, _ = summarizer.calls[0]
    assert len(system) + len(prompt) <= int(16_000 * 0.60) * 4 + 200
    assert "chars omitted" in prompt and "please do this" in prompt


def test_max_tokens_has_headroom_and_a_cut_off_note_is_asked_again() -> None:
    summarizer = Recorder(SummaryText.of("## Active Task\nnow write", "length"), SummaryText.of("## Active Task\nnow write the docs", "stop"))
    engine = Compressor(context_length=8_000, summarizer=summarizer)
    out = engine.compress(chat())
    assert [c[2] for c in summarizer.calls] == [2_600, 5_200]  # 1.3 x the 2,000-token budget, then twice that
    assert "write it shorter" in summarizer.calls[1][1]
    assert engine.handoff_note(out).startswith("## Active Task\nnow write the docs")


def test_a_note_cut_off_twice_is_kept_but_labelled() -> None:
    cut = SummaryText.of("## Active Task\nnow wr", "length")
    engine = Compressor(context_length=8_000, summarizer=Recorder(cut, cut))
    out = engine.compress(chat())
    assert "cut off by the summary model's output limit" in engine.handoff_note(out)
    assert "cut off" in engine.get_status()["last_error"]


def test_masking_tells_the_model_what_it_really_did() -> None:
    light = Masking(context_length=64_000)
    messages = [{"role": "system", "content": "You are hermes."}, *chat(40, 300)]
    out = light.compress(messages)
    assert not any(m.get("marker") == "handoff" for m in out)  # only masked
    assert light.system_note == MASKED_NOTE and "handoff summary" not in out[0]["content"]
    heavy = Masking(context_length=8_000)
    heavy.compress(chat(30, 300))
    assert heavy.system_note == DROPPED_NOTE and "not a summary" in DROPPED_NOTE
    assert SYSTEM_NOTE not in (MASKED_NOTE, DROPPED_NOTE)


def test_an_empty_summary_sets_last_error_and_flags_the_fallback() -> None:
    engine = Compressor(context_length=8_000, summarizer=Recorder(""))
    out = engine.compress(chat())
    validate_messages(out)
    status = engine.get_status()
    assert status["last_error"] and "returned nothing" in status["last_error"]
    assert status["last_compression"]["fallback"] is True
    assert engine.system_note == FALLBACK_NOTE and "not a summary" in FALLBACK_NOTE  # the prompt says so too


def test_images_count_as_a_fixed_cost_not_their_base64_length() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 1_000_000}}
    message = {"role": "user", "content": [{"type": "text", "text": "what is this?"}, image]}
    assert IMAGE_TOKENS <= estimate_tokens([message]) <= IMAGE_TOKENS + 30
    anthropic = {"role": "user", "content": [{"type": "image", "source": {"type": "base64", "data": "B" * 500_000}}]}
    assert estimate_tokens([anthropic]) <= IMAGE_TOKENS + 30


def test_the_head_stays_protected_after_the_first_summary() -> None:
    engine = Compressor(context_length=8_000, summarizer=Recorder())
    first = engine.compress(chat())
    second = engine.compress(first + [assistant("docs drafted")] + chat()[1:])
    assert second[0] == user("build the parser")


def test_the_tail_floor_comes_from_config_and_defaults_to_20() -> None:
    messages = chat(14, 200)  # 20 messages fit in three tail budgets: the floor holds
    default = Compressor(context_length=8_000, summarizer=Recorder())
    out = default.compress(messages)
    kept_verbatim = len(out) - 1 - next(i for i, m in enumerate(out) if m.get("marker") == "handoff")
    assert kept_verbatim >= 20
    small = Compressor(context_length=8_000, summarizer=Recorder(), config={"compression.tail_min_messages": 3})
    assert len(small.compress(messages)) < len(out)
    huge = chat(4, 2_000)  # a few huge messages: the floor gives way so something can be compressed
    assert default.skip_reason(huge) is None


def test_compression_can_be_turned_off() -> None:
    engine = Compressor(context_length=8_000, summarizer=Recorder(), config={"compression.enabled": False})
    assert not engine.should_compress(prompt_tokens=10**6)
    assert not engine.should_compress_preflight(chat(40, 400))


def test_nothing_to_compress_is_said_before_any_hook() -> None:
    engine = Compressor(context_length=128_000, summarizer=Recorder())
    short = chat(3, 5)
    reason = engine.skip_reason(short)
    assert reason is not None and "nothing to compress yet" in reason and "recent tail" in reason
    assert engine.skip_reason(chat(40, 2_000)) is None
