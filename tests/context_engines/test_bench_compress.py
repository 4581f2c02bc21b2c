"""``python -m bench compress`` runs and reports its fields (timing is judged in bench/, not here)."""

from __future__ import annotations

from bench import compress
from bench.__main__ import BENCHMARKS
from hermes.kernel.testing import validate_messages


def test_compress_benchmark_reports_time_savings_and_growth(capsys) -> None:
    assert BENCHMARKS["compress"] == "bench.compress"
    result = compress.run(runs=1, sizes=(150, 300))
    assert result["sizes"] == [150, 300] and set(result["engines"]) == {"compressor", "masking"}
    for rows in result["engines"].values():
        for row in rows.values():
            assert row["ms"] >= 0 and row["tokens_after"] < row["tokens_before"]
            assert row["saved_pct"] == round(100 * (row["tokens_before"] - row["tokens_after"]) / row["tokens_before"], 1)
    assert set(result["time_growth"]["masking"]) == {"150->300"}
    assert set(result["engines"]["compressor"]) == {"150", "300", "150+images", "300+images"}
    assert all(0 <= row["fidelity"] <= 1 for row in result["engines"]["compressor"].values())  # probes are on
    assert result["target"]["seconds"] == 0.9 and result["target"]["messages"] == 300
    assert "time growth (10× the messages" in capsys.readouterr().out


def test_benchmark_transcripts_are_valid_and_exact_in_size() -> None:
    for size in (7, 200, 1_001):
        messages = compress.transcript(size)
        validate_messages(messages)
        assert not any(isinstance(m["content"], list) for m in compress.transcript(size, images=False))
        assert len(messages) <= size and messages[-1] == {"role": "user", "content": "now write the report"}
