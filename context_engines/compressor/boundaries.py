"""Phase 2: where the protected head ends, what is compressed, and what stays verbatim.

Cuts fall only before a message that is not a tool result, so an
assistant's tool calls and their results are never separated, and an open
tool batch at the end (calls still waiting for results) stays in the tail.

The user's newest request is never compressed. When it is older than the
tail (one long task of many tool steps), it is *pinned*: kept verbatim as
its own message right before the tail while the steps around it are
summarised. Otherwise a single long turn could never be compressed at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .._messages import group_starts, last_index, message_tokens

__all__ = ["MIN_TAIL", "MUST_KEEP_LIMIT", "SOFT_CEILING", "Boundaries", "Sections", "find_boundaries", "split"]

MIN_TAIL = 3
SOFT_CEILING = 1.5
#: The newest assistant text joins the tail unless that makes the tail this many budgets long.
MUST_KEEP_LIMIT = 3.0


@dataclass(frozen=True)
class Boundaries:
    """``messages[:head_end]`` head, ``[head_end:tail_start]`` to compress, ``[tail_start:]`` tail."""

    head_end: int
    tail_start: int

    @property
    def empty(self) -> bool:
        return self.tail_start <= self.head_end


@dataclass(frozen=True)
class Sections:
    """The parts an engine assembles: head, the messages to compress, the pinned request, the tail."""

    head: list[dict[str, Any]] = field(default_factory=list)
    middle: list[dict[str, Any]] = field(default_factory=list)
    pinned: dict[str, Any] | None = None
    tail: list[dict[str, Any]] = field(default_factory=list)


def find_boundaries(
    messages: Sequence[dict[str, Any]],
    *,
    protect_first_n: int,
    tail_budget: int,
    min_tail: int = MIN_TAIL,
    min_tail_start: int = 0,
) -> Boundaries:
    """Head: the first ``protect_first_n`` messages (grown to a cut point). Tail: walked back
    by ``tail_budget`` tokens (one group may overshoot up to 1.5×), at least ``min_tail``
    messages (3 when those would be over three budgets long), holding the newest assistant message with text (unless that would make it
    three budgets long), never starting with a newest user request that ends the list, and
    never before ``min_tail_start``."""
    total = len(messages)
    starts = group_starts(messages)
    head_end = 0
    if protect_first_n > 0:
        head_end = next((s for s in starts if s >= protect_first_n), total)

    if min_tail > MIN_TAIL and sum(message_tokens(m) for m in messages[-min_tail:]) > tail_budget * MUST_KEEP_LIMIT:
        # The message floor is a floor for ordinary turns; a few huge messages near the
        # window's end must still leave something to compress.
        min_tail = MIN_TAIL
    tail_start = total
    used = 0
    for start in reversed(starts):
        if start < head_end:
            break
        group = sum(message_tokens(m) for m in messages[start:tail_start])
        kept = total - tail_start
        if kept >= min_tail and (used >= tail_budget or used + group > tail_budget * SOFT_CEILING):
            break
        used += group
        tail_start = start
    answer = last_index(messages, "assistant", with_text=True)
    if answer is not None and head_end <= answer < tail_start:
        extra = sum(message_tokens(m) for m in messages[answer:tail_start])
        if used + extra <= tail_budget * MUST_KEEP_LIMIT:
            tail_start = answer
    newest_user = last_index(messages, "user")
    if newest_user == total - 1 and tail_start >= newest_user > head_end:
        # A request with nothing after it cannot be pinned before a tail: the group before it joins.
        tail_start = max((s for s in starts if s < newest_user), default=head_end)
    # Where an earlier handoff was taken out, the new one goes: the tail starts after it.
    return Boundaries(head_end, max(tail_start, head_end, min(min_tail_start, total)))


def split(
    messages: Sequence[dict[str, Any]], bounds: Boundaries, original: Sequence[dict[str, Any]] | None = None
) -> Sections:
    """The sections of ``messages`` (pruned or not); the newest user request is pinned, taken from
    ``original`` as it was, when it would otherwise be compressed or would open the tail (a
    summary is never merged into it)."""
    head = list(messages[: bounds.head_end])
    newest = last_index(messages, "user")
    if newest is not None and bounds.head_end <= newest <= bounds.tail_start and newest < len(messages) - 1:
        middle = [m for i, m in enumerate(messages[bounds.head_end : bounds.tail_start], bounds.head_end) if i != newest]
        tail = list(messages[max(bounds.tail_start, newest + 1) :])
        return Sections(head, middle, (original or messages)[newest], tail)
    return Sections(head, list(messages[bounds.head_end : bounds.tail_start]), None, list(messages[bounds.tail_start :]))
