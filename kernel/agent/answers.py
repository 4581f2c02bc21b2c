"""What to do with a model reply that is not a clean answer.

The loop asks :meth:`ReplyRecovery.assess` about every reply and carries out
the :class:`Step` it gets back. The layers, in order:

- ``<think>…</think>`` in the text is moved to ``reasoning`` before anything
  looks at the answer.
- ``finish_reason == "length"``: tool calls from a cut-off reply are never
  run; the call is repeated with twice the output budget (capped at
  :data:`OUTPUT_CAP`). A reply that spent the whole budget on reasoning gets
  one retry with a larger budget, then a clear failure. Cut-off text is
  continued with a growing budget.
- ``finish_reason == "incomplete"`` (the stream ended without a finish): the
  model is asked to continue; still incomplete, the turn is flagged.
- An empty reply: one nudge after tool results; the thinking-only prefill
  (twice) when the model reasoned but did not answer; the text the model gave
  earlier in this turn (beside its tool calls); retries; the fallback
  provider; then the turn ends flagged empty. Placeholders such as
  "(empty)" never enter the history sent back to the model.
- The grace call after the iteration budget ran out, without text: a fixed
  failure text and ``completed=False``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CONTINUE", "GRACE_FAILED", "OUTPUT_CAP", "ReplyRecovery", "Step", "grow_budget", "strip_think"]

#: The largest output budget a retry or continuation grows to.
OUTPUT_CAP = 32_768
CONTINUE = "Your previous reply was cut off by the output limit. Continue exactly where it stopped, without repeating."
CONTINUE_CUT = "Your previous reply was cut off in transit. Continue exactly where it stopped, without repeating."
NUDGE = "Process the tool results above and continue with the task."
ANSWER_NOW = "You reasoned about this but gave no answer. Write your answer for the user now."
GRACE_FAILED = (
    "I used every step this task may take and could not write a summary of where it stands. "
    "Nothing was lost: send another message to continue from here."
)
MAX_EMPTY_RETRIES = 3
MAX_PREFILLS = 2
MAX_CONTINUATIONS = 3
MAX_CUT_CONTINUATIONS = 2

_THINK = re.compile(r"<(think|thinking|reasoning)>(.*?)(?:</\1>|$)", re.S | re.I)


def strip_think(message: dict[str, Any]) -> None:
    """Move ``<think>…</think>`` blocks (an unclosed one too) from the content to ``reasoning``."""
    content = message.get("content")
    if not isinstance(content, str) or "<" not in content:
        return
    thoughts = [m.group(2).strip() for m in _THINK.finditer(content)]
    if not thoughts:
        return
    message["content"] = _THINK.sub("", content).strip() or None
    joined = "\n".join(t for t in thoughts if t)
    if joined:
        message["reasoning"] = "\n".join(p for p in (message.get("reasoning"), joined) if p)


def grow_budget(current: int) -> int | None:
    """Twice ``current``, capped at :data:`OUTPUT_CAP`; None when already there."""
    if current >= OUTPUT_CAP:
        return None
    return min(OUTPUT_CAP, current * 2)


@dataclass
class Step:
    """What the loop does next.

    ``kind``: ``tools`` (append the reply, run its calls), ``answer`` (append,
    end with ``text``), ``continue`` (append the reply and ``follow_up`` as a
    user message, call again), ``retry`` (call again without appending;
    ``extra`` rides on the next request only), ``fallback`` (the loop tries the
    next provider, else ends empty), ``fail`` (end failed with ``text`` as the
    error), ``incomplete`` (append, end flagged incomplete with ``text``),
    ``grace_failed`` (end with :data:`GRACE_FAILED`).
    """

    kind: str
    text: str = ""
    status: str = ""
    follow_up: str = ""
    extra: list[dict[str, Any]] = field(default_factory=list)
    append: bool = True


@dataclass
class ReplyRecovery:
    """The per-turn counters of every layer; one instance per user turn."""

    max_tokens: int
    empty_retries: int = 0
    prefills: int = 0
    reasoning_retried: bool = False
    nudged: bool = False
    continuations: list[str] = field(default_factory=list)
    cut_continuations: int = 0
    earlier_text: str = ""

    def assess(self, message: dict[str, Any], finish: str, *, grace: bool, after_tools: bool) -> Step:
        strip_think(message)
        text = message.get("content") or ""
        calls = message.get("tool_calls") or []
        reasoning = message.get("reasoning") or ""
        if finish == "length":
            step = self._length(text, calls, reasoning, grace)
            if step is not None:
                return step
        if grace and not text.strip():
            return Step("grace_failed", GRACE_FAILED, append=False)
        if calls and not grace:
            if text.strip():
                self.earlier_text = text  # reused if the model later falls silent
            return Step("tools")
        if text.strip():
            if finish == "incomplete":
                if self.cut_continuations < MAX_CUT_CONTINUATIONS:
                    self.cut_continuations += 1
                    self.continuations.append(text)
                    return Step("continue", follow_up=CONTINUE_CUT,
                                status="the answer was cut off in transit; asking the model to continue")
                return Step("incomplete", "".join(self.continuations) + text)
            return Step("answer", "".join(self.continuations) + text)
        return self._empty(message, reasoning, after_tools)

    def _length(self, text: str, calls: list[Any], reasoning: str, grace: bool) -> Step | None:
        budget = self.max_tokens
        if calls and not grace:
            grown = grow_budget(budget)
            if grown is None:
                return Step("fail", f"the model's tool call was cut off by the output limit of {budget:,} tokens "
                                    "even at the largest budget; ask for smaller steps", append=False)
            self.max_tokens = grown
            return Step("retry", status=f"a tool call was cut off at {budget:,} output tokens; "
                                        f"retrying with {grown:,} (nothing was run)", append=False)
        if not text.strip() and reasoning:
            grown = grow_budget(budget)
            if self.reasoning_retried or grown is None:
                return Step("fail", f"the model spent its whole output budget ({budget:,} tokens) on reasoning "
                                    "and gave no answer; raise model.max_tokens or lower its reasoning effort",
                            append=False)
            self.reasoning_retried = True
            self.max_tokens = grown
            return Step("retry", status=f"the reply went entirely to reasoning; retrying once with {grown:,} "
                                        "output tokens", append=False)
        if text.strip() and len(self.continuations) < MAX_CONTINUATIONS and not grace:
            self.continuations.append(text)
            self.max_tokens = grow_budget(budget) or budget
            return Step("continue", follow_up=CONTINUE,
                        status="the answer hit the output limit; asking the model to continue")
        return None

    def _empty(self, message: dict[str, Any], reasoning: str, after_tools: bool) -> Step:
        if after_tools and not self.nudged:
            self.nudged = True
            return Step("retry", extra=[{"role": "user", "content": NUDGE}], append=False)
        if reasoning and self.prefills < MAX_PREFILLS:
            # Thinking-only: show the model its own reasoning and ask for the answer it implies.
            self.prefills += 1
            return Step("retry", append=False, status=f"the model only reasoned; asking for the answer "
                                                      f"({self.prefills}/{MAX_PREFILLS})",
                        extra=[{"role": "assistant", "content": f"<think>\n{reasoning}\n</think>"},
                               {"role": "user", "content": ANSWER_NOW}])
        if self.earlier_text.strip():
            return Step("answer", "".join(self.continuations) + self.earlier_text, append=False,
                        status="the model fell silent; using the answer it gave earlier in this turn")
        if self.empty_retries < MAX_EMPTY_RETRIES:
            self.empty_retries += 1
            return Step("retry", append=False,
                        status=f"empty response; retrying ({self.empty_retries}/{MAX_EMPTY_RETRIES})")
        self.empty_retries = 0
        return Step("fallback", append=False)
