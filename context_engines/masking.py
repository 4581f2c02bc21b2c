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
from hermes.kernel.fidelity import probe

from ._digest import digest
from ._messages import text_of
from .compressor.assembly import assemble
from .compressor.trigger import ThresholdEngine

__all__ = ["DROPPED_NOTE", "MASKED_NOTE", "Masking"]

#: After masking, a list above this share of the threshold also drops its middle.
DROP_SHARE = 0.5
MASKED_NOTE = (
    "Note: to save space, older tool outputs in this conversation were shortened to one line each; "
    "nothing else was removed. Run a tool again if you need an old output in full."
)
DROPPED_NOTE = (
    "Note: to save space, earlier messages of this conversation were dropped and replaced by a mechanical "
    "digest (tools used, files touched, requests made), not a summary; work on the latest user message."
)


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
            # Masking alone was enough; nothing is dropped, and the model is told exactly that.
            result = list(cut.pruned)
            verdict = probe(cut.body, result)
            self.last_fidelity = {**verdict.as_dict(), "summary_score": round(verdict.score, 3),
                                  "summary_missing": [str(f) for f in verdict.missing], "retried": False, "restored": []}  # fmt: skip
            self.last_handoff = None
            self.finish(messages, result, cut.system, note=MASKED_NOTE)
            return result
        summary = digest(
            sections.middle,
            title="[Earlier messages were dropped to save context. What they held:]",
            last_request=text_of(cut.body[cut.newest]) if cut.newest is not None else None,
            previous=cut.previous,
        )
        _, result = self.checked_assembly(cut, summary)
        self.finish(messages, result, cut.system, note=DROPPED_NOTE)
        return result
