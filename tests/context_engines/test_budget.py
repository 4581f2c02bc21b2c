"""Trigger and budget arithmetic of the compressor."""

from __future__ import annotations

from hermes.context_engines.compressor import Compressor
from hermes.context_engines.compressor.budget import summary_budget, summary_input_cap, tail_budget, threshold_tokens
from hermes.kernel import CanonicalUsage, Config


def test_threshold_is_half_the_window_with_a_64k_floor_unless_the_floor_does_not_fit() -> None:
    assert threshold_tokens(200_000, 0.5) == 100_000
    assert threshold_tokens(100_000, 0.5) == 64_000
    assert threshold_tokens(32_000, 0.5) == 27_200  # 64k would not fit: 85% of the window
    assert tail_budget(100_000, 0.2) == 20_000


def test_summary_budget_formula() -> None:
    assert summary_budget(1_000, 200_000) == 2_000  # the floor
    assert summary_budget(50_000, 200_000) == 10_000  # 20% of the content
    assert summary_budget(500_000, 1_000_000) == 12_000  # the ceiling
    assert summary_budget(500_000, 128_000) == 6_400  # 5% of the window
    assert summary_input_cap(1_000_000, 60_000) == 60_000 and summary_input_cap(32_000, 60_000) == 19_200


def test_engine_reads_config_and_counts_only_prompt_tokens() -> None:
    config = Config({"compression": {"threshold": 0.75, "target_ratio": 0.1, "protect_first_n": 2}})
    engine = Compressor(context_length=200_000, config=config)
    assert (engine.threshold_tokens, engine.tail_budget_tokens, engine.protect_first_n) == (150_000, 15_000, 2)
    engine.update_from_response(CanonicalUsage(input_tokens=10_000, output_tokens=900_000, reasoning_tokens=800_000))
    assert not engine.should_compress()  # completion (reasoning) tokens never count
    engine.update_from_response(CanonicalUsage(input_tokens=100_000, cache_read_tokens=50_000))
    assert engine.should_compress() and engine.last_prompt_tokens == 150_000
    assert engine.should_compress(prompt_tokens=10) is False
    engine.update_model("small", 32_000)
    assert engine.threshold_tokens == 27_200
