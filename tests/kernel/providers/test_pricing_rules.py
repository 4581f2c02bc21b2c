"""Prices to the cent: the vendors' cache rules, the user's overrides, and what a cost records."""

from __future__ import annotations

import pytest

from hermes.kernel import CanonicalUsage, ConfigError, CostResult, compute_cost
from hermes.kernel.providers.pricing import (
    ANTHROPIC_SOURCE,
    OPENAI_SOURCE,
    PRICES,
    PRICING_VERSION,
    ModelPrice,
    _an,
    _oa,
    lookup_price,
)

USAGE = CanonicalUsage(input_tokens=2_000_000, output_tokens=1_000_000, cache_read_tokens=4_000_000,
                       cache_write_tokens=400_000, request_count=1)


def test_openai_bills_cache_writes_as_input() -> None:
    # The table is built once at import; the rule itself is checked here, and the table against it.
    assert _oa(2.50, 1.25, 10.00) == ModelPrice(2.50, 10.00, 1.25, 2.50, OPENAI_SOURCE, PRICING_VERSION, False)
    assert PRICES["gpt-4o"] == _oa(2.50, 1.25, 10.00)


def test_anthropic_cache_reads_cost_a_tenth_and_writes_a_quarter_more() -> None:
    assert _an(3.00, 15.00) == ModelPrice(3.00, 15.00, 0.3, 3.75, ANTHROPIC_SOURCE, PRICING_VERSION, False)
    assert _an(0.80, 4.00) == ModelPrice(0.80, 4.00, 0.08, 1.0, ANTHROPIC_SOURCE, PRICING_VERSION, False)
    assert PRICES["claude-sonnet-4-6"] == _an(3.00, 15.00)


@pytest.mark.parametrize("reported", [0.0, 0, 0.0123])
def test_a_cost_the_provider_reports_is_the_actual_cost_even_when_zero(reported: float) -> None:
    # "if reported_usd:" would price a free call from the table; the provider's number is the fact.
    assert compute_cost("gpt-4o", USAGE, reported_usd=reported) == CostResult(float(reported), "actual", "provider")


def test_an_estimate_records_its_table_version_and_is_kept_to_a_ten_billionth() -> None:
    cost = compute_cost("claude-sonnet-4-6", USAGE)
    assert cost == CostResult(6.0 + 15.0 + 1.2 + 1.5, "estimated", PRICING_VERSION)
    tiny = compute_cost("m", CanonicalUsage(input_tokens=1, request_count=1), {"m": {"input": 0.00004, "output": 1}})
    assert tiny == CostResult(0.0, "estimated", "config")  # 4e-11 dollars rounds to nothing
    assert compute_cost("m", CanonicalUsage(input_tokens=3, request_count=1), {"m": {"input": 0.0001, "output": 1}}
                        ).amount_usd == 3e-10


def test_unknown_and_included_costs() -> None:
    assert compute_cost("my-local-llama", USAGE) == CostResult(None, "unknown", None)
    overrides = {"local": {"included": True, "input": 9, "output": 9}}
    assert compute_cost("local", USAGE, overrides) == CostResult(0.0, "included", "config")
    assert lookup_price("local", overrides) == ModelPrice(0, 0, 0, 0, "config", "config", included=True)


def test_an_override_states_its_prices_source_and_version() -> None:
    full = {"input": 1, "output": 2, "cache_read": 0.1, "cache_write": 1.5, "source": "https://example.test/p",
            "pricing_version": "2026-05"}
    assert lookup_price("m", {"m": full}) == ModelPrice(1.0, 2.0, 0.1, 1.5, "https://example.test/p", "2026-05")
    # Unstated cache prices are the input price; the source and version say "config".
    assert lookup_price("m", {"m": {"input": "0.5", "output": 1}}) == ModelPrice(0.5, 1.0, 0.5, 0.5, "config",
                                                                                "config")


def test_bad_overrides_say_what_to_write() -> None:
    with pytest.raises(ConfigError) as caught:
        lookup_price("m", {"m": 3})
    assert str(caught.value) == "pricing.models.m must be a mapping like {input: 1.0, output: 2.0}"
    with pytest.raises(ConfigError) as caught:
        lookup_price("m", {"m": {"input": 1}})
    assert str(caught.value) == "pricing.models.m needs numeric input and output prices per million tokens"


def test_no_table_name_looks_like_a_snapshot() -> None:
    # lookup_price strips a snapshot suffix before looking: a dated table entry would never be found.
    from hermes.kernel.providers.pricing import _SNAPSHOT_RE

    assert [name for name in PRICES if _SNAPSHOT_RE.search(name)] == []


def test_routed_names_snapshots_and_overrides_resolve() -> None:
    assert all(lookup_price(name) is price for name, price in PRICES.items())
    assert lookup_price("o3-2025-04-16") is PRICES["o3"]
    assert lookup_price("claude-3-7-sonnet-latest") is PRICES["claude-3-7-sonnet"]
    assert lookup_price("openrouter/anthropic/claude-opus-4-1-20250805") is PRICES["claude-opus-4-1"]
    assert lookup_price("gpt-4o-20240806-extra") is None
    routed = {"openai/gpt-4o": {"input": 1, "output": 1}}
    assert lookup_price("openai/gpt-4o", routed) == ModelPrice(1.0, 1.0, 1.0, 1.0, "config", "config")
    assert lookup_price("gpt-4o", routed) is PRICES["gpt-4o"]  # the routed name's override is not the vendor's
    assert lookup_price("openai/gpt-4o", {"gpt-4o": {"included": True}}).included
    # An empty override entry (`openai/gpt-4o:` in YAML) leaves the table price, routed or not.
    assert lookup_price("openai/gpt-4o", {"openai/gpt-4o": None}) is PRICES["gpt-4o"]
    assert lookup_price("gpt-4o", {"gpt-4o": None}) is PRICES["gpt-4o"]
