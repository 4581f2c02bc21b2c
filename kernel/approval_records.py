"""What was decided at each approval prompt, stored with the tool result it belongs to.

A chat wraps its approver (the REPL prompt, or approve-everything under ``--yolo``) in a
:class:`RecordingApprover`. Each decision — allowed, denied, no answer in time, cancelled with
Ctrl-C, or allowed without asking — is noted on the thread running the tool call, and
:meth:`hermes.kernel.tool_registry.ToolRegistry.dispatch` puts one ``[approval]`` line per
decision in front of that call's result. So the decision is stored with the session (the tool
message), shown by ``hermes sessions show``, kept by ``export`` and search, and read by the
model, which learns the user's answer rather than guessing it from an error.

A prompt that ends without a yes or no raises instead of returning False, so the tool's result
says what happened: :class:`ApprovalCancelled` (Ctrl-C: no, and the turn stops) and
:class:`ApprovalTimedOut` (``approvals.timeout`` passed: no). Both are
:class:`~hermes.kernel.tools.ToolError`, which every tool already turns into its error result.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from .tools import ToolError

__all__ = [
    "APPROVAL_OUTCOMES",
    "ApprovalCancelled",
    "ApprovalDecision",
    "ApprovalTimedOut",
    "RecordingApprover",
    "collecting_decisions",
    "with_decisions",
]

#: Every outcome a decision can have, in the words of its ``[approval]`` line.
APPROVAL_OUTCOMES = {
    "allowed": "allowed by the user",
    "denied": "denied by the user",
    "timed_out": "not answered in time, so denied",
    "cancelled": "cancelled with Ctrl-C, so denied and the turn stopped",
    "allowed_unasked": "allowed without asking (--yolo or approvals.mode: off)",
}


class ApprovalCancelled(ToolError):
    """The user pressed Ctrl-C at the prompt: the answer is no, and the turn stops."""


class ApprovalTimedOut(ToolError):
    """Nobody answered within ``approvals.timeout`` seconds: the answer is no."""


@dataclass(frozen=True)
class ApprovalDecision:
    """One answer to one approval prompt."""

    outcome: str  # a key of APPROVAL_OUTCOMES
    subject: str  # the command, or "write /path"
    reason: str  # why it needed approval
    seconds: float  # how long the prompt waited

    def line(self) -> str:
        """The ``[approval]`` line stored in front of the tool's result."""
        return f"[approval] {APPROVAL_OUTCOMES[self.outcome]} after {self.seconds:.1f} s: {self.subject} (asked because: {self.reason})"


_local = threading.local()


@contextlib.contextmanager
def collecting_decisions() -> Iterator[list[ApprovalDecision]]:
    """Collect the decisions made on this thread while the block runs (one tool call).

    Nested blocks (a sub-agent's calls inside ``delegate_task``) keep their own list.
    """
    outer = getattr(_local, "decisions", None)
    _local.decisions = decisions = []
    try:
        yield decisions
    finally:
        _local.decisions = outer


def _note(decision: ApprovalDecision) -> None:
    decisions = getattr(_local, "decisions", None)
    if decisions is not None:
        decisions.append(decision)


def with_decisions(content: str, decisions: Sequence[ApprovalDecision]) -> str:
    """``content`` with one ``[approval]`` line per decision in front of it."""
    if not decisions:
        return content
    return "\n".join(d.line() for d in decisions) + "\n" + content


class RecordingApprover:
    """An approver that notes every decision of the approver it wraps.

    ``unasked=True`` marks an approver that says yes without asking anyone
    (``approve_everything``): its decisions are recorded as ``allowed_unasked``.
    """

    def __init__(self, inner: Callable[[str, str], bool], *, unasked: bool = False) -> None:
        self.inner = inner
        self.unasked = unasked

    def __call__(self, subject: str, reason: str) -> bool:
        started = time.monotonic()

        def note(outcome: str) -> None:
            _note(ApprovalDecision(outcome, subject, reason, time.monotonic() - started))

        try:
            allowed = bool(self.inner(subject, reason))
        except ApprovalCancelled:
            note("cancelled")
            raise
        except ApprovalTimedOut:
            note("timed_out")
            raise
        note(("allowed_unasked" if self.unasked else "allowed") if allowed else "denied")
        return allowed
