"""The ``compressor`` engine: prune, cut, summarise, assemble (the phases live in sibling modules)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from hermes.kernel import estimate_tokens

from .._digest import digest
from .._messages import text_of
from .assembly import assemble
from .budget import setting, summary_budget, summary_input_cap
from .failures import NO_MODEL_COOLDOWN, TRANSIENT_COOLDOWN, failure_action
from .summary import PREAMBLE, build_prompt, redact, serialize
from .trigger import ThresholdEngine

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
        cut = self.cut(messages)
        sections = cut.sections
        if not sections.middle:
            return list(messages)  # nothing older than what must stay: leave it alone
        active = text_of(cut.body[cut.newest]) if cut.newest is not None else None
        summary = self._summarise(sections.middle, cut.previous, focus_topic, active)
        if summary is None:
            return list(messages)
        result = assemble(sections.head, summary, sections.tail, sections.pinned)
        record = self.finish(messages, result, cut.system)
        self.last_compression = {
            "messages_before": len(messages),
            "messages_after": len(result),
            "tokens_before": current_tokens or record["before"],
            "estimated_tokens_before": record["before"],
            "estimated_tokens_after": record["after"],
            "summarised_messages": len(sections.middle),
            "warning": record["warning"],
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
