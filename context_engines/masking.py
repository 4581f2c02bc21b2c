"""The ``masking`` engine: no model calls, only deterministic rewriting.

Step 1 masks old tool outputs (one informative line each, images stripped,
long arguments shrunk) outside the recent tail. When that is not enough
(the list is still over half the trigger threshold), step 2 drops the middle
behind a digest of what was dropped: tools used, files touched, the last
user request. Select it with ``hermes config set context.engine masking``.
"""

from __future__ import annotations

from typing import Any

from hermes.kernel import estimate_tokens

from ._digest import digest
from ._messages import text_of
from .compressor.assembly import assemble
from .compressor.trigger import ThresholdEngine

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
        cut = self.cut(messages)
        sections = cut.sections
        if not sections.middle:
            return list(messages)
        if cut.previous is None and estimate_tokens(cut.pruned) <= self.threshold_tokens * DROP_SHARE:
            result, noted = list(cut.pruned), False  # masking alone was enough; nothing is dropped
        else:
            summary = digest(
                sections.middle,
                title="[Earlier messages were dropped to save context. What they held:]",
                last_request=text_of(cut.body[cut.newest]) if cut.newest is not None else None,
                previous=cut.previous,
            )
            result, noted = assemble(sections.head, summary, sections.tail, sections.pinned), True
        self.finish(messages, result, cut.system, noted=noted)
        return result
