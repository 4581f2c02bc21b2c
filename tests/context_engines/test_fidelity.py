"""Fidelity probes: a corpus of compactions whose scripted summary lost a needed fact.

For each kind of fact, the probe finds the miss, the retry (which names it) or
the "facts kept verbatim" block restores it, and the recorded score says so.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes.context_engines.compressor import Compressor
from hermes.context_engines.masking import Masking
from hermes.kernel.fidelity import Fact, facts_block, needed_facts, probe
from hermes.kernel.testing import validate_messages

from .transcripts import assistant, call, result, transcripts, user

GOOD = "## Active Task\nship the fix\n## Critical Context\nnone"

#: kind -> (where the fact is said, the fact)
CORPUS = {
    "path": ("tool", "src/hermes/parser/lexer.py"),
    "url": ("user", "https://example.org/spec/v2#tokens"),
    "identifier": ("tool", "parse_block_quote"),
    "number": ("tool", "48213"),
    "error": ("tool", "ValueError: unterminated string at line 17"),
    "constraint": ("user", "never touch the public API of the lexer module"),
}


def chat_with(kind: str) -> list[dict[str, Any]]:
    where, fact = CORPUS[kind]
    messages: list[dict[str, Any]] = [user("fix the parser"), assistant("looking"), user("go on")]
    for i in range(12):
        out = "exit code: 1\n" + f"noise line {i}\n" * 150
        messages += [assistant(None, call(f"c{i}", "terminal", command=f"pytest -k t{i}")), result(f"c{i}", out)]
        messages += [assistant(f"step {i}"), user(f"next {i}")]
    # The fact sits in the newest turns, but early enough that it is compacted away.
    said = f"remember: {fact} matters" if where == "user" else f"output mentions {fact}\n" + "pad\n" * 1_500
    recent = [user(f"please check this: {said}")] if where == "user" else [
        assistant(None, call("f1", "terminal", command="run")), result("f1", said)]  # fmt: skip
    filler = []
    for i in range(12):
        filler += [assistant(None, call(f"g{i}", "terminal", command="ls")), result(f"g{i}", "ok\n" * 400)]
    return messages + recent + [assistant("noted")] + [user("keep going with the fix")] + filler + [assistant("done"), user("ship the fix")]


class Scripted:
    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []

    def __call__(self, system: str, prompt: str, max_tokens: int) -> str:
        self.prompts.append(prompt)
        return self.answers.pop(0) if self.answers else GOOD


def _engine(summarizer: Scripted) -> Compressor:
    return Compressor(context_length=16_000, summarizer=summarizer, config={"compression.tail_min_messages": 3})


@pytest.mark.parametrize("kind", sorted(CORPUS))
def test_the_probe_finds_the_miss_and_the_retry_restores_it(kind: str) -> None:
    fact = CORPUS[kind][1]
    summarizer = Scripted(GOOD, f"{GOOD}\n- {fact}")
    engine = _engine(summarizer)
    messages = chat_with(kind)
    assert Fact(kind, fact) in needed_facts(messages) or kind == "constraint"
    out = engine.compress(messages)
    validate_messages(out)
    record = engine.last_fidelity
    assert record is not None and any(fact[:40] in m for m in record["summary_missing"])  # found every time
    assert record["retried"] and len(summarizer.prompts) == 2
    assert fact in summarizer.prompts[1].split("lost the facts below", 1)[1]  # the retry names it
    assert not any(fact[:40] in m for m in record["missing"]) and record["score"] > record["summary_score"]
    assert record["restored"] == [] and fact in engine.handoff_note(out)


@pytest.mark.parametrize("kind", sorted(CORPUS))
def test_a_retry_that_still_misses_it_gets_the_verbatim_block(kind: str) -> None:
    fact = CORPUS[kind][1]
    engine = _engine(Scripted(GOOD, GOOD))
    out = engine.compress(chat_with(kind))
    record = engine.last_fidelity
    assert record["retried"] and any(fact[:40] in r for r in record["restored"])
    note = engine.handoff_note(out)
    assert "## Facts kept verbatim" in note and fact in note
    assert record["score"] == 1.0 and record["missing"] == []


def test_a_failed_retry_keeps_the_first_summary_and_still_restores_the_facts() -> None:
    from hermes.kernel import ProviderError

    answers: list[Any] = [GOOD, ProviderError("rate_limit", "slow")]

    def summarizer(system: str, prompt: str, max_tokens: int) -> str:
        answer = answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    engine = Compressor(context_length=16_000, summarizer=summarizer, config={"compression.tail_min_messages": 3})
    out = engine.compress(chat_with("path"))
    assert engine.handoff_note(out).startswith("## Active Task\nship the fix")
    assert engine.last_fidelity["restored"] and engine.last_fidelity["score"] == 1.0


def test_no_retry_above_the_minimum() -> None:
    summarizer = Scripted(GOOD)
    engine = Compressor(context_length=16_000, summarizer=summarizer,
                        config={"compression.tail_min_messages": 3, "compression.min_fidelity": 0.0})  # fmt: skip
    engine.compress(chat_with("path"))
    assert len(summarizer.prompts) == 1 and not engine.last_fidelity["retried"]
    assert engine.last_fidelity["score"] < 1.0 and engine.last_fidelity["missing"]  # the honest score is kept


def test_masking_restores_missed_facts_verbatim_too() -> None:
    engine = Masking(context_length=16_000, config={"compression.tail_min_messages": 3})
    out = engine.compress(chat_with("identifier"))
    assert engine.last_fidelity is not None
    note = engine.handoff_note(out)
    assert note is None or engine.last_fidelity["score"] >= engine.min_fidelity or "parse_block_quote" in note


def test_the_newest_request_and_constraints_count() -> None:
    before = [user("always use tabs in src/app.py"), assistant("ok"), user("now fix bug_4711 in the lexer")]
    facts = needed_facts(before)
    assert Fact("request", "now fix bug_4711 in the lexer") in facts
    assert Fact("constraint", "always use tabs in src/app.py") in facts
    assert Fact("path", "src/app.py") in facts and Fact("identifier", "bug_4711") in facts
    kept = probe(before, before)
    assert kept.score == 1.0 and kept.missing == []
    lost = probe(before, [user("now fix bug_4711 in the lexer")])
    assert Fact("path", "src/app.py") in lost.missing and 0 < lost.score < 1


def test_images_are_never_scanned() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "QUJD_ZGVm/" * 50_000}}
    facts = needed_facts([{"role": "user", "content": [{"type": "text", "text": "look"}, image]}])
    assert all("QUJD" not in f.text for f in facts)


def test_facts_block_is_short() -> None:
    block = facts_block([Fact("number", str(10**6 + i)) for i in range(2_000)])
    assert len(block) <= 4_100 and block.startswith("## Facts kept verbatim")


@settings(max_examples=40, deadline=None)
@given(transcripts())
def test_the_final_score_never_falls_below_the_summary_score(messages: list[dict[str, Any]]) -> None:
    engine = Compressor(context_length=8_000, summarizer=Scripted("## Active Task\nnone"))
    out = engine.compress(messages)
    validate_messages(out)
    record = engine.last_fidelity
    if out != messages and record is not None:
        assert 0.0 <= record["summary_score"] <= record["score"] <= 1.0
        assert record["score"] >= engine.min_fidelity or record["restored"]
