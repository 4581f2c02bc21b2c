"""Usage normalisation and cost."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes.kernel import CanonicalUsage, ConfigError, compute_cost, normalize_anthropic_usage, normalize_openai_usage
from hermes.kernel.providers.pricing import PRICES, PRICING_VERSION, lookup_price


def test_openai_cached_tokens_are_subtracted_from_prompt_tokens() -> None:
    usage = normalize_openai_usage({
        "prompt_tokens": 1000, "completion_tokens": 300,
        "prompt_tokens_details": {"cached_tokens": 800},
        "completion_tokens_details": {"reasoning_tokens": 250},
    })
    assert usage == CanonicalUsage(input_tokens=200, output_tokens=300, cache_read_tokens=800,
                                   reasoning_tokens=250, request_count=1)
    assert usage.prompt_tokens == 1000


def test_openai_missing_usage_counts_the_request() -> None:
    assert normalize_openai_usage(None) == CanonicalUsage(request_count=1)
    assert normalize_openai_usage({"prompt_tokens": 10, "prompt_cache_hit_tokens": 4}).cache_read_tokens == 4


def test_anthropic_cache_read_and_creation_are_separate() -> None:
    usage = normalize_anthropic_usage({"input_tokens": 50, "output_tokens": 20,
                                       "cache_read_input_tokens": 900, "cache_creation_input_tokens": 100})
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (50, 900, 100)
    assert usage.prompt_tokens == 1050


@given(st.integers(0, 10**7), st.integers(0, 10**7), st.integers(0, 10**6))
def test_openai_normalisation_never_loses_or_invents_tokens(prompt: int, cached: int, out: int) -> None:
    usage = normalize_openai_usage({"prompt_tokens": prompt, "completion_tokens": out,
                                    "prompt_tokens_details": {"cached_tokens": cached}})
    assert usage.prompt_tokens == prompt and usage.input_tokens >= 0


def test_every_price_names_its_source_and_version() -> None:
    assert len(PRICES) >= 10
    for model, price in PRICES.items():
        assert price.source.startswith("https://"), model
        assert price.pricing_version == PRICING_VERSION
        assert price.input > 0 and price.output >= price.input and price.cache_read < price.input


def test_estimated_cost() -> None:
    usage = CanonicalUsage(input_tokens=1_000_000, output_tokens=100_000, cache_read_tokens=2_000_000,
                           cache_write_tokens=400_000, request_count=1)
    cost = compute_cost("claude-sonnet-4-6", usage)
    assert cost.status == "estimated" and cost.pricing_version == PRICING_VERSION
    assert cost.amount_usd == pytest.approx(3.0 + 1.5 + 0.6 + 1.5)


def test_snapshots_resolve_and_unknown_models_stay_unknown() -> None:
    assert lookup_price("gpt-4o-2024-08-06") is PRICES["gpt-4o"]
    assert lookup_price("gpt-4o-mini-2024-07-18") is PRICES["gpt-4o-mini"]
    assert lookup_price("claude-haiku-4-5-20251001") is PRICES["claude-haiku-4-5"]
    assert lookup_price("openai/gpt-4.1") is PRICES["gpt-4.1"]
    assert lookup_price("gpt-4o-turbo-experimental") is None
    cost = compute_cost("my-local-llama", CanonicalUsage(input_tokens=10, request_count=1))
    assert cost.status == "unknown" and cost.amount_usd is None


def test_overrides_actual_and_included() -> None:
    usage = CanonicalUsage(input_tokens=2_000_000, output_tokens=1_000_000, request_count=1)
    overrides = {"my-llama": {"input": 0.5, "output": 1.0}, "local": {"included": True},
                 "gpt-4o": {"input": 1, "output": 1}}
    assert compute_cost("my-llama", usage, overrides).amount_usd == pytest.approx(2.0)
    assert compute_cost("my-llama", usage, overrides).pricing_version == "config"
    assert compute_cost("gpt-4o", usage, overrides).amount_usd == pytest.approx(3.0)  # override beats the table
    assert compute_cost("local", usage, overrides).status == "included"
    actual = compute_cost("anything", usage, reported_usd=0.0123)
    assert (actual.status, actual.amount_usd) == ("actual", 0.0123)
    # A free call reported by the provider is a fact, not a missing value: the table price must not replace it.
    free = compute_cost("gpt-4o", usage, reported_usd=0.0)
    assert (free.status, free.amount_usd, free.pricing_version) == ("actual", 0.0, "provider")
    with pytest.raises(ConfigError, match="pricing.models.bad"):
        compute_cost("bad", usage, {"bad": {"input": "x"}})
