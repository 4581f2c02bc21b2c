"""The benchmarks run and report their figures (speed itself is judged in bench/, not here)."""

from __future__ import annotations

from bench import loop


def test_loop_benchmark_reports_overhead_per_step() -> None:
    result = loop.run(runs=3, steps=5)
    assert result["steps"] == 5 and result["tools"] == 30 and result["listeners"] == 3
    assert result["agent_ms_per_step"] > 0 and result["baseline_ms_per_step"] > 0
    difference = result["agent_ms_per_step"] - result["baseline_ms_per_step"]
    assert abs(result["overhead_ms_per_step"] - difference) < 0.002  # each figure is rounded on its own
