"""The compat benchmark runs and reports its figures (speed itself is judged in bench/, not here)."""

from __future__ import annotations

import sys

from bench import compat
from hermes.compat.hermes.standins import OWNED_ROOTS


def test_compat_benchmark_reports_overhead_per_call() -> None:
    result = compat.run(runs=3, calls=50)
    assert (result["benchmark"], result["runs"], result["calls"]) == ("compat", 3, 50)
    for name in ("prefetch", "hook"):
        assert result[f"{name}_us"] > 0 and result[f"direct_{name}_us"] > 0
        difference = result[f"{name}_us"] - result[f"direct_{name}_us"]
        assert abs(result[f"{name}_overhead_us"] - difference) < 0.02  # each figure is rounded on its own
    assert not [name for name in sys.modules if name.partition(".")[0] in OWNED_ROOTS]
