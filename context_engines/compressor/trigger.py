"""What both built-in engines share: the trigger (a share of the window, reported prompt tokens
only), the anti-thrashing guard, the cut into head, middle and tail, the fidelity probe with its
"facts kept verbatim" block, and the handoff note as the kernel reads and edits it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hermes.kernel import ContextEngine, estimate_tokens
from hermes.kernel.context_engine import HANDOFF_MARKER, MARKER_KEY
from hermes.kernel.fidelity import Fact, facts_block, needed_facts, probe

from .._messages import last_index
from .assembly import (
    HANDOFF_PREFIX_INLINE,
    SYSTEM_NOTE,
    _content_with_block,
    _split_block,
    assemble,
    extract_handoff,
    handoff_block,
    with_system_note,
)
from .boundaries import MIN_TAIL, Sections, find_boundaries, split
from .budget import setting, tail_budget, threshold_tokens
from .failures import OVERFLOW_SHARE, CompressionGuard
from .pruning import prune

#: ``compression.min_fidelity`` when unset: below it the summary is asked again, then facts kept verbatim.
MIN_FIDELITY = 0.85
#: ``compression.tail_min_messages`` when unset: the seeds keep the newest 20 messages verbatim.
TAIL_MIN_MESSAGES = 20

__all__ = ["Cut", "ThresholdEngine"]


@dataclass
class Cut:
    """A message list split for compression: the pruned sections plus what the engines need."""

    system: dict[str, Any] | None
    body: list[dict[str, Any]]
    previous: str | None  # the handoff of an earlier compression, if any
    newest: int | None  # index in ``body`` of the newest user message
    pruned: list[dict[str, Any]]  # ``body`` after phase 1
    sections: Sections


class ThresholdEngine(ContextEngine):
    """Compress at ``compression.threshold`` of the window; keep ``target_ratio`` of it as the tail."""

    def __init__(self, **kwargs: Any) -> None:
        self.guard = CompressionGuard()
        #: The latest compression's probe: ``score``, ``checked``, ``missing`` and how misses were handled.
        self.last_fidelity: dict[str, Any] | None = None
        self.last_handoff: str | None = None
        super().__init__(**kwargs)

    def update_model(self, model: str, context_length: int) -> None:
        self.model = model
        self.context_length = context_length
        self.threshold_tokens = threshold_tokens(context_length, float(setting(self.config, "compression.threshold", 0.50)))
        ratio = float(setting(self.config, "compression.target_ratio", 0.20))
        self.tail_budget_tokens = tail_budget(self.threshold_tokens, ratio)
        self.protect_first_n = int(setting(self.config, "compression.protect_first_n", 3))
        self.tail_min_messages = max(MIN_TAIL, int(setting(self.config, "compression.tail_min_messages", TAIL_MIN_MESSAGES)))
        self.min_fidelity = float(setting(self.config, "compression.min_fidelity", MIN_FIDELITY))
        self.enabled = bool(setting(self.config, "compression.enabled", True))

    def update_from_response(self, usage: Any) -> None:
        # Only what the provider reports it read counts; completion (reasoning) tokens never trigger.
        self.last_prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        self.last_completion_tokens = int(getattr(usage, "output_tokens", 0) or 0)

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        tokens = self.last_prompt_tokens if prompt_tokens is None else prompt_tokens
        return self.enabled and self.guard.auto_enabled and tokens >= self.threshold_tokens

    def should_compress_preflight(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()) -> bool:
        return self.enabled and super().should_compress_preflight(messages, tools)

    def near_overflow(self, tokens: int) -> bool:
        """True when the next call would hardly fit the window: a resting summary model no longer defers."""
        return tokens >= self.context_length * OVERFLOW_SHARE

    def skip_reason(self, messages: list[dict[str, Any]]) -> str | None:
        """Why :meth:`compress` would leave ``messages`` as they are, asked before any hook fires."""
        system = messages[0] if messages and messages[0].get("role") == "system" else None
        body, _, floor = extract_handoff(messages[1:] if system else messages)
        bounds = self._boundaries(body, floor)
        if not split(body, bounds).middle:  # the same cut as compress, without pruning first
            kept = estimate_tokens(body)
            return (
                f"nothing to compress yet: the conversation ({kept:,} tokens, {len(body)} messages) is all "
                f"protected head (first {self.protect_first_n}) and recent tail (at least {self.tail_min_messages} "
                f"messages or {self.tail_budget_tokens:,} tokens)"
            )
        return None

    def resume_automatic(self) -> None:
        """``/compress``: switch automatic compression back on after anti-thrashing stopped it."""
        self.guard.resume()

    def on_session_reset(self) -> None:
        super().on_session_reset()
        self.guard.reset()
        self.system_note = None
        self.last_fidelity = self.last_handoff = None

    def cut(self, messages: list[dict[str, Any]]) -> Cut:
        """Phases 1 and 2, shared by both engines: find head and tail, prune what lies between."""
        system = messages[0] if messages and messages[0].get("role") == "system" else None
        body, previous, floor = extract_handoff(messages[1:] if system else messages)
        bounds = self._boundaries(body, floor)
        newest = last_index(body, "user")
        pruned = prune(body, bounds.head_end, bounds.tail_start, keep={newest} if newest is not None else ())
        return Cut(system, body, previous, newest, pruned, split(pruned, bounds, original=body))

    def checked_assembly(
        self, cut: Cut, summary: str, retry: Callable[[list[Fact]], str | None] | None = None
    ) -> tuple[str, list[dict[str, Any]]]:
        """Assemble, probe what the result keeps and, below ``min_fidelity``, ask ``retry`` once with
        the misses named, then append what is still missing as a "facts kept verbatim" block.

        Returns the final note and message list; the verdict goes to ``last_fidelity``.
        """
        sections = cut.sections
        facts = needed_facts(cut.body)

        def build(note: str) -> list[dict[str, Any]]:
            return assemble(sections.head, note, sections.tail, sections.pinned)

        result = build(summary)
        first = current = probe(cut.body, result, facts=facts)
        retried, restored = False, []
        if current.score < self.min_fidelity and retry is not None:
            again = retry(current.missing)
            retried = again is not None
            if again is not None:
                candidate = build(again)
                verdict = probe(cut.body, candidate, facts=facts)
                if verdict.score >= current.score:
                    summary, result, current = again, candidate, verdict
        if current.score < self.min_fidelity and current.missing:
            restored = [str(f) for f in current.missing]
            summary = f"{summary}\n\n{facts_block(current.missing)}"
            result = build(summary)
            current = probe(cut.body, result, facts=facts)
        self.last_fidelity = {
            **current.as_dict(),
            "summary_score": round(first.score, 3),
            "summary_missing": [str(f) for f in first.missing],
            "retried": retried,
            "restored": restored,
        }
        self.last_handoff = summary
        return summary, result

    # --- the note, as the kernel shows and edits it (review, ``sessions handoff``) -----------

    def handoff_note(self, messages: Sequence[dict[str, Any]]) -> str | None:
        """The body of the handoff note in ``messages`` (found by its marker), or None."""
        for message in messages:
            if message.get(MARKER_KEY) == HANDOFF_MARKER:
                return _split_block(message.get("content"))[0]
        return None

    def replace_handoff(self, messages: Sequence[dict[str, Any]], text: str) -> list[dict[str, Any]]:
        """``messages`` with the handoff note's body replaced by ``text`` (a reviewed edit)."""
        out = []
        for message in messages:
            if message.get(MARKER_KEY) == HANDOFF_MARKER:
                content = message.get("content")
                first = content[0].get("text") if isinstance(content, list) and content and isinstance(content[0], dict) else content
                inline = isinstance(first, str) and first.startswith(HANDOFF_PREFIX_INLINE)
                rest = _split_block(content)[1]
                message = {**message, "content": _content_with_block(rest, handoff_block(text, inline=inline))}
            out.append(message)
        return out

    def _boundaries(self, body: list[dict[str, Any]], floor: int) -> Any:
        return find_boundaries(
            body,
            protect_first_n=self.protect_first_n,  # the head stays protected across compressions
            tail_budget=self.tail_budget_tokens,
            min_tail=self.tail_min_messages,
            min_tail_start=floor,
        )

    def finish(
        self, messages: list[dict[str, Any]], result: list[dict[str, Any]], system: dict[str, Any] | None, *,
        noted: bool = True, note: str = SYSTEM_NOTE,
    ) -> dict[str, Any]:  # fmt: skip
        """Put the system message back (with the compaction note when ``noted``) and record the compression.

        ``note`` is what the rebuilt system prompt tells the model about the compaction; an
        engine that did not write a summary says what it did instead. Returns the estimated
        tokens before and after and the anti-thrashing warning, if any.
        """
        if system is not None:
            result.insert(0, with_system_note(system, note) if noted else system)
        before, after = estimate_tokens(messages), estimate_tokens(result)
        self.compression_count += 1
        self.system_note = note
        self.last_prompt_tokens = after  # until the next response reports the real number
        return {"before": before, "after": after, "warning": self.guard.record(before, after)}

    def get_status(self) -> dict[str, Any]:
        return {**super().get_status(), "auto_compression": self.guard.auto_enabled, "warning": self.guard.warning}
