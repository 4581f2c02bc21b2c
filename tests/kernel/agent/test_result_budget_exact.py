"""The result budget's exact texts, names and limits (each one a line a mutation once changed unnoticed)."""

from __future__ import annotations

import hashlib
import re
import stat
from pathlib import Path

from hermes.kernel.result_budget import ResultBudget, safe_result_name
from hermes.kernel.tool_registry import ToolResult

from .test_result_budget import registry

OUTPUT = "0123456789AB\nCD"  # 15 characters, 2 lines


def test_the_preview_says_exactly_where_the_rest_is(tmp_path: Path) -> None:
    results = [ToolResult("c1", "terminal", OUTPUT)]
    ResultBudget(tmp_path, per_result=14, preview_chars=4).apply(results, registry())
    path = (tmp_path / "c1.txt").resolve()
    assert results[0].content == (
        f"[output of terminal was 15 characters (2 lines), too large to show whole; saved to {path}. "
        f"Read the rest with read_file(path={str(path)!r}, offset=N, limit=M), or search it with search_files.]\n"
        "--- first 4 characters ---\n0123"
    )
    assert path.read_text() == OUTPUT and stat.S_IMODE(path.stat().st_mode) == 0o600


def test_limits_are_inclusive(tmp_path: Path) -> None:
    at_limit = [ToolResult("c1", "terminal", OUTPUT)]
    ResultBudget(tmp_path, per_result=15, per_step=15, preview_chars=4).apply(at_limit, registry())
    assert at_limit[0].content == OUTPUT and list(tmp_path.iterdir()) == []
    # Over the step budget, but no result is larger than its own preview: nothing is saved.
    small = [ToolResult(f"s{i}", "terminal", "abcd") for i in range(3)]
    ResultBudget(tmp_path, per_step=10, preview_chars=4).apply(small, registry())
    assert [r.content for r in small] == ["abcd"] * 3 and list(tmp_path.iterdir()) == []
    # One character over the step budget: the largest is saved, the rest stays whole; at the budget, nothing is.
    for budget, saved in ((2_004, True), (2_005, False)):
        over = [ToolResult("a", "terminal", "x" * 2_000), ToolResult("b", "terminal", "y" * 5)]
        ResultBudget(tmp_path / str(budget), per_step=budget, preview_chars=4).apply(over, registry())
        assert over[0].content.startswith("[output of terminal was 2,000 characters (1 lines)") is saved
        assert over[1].content == "y" * 5


def test_a_failed_save_keeps_exactly_the_start_and_the_end(tmp_path: Path) -> None:
    blocker = tmp_path / "results"
    blocker.write_text("not a folder")
    results = [ToolResult("c1", "terminal", OUTPUT)]
    ResultBudget(blocker, per_result=14, preview_chars=4).apply(results, registry())
    assert re.fullmatch(
        r"\[output of terminal was 15 characters \(2 lines\), too large to show whole, and saving it failed "
        r"\(\w+Error\); its first and last 4 characters follow\. Run the tool again with a narrower scope for "
        r"the middle\.\]\n0123\n… \[7 characters cut\] …\nB\nCD",
        results[0].content,
    ), results[0].content


def test_result_names_exactly() -> None:
    def digest(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()[:8]

    assert safe_result_name("call_1-a.b") == "call_1-a.b.txt"  # a clean id is kept as it is
    assert safe_result_name("..") == f"call-{digest('..')}.txt"
    assert safe_result_name("a" * 100) == "a" * 80 + f"-{digest('a' * 100)}.txt"
    assert safe_result_name("._x y._") == f"x_y-{digest('._x y._')}.txt"


def test_apply_returns_the_results_even_when_the_step_fits(tmp_path: Path) -> None:
    results = [ToolResult("a", "terminal", "x" * 10)]
    assert ResultBudget(tmp_path).apply(results, registry()) == results


def test_an_unregistered_tool_uses_the_default_cap(tmp_path: Path) -> None:
    results = [ToolResult("a", "gone_tool", OUTPUT)]
    ResultBudget(tmp_path, per_result=14, preview_chars=4).apply(results, registry())
    assert results[0].content.startswith("[output of gone_tool was 15 characters") and (tmp_path / "a.txt").exists()


def test_the_step_total_counts_each_preview_it_leaves(tmp_path: Path) -> None:
    # After the 150,000 one is saved, its preview plus the 60,000 one is just over the 60,000 budget.
    results = [ToolResult("a", "terminal", "x" * 150_000), ToolResult("b", "terminal", "y" * 60_000)]
    ResultBudget(tmp_path, per_result=10**6, per_step=60_000).apply(results, registry())
    assert (tmp_path / "a.txt").exists() and (tmp_path / "b.txt").exists()
    # Three over a 200,000 budget: two are saved, then the step fits and the third stays whole.
    three = [ToolResult(f"c{i}", "terminal", str(i) * 150_000) for i in range(3)]
    ResultBudget(tmp_path / "three", per_result=10**6, per_step=200_000).apply(three, registry())
    assert [len(r.content) < 2_000 for r in three] == [True, True, False]


def test_a_failed_save_is_logged_with_the_tool_the_path_and_the_error(tmp_path: Path, caplog) -> None:
    blocker = tmp_path / "results"
    blocker.write_text("not a folder")
    with caplog.at_level("WARNING", logger="hermes.kernel.result_budget"):
        ResultBudget(blocker, per_result=14).apply([ToolResult("c1", "terminal", OUTPUT)], registry())
    (record,) = caplog.records
    assert record.getMessage().startswith("could not save the output of terminal to ")
    assert record.args[0] == "terminal" and str(record.args[1]).endswith("c1.txt") and isinstance(record.args[2], OSError)


def test_a_leading_capital_x_is_kept_in_a_name() -> None:
    assert safe_result_name("X1") == "X1.txt"
