"""Every approval decision is stored in front of the result of the tool call that asked (issue 27, item 2)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from hermes.kernel import Tool, ToolCall, ToolContext, ToolRegistry
from hermes.kernel.approval_records import (
    APPROVAL_OUTCOMES,
    ApprovalCancelled,
    ApprovalTimedOut,
    RecordingApprover,
    collecting_decisions,
)
from hermes.kernel.approvals import approve_everything
from hermes.plugins.tools.terminal import TERMINAL

DANGEROUS = "rm -rf scratch/.git"


def _registry() -> ToolRegistry:
    return ToolRegistry([TERMINAL])


def _call(command: str, call_id: str = "t1") -> ToolCall:
    return ToolCall(call_id, "terminal", json.dumps({"command": command}))


def _context(tmp_path: Path, approver) -> ToolContext:  # type: ignore[no-untyped-def]
    (tmp_path / "scratch" / ".git").mkdir(parents=True)
    (tmp_path / "scratch" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return ToolContext(cwd=tmp_path, approve=approver)


def test_an_allowed_command_runs_and_its_result_starts_with_the_decision(tmp_path: Path) -> None:
    ctx = _context(tmp_path, RecordingApprover(lambda subject, reason: True))
    result = _registry().dispatch(_call(DANGEROUS), ctx)
    first, rest = result.content.split("\n", 1)
    assert first.startswith("[approval] allowed by the user after ") and f"s: {DANGEROUS} (asked because: " in first
    assert "a repository's history" in first and rest.startswith("exit code: 0") and not result.is_error
    assert not (tmp_path / "scratch" / ".git").exists()


def test_a_denied_command_does_not_run_and_says_who_said_no(tmp_path: Path) -> None:
    ctx = _context(tmp_path, RecordingApprover(lambda subject, reason: False))
    result = _registry().dispatch(_call(DANGEROUS), ctx)
    first, rest = result.content.split("\n", 1)
    assert first.startswith("[approval] denied by the user") and rest.startswith("error: the user declined this command")
    assert result.is_error and (tmp_path / "scratch" / ".git" / "HEAD").exists()


@pytest.mark.parametrize(("error", "outcome"), [(ApprovalCancelled, "cancelled"), (ApprovalTimedOut, "timed_out")])
def test_cancelled_and_timed_out_prompts_are_no_with_their_own_words(tmp_path: Path, error, outcome) -> None:  # type: ignore[no-untyped-def]
    def prompt(subject: str, reason: str) -> bool:
        raise error(f"{outcome}: `{subject}` did not run")

    ctx = _context(tmp_path, RecordingApprover(prompt))
    result = _registry().dispatch(_call(DANGEROUS), ctx)
    first, rest = result.content.split("\n", 1)
    assert first.startswith(f"[approval] {APPROVAL_OUTCOMES[outcome]} after ")
    assert rest == f"error: {outcome}: `{DANGEROUS}` did not run" and result.is_error
    assert (tmp_path / "scratch" / ".git" / "HEAD").exists()


def test_yolo_decisions_are_recorded_as_unasked(tmp_path: Path) -> None:
    ctx = _context(tmp_path, RecordingApprover(approve_everything, unasked=True))
    result = _registry().dispatch(_call(DANGEROUS), ctx)
    assert result.content.startswith("[approval] allowed without asking (--yolo or approvals.mode: off)")


def test_a_command_that_needs_no_approval_has_no_line(tmp_path: Path) -> None:
    ctx = _context(tmp_path, RecordingApprover(lambda subject, reason: pytest.fail("asked for nothing")))
    assert _registry().dispatch(_call("echo hi"), ctx).content == "exit code: 0\nhi\n"


def test_each_parallel_call_keeps_its_own_decisions(tmp_path: Path) -> None:
    """Decisions are noted per thread, so calls of one batch never take each other's."""
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "a.txt").write_text("A")
    (outside / "b.txt").write_text("B")
    both_asking = threading.Barrier(2, timeout=10)

    def prompt(subject: str, reason: str) -> bool:
        both_asking.wait()  # both calls are asking at the same time, on two threads
        return subject.endswith("a.txt")

    from hermes.plugins.tools.files import READ_FILE

    ctx = ToolContext(cwd=tmp_path, approve=RecordingApprover(prompt))
    calls = [ToolCall(f"r{n}", "read_file", json.dumps({"path": str(outside / f"{n}.txt")})) for n in "ab"]
    a, b = ToolRegistry([READ_FILE]).run(calls, ctx)
    assert a.content.startswith("[approval] allowed by the user") and a.content.count("[approval]") == 1 and "A" in a.content
    assert b.content.startswith("[approval] denied by the user") and b.content.count("[approval]") == 1 and b.is_error


def test_decisions_outside_a_call_are_not_kept_and_nested_calls_keep_theirs() -> None:
    approver = RecordingApprover(lambda subject, reason: True)
    approver("x", "y")  # no call is collecting: nothing is kept anywhere
    with collecting_decisions() as outer:
        approver("outer", "r")
        with collecting_decisions() as inner:
            approver("inner", "r")
        approver("outer again", "r")
    assert [d.subject for d in outer] == ["outer", "outer again"] and [d.subject for d in inner] == ["inner"]


def test_a_tool_without_approvals_is_untouched() -> None:
    tool = Tool(name="echo", description="d", parameters={"type": "object"}, handler=lambda a, c: "hi", toolset="t")
    assert ToolRegistry([tool]).dispatch(ToolCall("e", "echo", "{}"), ToolContext()).content == "hi"
