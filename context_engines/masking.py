"""The ``masking`` engine: no model calls, only deterministic rewriting.

Step 1 masks old tool outputs (one informative line each, images stripped,
long arguments shrunk) outside the recent tail. When that is not enough
(the list is still over half the trigger threshold), step 2 drops the middle
behind a digest of what was dropped: tools used, files touched, the last
user request. Select it with ``hermes config set context.engine masking``.
"""

from __future__ import annotations

from typing import Any

from hermes.kernel.context_engine import estimate_tokens

from ._digest import digest
from ._messages import last_index, text_of
from .compressor.trigger import ThresholdEngine
from .compressor.assembly import SYSTEM_NOTE, assemble, extract_handoff, with_system_note
from .compressor.boundaries import find_boundaries, split
from .compressor.pruning import prune

__all__ = ["Masking"]

#: After masking, a list above this share of the threshold also drops its middle.
DROP_SHARE = 0.5


class Masking(ThresholdEngine):
    """Masks old tool outputs; past the budget, replaces the middle with a digest."""

    name = "masking"

    def compress(
        self,
        messages: list[dict[str, Any]],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
    ) -> list[dict[str, Any]]:
        system = messages[0] if messages and messages[0].get("role") == "system" else None
        body, previous, floor = extract_handoff(messages[1:] if system else messages)
        bounds = find_boundaries(
            body,
            protect_first_n=0 if previous is not None else self.protect_first_n,
            tail_budget=self.tail_budget_tokens,
            min_tail_start=floor,
        )
        newest = last_index(body, "user")
        masked = prune(body, bounds.head_end, bounds.tail_start, keep={newest} if newest is not None else ())
        sections = split(masked, bounds, original=body)
        if not sections.middle:
            return list(messages)
        if previous is None and estimate_tokens(masked) <= self.threshold_tokens * DROP_SHARE:
            result = masked  # masking alone was enough; nothing is dropped
        else:
            summary = digest(
                sections.middle,
                title="[Earlier messages were dropped to save context. What they held:]",
                last_request=text_of(body[newest]) if newest is not None else None,
                previous=previous,
            )
            result = assemble(sections.head, summary, sections.tail, sections.pinned)
        if system is not None:
            result = [with_system_note(system) if result is not masked else system, *result]
        before, after = estimate_tokens(messages), estimate_tokens(result)
        self.compression_count += 1
        self.system_note = SYSTEM_NOTE
        self.last_prompt_tokens = after
        self.guard.record(before, after)
        return result
