"""Big tool results are saved to results/ and previewed; read_file never is."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from hermes.kernel import Tool
from hermes.kernel.result_budget import ResultBudget, safe_result_name
from hermes.kernel.tool_registry import ToolRegistry, ToolResult

OBJ = {"type": "object", "properties": {}}


def registry() -> ToolRegistry:
    return ToolRegistry(
        [
            Tool("terminal", "t", OBJ, lambda a, c: "", "terminal"),
            Tool("read_file", "r", OBJ, lambda a, c: "", "files", spill_large_results=False),
            Tool("small", "s", OBJ, lambda a, c: "", "x", max_result_chars=50),
        ]
    )


def test_large_result_is_saved_with_a_preview(tmp_path: Path) -> None:
    big = "".join(f"line {i}\n" for i in range(20_000))  # ~190 KB
    results = [ToolResult("call_1", "terminal", big)]
    ResultBudget(tmp_path / "results").apply(results, registry())
    saved = tmp_path / "results" / "call_1.txt"
    assert saved.read_text() == big
    content = results[0].content
    assert str(saved) in content and "read_file" in content and "offset" in content
    assert content.endswith(big[:1_500]) and len(content) < 2_000


def test_read_file_is_never_saved(tmp_path: Path) -> None:
    big = "x" * 300_000
    results = [ToolResult("c", "read_file", big)]
    ResultBudget(tmp_path).apply(results, registry())
    assert results[0].content == big and list(tmp_path.iterdir()) == []


def test_per_tool_cap(tmp_path: Path) -> None:
    results = [ToolResult("c", "small", "y" * 51), ToolResult("d", "small", "y" * 50)]
    ResultBudget(tmp_path).apply(results, registry())
    assert results[0].content.startswith("[output of small") and results[1].content == "y" * 50


def test_step_budget_saves_the_largest_first(tmp_path: Path) -> None:
    sizes = [90_000, 80_000, 70_000, 10_000]
    results = [ToolResult(f"c{i}", "terminal", "z" * n) for i, n in enumerate(sizes)]
    ResultBudget(tmp_path).apply(results, registry())
    kept = [len(r.content) for r in results]
    assert kept[0] < 2_000  # the largest went first
    assert kept[1:] == [80_000, 70_000, 10_000]  # 160,000 + preview now fits in 200,000
    assert sum(kept) <= 200_000


@given(st.text(min_size=0, max_size=200))
def test_result_names_never_escape(call_id: str) -> None:
    name = safe_result_name(call_id)
    assert "/" not in name and "\\" not in name and name not in (".", "..") and not name.startswith(".")
    assert name.endswith(".txt") and len(name) <= 100
    root = Path("/r")
    assert (root / name).resolve().parent == root


def test_distinct_ids_stay_distinct() -> None:
    assert safe_result_name("a/b") != safe_result_name("a_b")
    assert safe_result_name("../../etc/passwd").startswith("etc_passwd-")


def test_a_saved_result_is_never_saved_again_over_its_full_output(tmp_path: Path) -> None:
    # 150 results over the per-result cap: their previews alone pass the per-step budget.
    outputs = [f"{i}:" + "q" * 120_000 for i in range(150)]
    results = [ToolResult(f"c{i}", "terminal", out) for i, out in enumerate(outputs)]
    ResultBudget(tmp_path).apply(results, registry())
    for i, out in enumerate(outputs):
        assert (tmp_path / f"c{i}.txt").read_text() == out  # the full output, not a preview of the preview


def test_a_failed_save_cuts_the_result_inline_and_does_not_raise(tmp_path: Path) -> None:
    blocker = tmp_path / "results"
    blocker.write_text("a file where the folder should be")  # every save fails with an OSError
    big = "HEAD" + "m" * 300_000 + "TAIL"
    results = [ToolResult("c", "terminal", big)]
    ResultBudget(blocker).apply(results, registry())
    content = results[0].content
    assert "saving it failed" in content and content.count("HEAD") == 1 and content.endswith("TAIL")
    assert len(content) < 4_000 and blocker.read_text().startswith("a file")
