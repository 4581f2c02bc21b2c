"""Phase 2 at its edges: messages of exact token sizes put each budget rule on its boundary
(``<`` against ``<=``), so a one-line bug moves the cut (mutation testing, issue 20)."""

from __future__ import annotations

from typing import Any

from hermes.context_engines._messages import message_tokens
from hermes.context_engines.compressor.boundaries import Boundaries, find_boundaries, split

from .transcripts import assistant, result, user


def sized(role: str, tokens: int) -> dict[str, Any]:
    """A message of exactly ``tokens`` estimated tokens (characters / 4 with 16 for framing, plus 1)."""
    message = {"role": role, "content": "x" * (4 * tokens - 20)}
    assert message_tokens(message) == tokens
    return message


def test_the_head_is_exactly_the_first_n_messages_at_a_cut_point() -> None:
    chat = [user("q"), assistant("a"), user("q2"), assistant("a2"), user("q3"), assistant("a3")]
    assert find_boundaries(chat, protect_first_n=1, tail_budget=1).head_end == 1
    assert find_boundaries(chat, protect_first_n=2, tail_budget=1).head_end == 2
    orphan_first = [result("x", "r"), user("q"), assistant("a")]
    assert find_boundaries(orphan_first, protect_first_n=0, tail_budget=1).head_end == 0
    assert find_boundaries(chat, protect_first_n=10, tail_budget=1) == Boundaries(6, 6)  # all head


def test_a_conversation_that_is_all_tail_starts_it_at_zero() -> None:
    assert find_boundaries([assistant("a"), assistant("b")], protect_first_n=0, tail_budget=10_000) == Boundaries(0, 0)


def test_the_budget_stops_the_tail_exactly_when_it_is_reached() -> None:
    reached = [sized("assistant", 50), sized("assistant", 50), sized("assistant", 100)]
    assert find_boundaries(reached, protect_first_n=0, tail_budget=100, min_tail=1).tail_start == 2
    # 90 used, then a 60-token group: 150 is exactly 1.5 budgets, still allowed.
    ceiling = [sized("assistant", 50), sized("assistant", 60), sized("assistant", 90)]
    assert find_boundaries(ceiling, protect_first_n=0, tail_budget=100, min_tail=1).tail_start == 1
    over = [sized("assistant", 50), sized("assistant", 61), sized("assistant", 90)]
    assert find_boundaries(over, protect_first_n=0, tail_budget=100, min_tail=1).tail_start == 2


def test_the_message_floor_gives_way_only_above_three_budgets() -> None:
    exactly = [sized("assistant", 75)] * 6  # the last four are exactly three budgets: the floor of 4 holds
    assert find_boundaries(exactly, protect_first_n=0, tail_budget=100, min_tail=4).tail_start == 2
    above = [sized("assistant", 76)] * 6
    assert find_boundaries(above, protect_first_n=0, tail_budget=100, min_tail=4).tail_start == 3


def test_the_newest_answer_joins_the_tail_up_to_exactly_three_budgets() -> None:
    # The tail stops at index 2 (150 tokens); the answer at index 0 adds 150: exactly 300 is allowed.
    messages = [sized("assistant", 100), sized("user", 50), sized("user", 145), assistant(None)]
    assert message_tokens(messages[-1]) == 5
    assert find_boundaries(messages, protect_first_n=0, tail_budget=100, min_tail=1).tail_start == 0
    messages[1] = sized("user", 51)
    assert find_boundaries(messages, protect_first_n=0, tail_budget=100, min_tail=1).tail_start == 2
    # An answer that is the head's first message after it (head_end == answer) joins too.
    with_head = [user("q"), *messages[:1], sized("user", 50), sized("user", 145), assistant(None)]
    assert find_boundaries(with_head, protect_first_n=1, tail_budget=100, min_tail=1) == Boundaries(1, 1)


def test_a_final_request_right_after_the_head_stays_after_it() -> None:
    messages = [user("q"), assistant("a"), user("now")]
    assert find_boundaries(messages, protect_first_n=2, tail_budget=0, min_tail=0) == Boundaries(2, 3)
    assert find_boundaries(messages, protect_first_n=1, tail_budget=0, min_tail=0) == Boundaries(1, 1)
    # Nothing but an orphaned result before the request: no earlier cut point, the tail starts at the head.
    assert find_boundaries([result("x", "r"), user("now")], protect_first_n=0, tail_budget=1) == Boundaries(0, 0)


def test_split_without_a_request_and_with_one_at_the_end() -> None:
    plain = [assistant("a"), assistant("b"), assistant("c")]
    sections = split(plain, Boundaries(1, 2))
    assert (sections.head, sections.middle, sections.pinned, sections.tail) == ([plain[0]], [plain[1]], None, [plain[2]])
    ending = [user("q"), assistant("a"), user("now")]
    sections = split(ending, Boundaries(0, 2))
    assert (sections.middle, sections.pinned, sections.tail) == (ending[:2], None, ending[2:])
    inside = [user("q"), user("task"), assistant("a"), assistant("b")]
    pruned = [dict(m) for m in inside]
    sections = split(pruned, Boundaries(1, 3), original=inside)
    assert sections.pinned is inside[1] and sections.middle == [pruned[2]] and sections.tail == [pruned[3]]
    assert split(inside, Boundaries(1, 3)).pinned is inside[1]
    second_last = [user("q"), assistant("a"), user("now"), assistant("b")]
    sections = split(second_last, Boundaries(1, 2))
    assert (sections.middle, sections.pinned, sections.tail) == ([second_last[1]], second_last[2], [second_last[3]])
