"""The ``compressor`` engine: prune, cut, summarise, assemble (the phases live in sibling modules)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from hermes.kernel.context_engine import estimate_tokens

from .._digest import digest
from .._messages import last_index, text_of
from .trigger import ThresholdEngine
from .assembly import SYSTEM_NOTE, assemble, extract_handoff, with_system_note
from .boundaries import find_boundaries, split
from .budget import setting, summary_budget, summary_input_cap
from .failures import NO_MODEL_COOLDOWN, TRANSIENT_COOLDOWN, failure_action
from .pruning import prune
from .summary import PREAMBLE, build_prompt, redact, serialize

__all__ = ["Compressor"]

log = logging.getLogger(__name__)

_CHARS_PER_TOKEN = 4


class Compressor(ThresholdEngine):
    """The default engine: old turns become a structured handoff summary written by a model.

    Reads ``compression.threshold`` (0.50), ``compression.target_ratio`` (0.20),
    ``compression.protect_first_n`` (3) and ``compression.summary_input_tokens``.
    """

    name = "compressor"

    def __init__(self, **kwargs: Any) -> None:
        self.last_compression: dict[str, Any] = {}
        self.last_error: str | None = None
        super().__init__(**kwargs)

    def on_session_reset(self) -> None:
        super().on_session_reset()
        self.last_compression = {}
        self.last_error = None

    def get_status(self) -> dict[str, Any]:
        return {
            **super().get_status(),
            "summary_cooldown_s": round(self.guard.cooldown_left(), 1),
            "last_error": self.last_error,
            "last_compression": dict(self.last_compression),
        }

    # --- compress --------------------------------------------------------------------

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
        pruned = prune(body, bounds.head_end, bounds.tail_start, keep={newest} if newest is not None else ())
        sections = split(pruned, bounds, original=body)
        if not sections.middle:
            return list(messages)  # nothing older than what must stay: leave it alone
        active = text_of(body[newest]) if newest is not None else None
        summary = self._summarise(sections.middle, previous, focus_topic, active)
        if summary is None:
            return list(messages)
        result = assemble(sections.head, summary, sections.tail, sections.pinned)
        if system is not None:
            result.insert(0, with_system_note(system))
        before, after = estimate_tokens(messages), estimate_tokens(result)
        self.compression_count += 1
        self.system_note = SYSTEM_NOTE
        self.last_prompt_tokens = after  # until the next response reports the real number
        warning = self.guard.record(before, after)
        self.last_compression = {
            "messages_before": len(messages),
            "messages_after": len(result),
            "tokens_before": current_tokens or before,
            "estimated_tokens_before": before,
            "estimated_tokens_after": after,
            "summarised_messages": len(sections.middle),
            "warning": warning,
        }
        return result

    # --- phase 3 with its failure rules ----------------------------------------------

    def _summarise(
        self, middle: Sequence[dict[str, Any]], previous: str | None, focus_topic: str | None, active: str | None
    ) -> str | None:
        """The summary text; a labelled fallback when the model may not or could not write it;
        None when the messages must stay unchanged."""
        if self.summarizer is None:
            self.guard.start_cooldown(NO_MODEL_COOLDOWN)
            return self._fallback(middle, previous, active, "no summary model is configured")
        if self.guard.in_cooldown():
            return self._fallback(middle, previous, active, "the summary model is resting after a failure")
        budget = summary_budget(estimate_tokens(middle), self.context_length)
        cap = summary_input_cap(self.context_length, int(setting(self.config, "compression.summary_input_tokens", 60_000)))
        prompt = build_prompt(
            redact(serialize(middle, cap * _CHARS_PER_TOKEN)),
            budget=budget,
            previous=previous,
            focus_topic=focus_topic,
            extra_context=[redact(t) for t in self.pre_compress_context if isinstance(t, str)],
            active_task=redact(active) if active else None,
        )
        try:
            text = self.summarizer(PREAMBLE, prompt, budget)
        except Exception as error:  # a ProviderError, or anything a third-party summarizer raises
            self.last_error = f"summary call failed: {error}"
            if failure_action(error) == "unchanged":
                log.warning("context compression skipped: %s", error)
                return None
            self.guard.start_cooldown(TRANSIENT_COOLDOWN)
            reason = getattr(error, "reason", type(error).__name__)
            return self._fallback(middle, previous, active, f"the summary call failed ({reason})")
        text = redact(text or "").strip()
        if not text:
            self.guard.start_cooldown(TRANSIENT_COOLDOWN)
            return self._fallback(middle, previous, active, "the summary model returned nothing")
        self.last_error = None
        return text

    def _fallback(self, middle: Sequence[dict[str, Any]], previous: str | None, active: str | None, why: str) -> str:
        title = f"[No summary: {why}. Below is a mechanical list of what the compacted messages held, not a summary.]"
        return redact(digest(middle, title=title, last_request=active, previous=previous))
