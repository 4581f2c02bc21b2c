"""The ``compressor`` engine: prune, cut, summarise, assemble (the phases live in sibling modules)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from hermes.kernel import estimate_tokens
from hermes.kernel.fidelity import Fact

from .._digest import digest
from .._messages import text_of
from .assembly import SYSTEM_NOTE
from .budget import setting, summary_budget, summary_input_cap
from .failures import NO_MODEL_COOLDOWN, failure_action
from .summary import PREAMBLE, build_prompt, redact, serialize
from .trigger import ThresholdEngine

__all__ = ["FALLBACK_NOTE", "HEADROOM", "Compressor"]

log = logging.getLogger(__name__)

_CHARS_PER_TOKEN = 4
#: ``max_tokens`` of the summary call over the budget the template states (models overshoot).
HEADROOM = 1.3
#: The system prompt's note when no summary could be written and a mechanical list stands in.
FALLBACK_NOTE = (
    "Note: earlier turns of this conversation were replaced, to save space, by a mechanical list of what they "
    "held (the summary model failed), not a summary; ask the user if something you need is missing, and work "
    "on the latest user message."
)
_CUT_OFF = "[This note was cut off by the summary model's output limit; its last sections may be missing.]"


class Compressor(ThresholdEngine):
    """The default engine: old turns become a structured handoff summary written by a model.

    Reads ``compression.threshold`` (0.50), ``compression.target_ratio`` (0.20),
    ``compression.protect_first_n`` (3), ``compression.tail_min_messages`` (20),
    ``compression.min_fidelity`` (0.85), ``compression.enabled`` and
    ``compression.summary_input_tokens``.
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

    def skip_reason(self, messages: list[dict[str, Any]]) -> str | None:
        if self.summarizer is not None and self.guard.in_cooldown():
            tokens = max(self.last_prompt_tokens, estimate_tokens(messages))
            if not self.near_overflow(tokens):
                return (
                    f"the summary model is resting after a failure ({self.guard.cooldown_left():.0f} s left; "
                    f"{self.last_error or 'no detail'}); compression waits unless the window is about to overflow"
                )
        return super().skip_reason(messages)

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
        self.fallback_used = False
        tokens = current_tokens or 0
        if self.guard.in_cooldown() and not self.near_overflow(tokens):
            tokens = max(tokens, estimate_tokens(messages))  # only then does the exact size matter
        prepared: dict[str, Any] = {}  # the serialised middle, shared by the first call and the retry
        summary = self._summarise(sections.middle, cut.previous, focus_topic, active, tokens, prepared=prepared)
        if summary is None:
            return list(messages)

        def retry(missing: list[Fact]) -> str | None:
            if self.fallback_used or self.summarizer is None:
                return None  # a mechanical list is not asked again; the verbatim block follows
            return self._summarise(
                sections.middle, cut.previous, focus_topic, active, tokens, must_keep=missing, prepared=prepared
            )

        summary, result = self.checked_assembly(cut, summary, retry)
        record = self.finish(messages, result, cut.system, note=FALLBACK_NOTE if self.fallback_used else SYSTEM_NOTE)
        self.last_compression = {
            "messages_before": len(messages),
            "messages_after": len(result),
            "tokens_before": current_tokens or record["before"],
            "estimated_tokens_before": record["before"],
            "estimated_tokens_after": record["after"],
            "summarised_messages": len(sections.middle),
            "warning": record["warning"],
            "fallback": self.fallback_used,
            "fidelity": self.last_fidelity,
        }
        return result

    # --- phase 3 with its failure rules ----------------------------------------------

    def _summarise(
        self,
        middle: Sequence[dict[str, Any]],
        previous: str | None,
        focus_topic: str | None,
        active: str | None,
        tokens: int,
        *,
        prepared: dict[str, Any],
        must_keep: Sequence[Fact] = (),
    ) -> str | None:
        """The summary text; a labelled fallback when the model may not or could not write it;
        None when the messages must stay unchanged. ``prepared`` carries the budget and the
        serialised middle from the first call to the retry."""
        if self.summarizer is None:
            self.guard.start_cooldown(NO_MODEL_COOLDOWN)
            return self._fallback(middle, previous, active, "no summary model is configured")
        if self.guard.in_cooldown():
            if not self.near_overflow(tokens):
                return None  # wait for the model rather than replace its summary with a list
            return self._fallback(middle, previous, active, "the summary model is resting after a failure and the window is nearly full")
        if "budget" not in prepared:
            prepared["budget"] = summary_budget(estimate_tokens(middle), self.context_length)
        budget = prepared["budget"]
        window = int(getattr(self.summarizer, "context_length", 0) or self.context_length)
        cap_chars = summary_input_cap(window, int(setting(self.config, "compression.summary_input_tokens", 60_000))) * _CHARS_PER_TOKEN
        pieces: dict[str, Any] = {
            "budget": budget,
            "previous": redact(previous) if previous else None,
            "focus_topic": focus_topic,
            "extra_context": [redact(t) for t in self.pre_compress_context if isinstance(t, str)],
            "active_task": redact(active) if active else None,
            "must_keep": [redact(str(f)) for f in must_keep],
            "cap_chars": cap_chars,
        }
        conversation = prepared.get("conversation")
        if conversation is None:
            # Room is kept for a retry's list of missing facts (a tenth of the cap), so the
            # conversation is serialised and redacted once for both calls.
            frame = len(build_prompt("", **{**pieces, "must_keep": ()})) + len(PREAMBLE) + cap_chars // 10
            conversation = prepared["conversation"] = redact(serialize(middle, max(1_000, cap_chars - frame)))
        prompt = build_prompt(conversation, **pieces)
        if not must_keep:
            self.last_error = None  # this attempt's own trouble is recorded below or by _call
        try:
            text = self._call(prompt, budget)
        except Exception as error:  # a ProviderError, or anything a third-party summarizer raises
            rest = self.guard.failed()
            self.last_error = f"summary call failed: {error} (the summary model rests {rest:.0f} s)"
            if must_keep:
                return None  # the first summary stands
            if failure_action(error) == "unchanged":
                log.warning("context compression skipped: %s", error)
                return None
            reason = getattr(error, "reason", type(error).__name__)
            return self._fallback(middle, previous, active, f"the summary call failed ({reason})")
        if not text:
            rest = self.guard.failed()
            self.last_error = f"the summary model returned nothing (it rests {rest:.0f} s)"
            return None if must_keep else self._fallback(middle, previous, active, "the summary model returned nothing")
        self.guard.succeeded()
        return text

    def _call(self, prompt: str, budget: int) -> str:
        """One summary call with headroom; a note cut off by the output limit is asked for once more."""
        assert self.summarizer is not None
        max_tokens = int(budget * HEADROOM)
        answer = self.summarizer(PREAMBLE, prompt, max_tokens)
        if getattr(answer, "finish_reason", None) == "length":
            log.warning("the summary hit its output limit (%d tokens); asking once more with more room", max_tokens)
            shorter = f"{prompt}\n\nYour previous note was cut off by the output limit: write it shorter, all sections."
            answer = self.summarizer(PREAMBLE, shorter, max_tokens * 2)
            if getattr(answer, "finish_reason", None) == "length":
                self.last_error = "the summary was cut off by the output limit twice; it is kept, marked as cut off"
                return f"{redact(answer or '').strip()}\n\n{_CUT_OFF}" if (answer or "").strip() else ""
        return redact(answer or "").strip()

    def _fallback(self, middle: Sequence[dict[str, Any]], previous: str | None, active: str | None, why: str) -> str:
        self.fallback_used = True
        if self.last_error is None or self.summarizer is None:
            self.last_error = f"no summary: {why}"
        title = f"[No summary: {why}. Below is a mechanical list of what the compacted messages held, not a summary.]"
        return redact(digest(middle, title=title, last_request=active, previous=previous))
