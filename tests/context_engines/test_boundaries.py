"""Phase 2: head and tail boundaries."""

from __future__ import annotations

from hermes.context_engines.compressor.boundaries import Boundaries, find_boundaries, split

from .transcripts import assistant, call, result, user


def _chat(turns: int, size: int = 400) -> list[dict]:
    messages = []
    for i in range(turns):
        messages += [user(f"q{i} " + "u" * size), assistant(f"a{i} " + "a" * size)]
    return messages


def test_head_keeps_first_n_and_grows_to_keep_a_tool_batch_whole() -> None:
    messages = [user("q"), assistant("a"), assistant(None, call("x", "t")), result("x", "r"), user("q2"), assistant("a2")]
    bounds = find_boundaries(messages, protect_first_n=3, tail_budget=1)
    assert bounds.head_end == 4  # the third message's result joins the head
    assert find_boundaries(messages, protect_first_n=0, tail_budget=1).head_end == 0


def test_tail_walks_back_by_budget_with_at_least_three_messages() -> None:
    messages = _chat(20)  # about 105 tokens each
    tiny = find_boundaries(messages, protect_first_n=3, tail_budget=1)
    assert len(messages) - tiny.tail_start >= 3
    big = find_boundaries(messages, protect_first_n=3, tail_budget=1_000)
    kept = len(messages) - big.tail_start
    assert 9 <= kept <= 15  # budget reached, never beyond the 1.5× soft ceiling


def test_soft_ceiling_admits_an_overshooting_group_only_up_to_one_and_a_half_budgets() -> None:
    messages = [user("q"), assistant("a"), user("q1"), assistant(None, call("x", "t")), result("x", "r" * 2_000),
                assistant("seen"), user("next"), assistant("ok")]  # fmt: skip
    without = find_boundaries(messages, protect_first_n=1, tail_budget=100)
    assert without.tail_start == 5  # the 500-token batch would pass 1.5 × 100
    with_it = find_boundaries(messages, protect_first_n=1, tail_budget=400)
    assert with_it.tail_start == 3  # 500 + the rest fits under 1.5 × 400
    assert messages[with_it.tail_start]["role"] != "tool"


def test_newest_assistant_text_joins_the_tail_unless_that_triples_it() -> None:
    messages = _chat(6) + [user("now"), assistant(None, call("c", "t")), result("c", "r" * 1_200), assistant(None, call("d", "t")), result("d", "r" * 1_200)]
    near = find_boundaries(messages, protect_first_n=3, tail_budget=500)
    assert near.tail_start == 11  # the answer before "now" (index 11) joins: 3 budgets allow it
    far = find_boundaries(messages, protect_first_n=3, tail_budget=200)
    assert far.tail_start > 11  # too far back: it is summarised instead


def test_a_long_single_task_pins_its_request_before_the_tail() -> None:
    messages = [user("do the big task")]
    for i in range(10):
        messages += [assistant(None, call(f"c{i}", "t")), result(f"c{i}", "r" * 2_000)]
    bounds = find_boundaries(messages, protect_first_n=0, tail_budget=600)
    assert bounds.tail_start > 1
    sections = split(messages, bounds)
    assert sections.pinned is messages[0] and sections.middle == messages[1 : bounds.tail_start]
    assert sections.tail == messages[bounds.tail_start :] and sections.head == []


def test_a_request_that_opens_the_tail_is_pinned_so_no_summary_merges_into_it() -> None:
    # A second compression with an empty head: the summary goes first, so a request left as the
    # tail's first message would get the handoff merged into it.
    messages = [user("[summary of earlier work]"), assistant("a"), user("old"), user("now fix the bug"),
                assistant(None, call("c", "t")), result("c", "r")]  # fmt: skip
    sections = split(messages, Boundaries(0, 3))
    assert sections.pinned is messages[3]
    assert sections.middle == messages[:3] and sections.tail == messages[4:] and sections.head == []


def test_a_request_that_ends_the_list_brings_the_group_before_it() -> None:
    messages = _chat(6) + [user("now " + "u" * 20_000)]
    bounds = find_boundaries(messages, protect_first_n=3, tail_budget=10, min_tail=1)
    assert bounds.tail_start == 11 and split(messages, bounds).pinned is None
    assert find_boundaries(messages, protect_first_n=3, tail_budget=10, min_tail_start=12).tail_start == 12


def test_open_tool_batch_at_the_end_stays_whole_in_the_tail() -> None:
    messages = _chat(5) + [assistant(None, call("a", "t"), call("b", "t")), result("a", "r" * 8_000)]
    bounds = find_boundaries(messages, protect_first_n=3, tail_budget=10)
    assert bounds.tail_start <= 10 and messages[bounds.tail_start]["role"] != "tool"


def test_a_short_conversation_has_nothing_to_compress() -> None:
    assert find_boundaries(_chat(2), protect_first_n=3, tail_budget=10).empty
