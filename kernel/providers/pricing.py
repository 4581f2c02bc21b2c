"""Prices per million tokens and the cost of a :class:`CanonicalUsage`.

Each table entry names the vendor page it was taken from; :data:`PRICING_VERSION`
says when. A model that is neither in the table nor in the user's overrides
(``pricing.models.<model>`` in config) costs ``unknown``: no guessed number.
Dated snapshots (``gpt-4o-2024-08-06``, ``claude-sonnet-4-5-20250929``) and
``-latest`` aliases resolve to their base model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..usage import CanonicalUsage, CostResult

__all__ = ["PRICING_VERSION", "PRICES", "ModelPrice", "compute_cost", "lookup_price"]

PRICING_VERSION = "2026-06-01"

OPENAI_SOURCE = "https://openai.com/api/pricing/"
ANTHROPIC_SOURCE = "https://www.anthropic.com/pricing#api"


@dataclass(frozen=True)
class ModelPrice:
    """US dollars per million tokens, by CanonicalUsage bucket."""

    input: float
    output: float
    cache_read: float
    cache_write: float
    source: str
    pricing_version: str = PRICING_VERSION
    included: bool = False


def _oa(inp: float, cached: float, out: float) -> ModelPrice:
    # OpenAI bills cache writes as ordinary input.
    return ModelPrice(inp, out, cached, inp, OPENAI_SOURCE)


def _an(inp: float, out: float) -> ModelPrice:
    # Anthropic: 5-minute cache writes cost 1.25 x input, cache reads 0.1 x input.
    return ModelPrice(inp, out, round(inp * 0.1, 6), round(inp * 1.25, 6), ANTHROPIC_SOURCE)


PRICES: dict[str, ModelPrice] = {
    "gpt-5.5": _oa(5.00, 0.50, 30.00),
    "gpt-5.4": _oa(2.50, 0.25, 15.00),
    "gpt-5.4-mini": _oa(0.75, 0.075, 4.50),
    "gpt-5.4-nano": _oa(0.20, 0.02, 1.25),
    "gpt-5.2": _oa(1.75, 0.175, 14.00),
    "gpt-5": _oa(1.25, 0.125, 10.00),
    "gpt-5-mini": _oa(0.25, 0.025, 2.00),
    "gpt-5-nano": _oa(0.05, 0.005, 0.40),
    "gpt-4.1": _oa(2.00, 0.50, 8.00),
    "gpt-4.1-mini": _oa(0.40, 0.10, 1.60),
    "gpt-4.1-nano": _oa(0.10, 0.025, 0.40),
    "gpt-4o": _oa(2.50, 1.25, 10.00),
    "gpt-4o-mini": _oa(0.15, 0.075, 0.60),
    "o3": _oa(2.00, 0.50, 8.00),
    "o4-mini": _oa(1.10, 0.275, 4.40),
    "claude-opus-4-6": _an(5.00, 25.00),
    "claude-sonnet-4-6": _an(3.00, 15.00),
    "claude-opus-4-5": _an(5.00, 25.00),
    "claude-opus-4-1": _an(15.00, 75.00),
    "claude-opus-4": _an(15.00, 75.00),
    "claude-sonnet-4-5": _an(3.00, 15.00),
    "claude-sonnet-4": _an(3.00, 15.00),
    "claude-3-7-sonnet": _an(3.00, 15.00),
    "claude-haiku-4-5": _an(1.00, 5.00),
    "claude-3-5-haiku": _an(0.80, 4.00),
}

_SNAPSHOT_RE = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$")


def _override(model: str, overrides: Mapping[str, Any]) -> ModelPrice | None:
    raw = overrides.get(model)
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ConfigError(f"pricing.models.{model} must be a mapping like {{input: 1.0, output: 2.0}}")
    if raw.get("included"):
        return ModelPrice(0, 0, 0, 0, "config", "config", included=True)
    try:
        inp, out = float(raw["input"]), float(raw["output"])
        return ModelPrice(
            inp,
            out,
            float(raw.get("cache_read", inp)),
            float(raw.get("cache_write", inp)),
            str(raw.get("source", "config")),
            str(raw.get("pricing_version", "config")),
        )
    except (KeyError, TypeError, ValueError):
        raise ConfigError(
            f"pricing.models.{model} needs numeric input and output prices per million tokens"
        ) from None


def lookup_price(model: str, overrides: Mapping[str, Any] | None = None) -> ModelPrice | None:
    """The price of ``model`` (user override first, then the table), or None."""
    overrides = overrides or {}
    name = model.split("/")[-1]  # "openai/gpt-4o" on routers
    for candidate in (model, name):
        found = _override(candidate, overrides)
        if found is not None:
            return found
    return PRICES.get(_SNAPSHOT_RE.sub("", name))  # no table name ends in a snapshot suffix (a test checks)


def compute_cost(
    model: str,
    usage: CanonicalUsage,
    overrides: Mapping[str, Any] | None = None,
    *,
    reported_usd: float | None = None,
) -> CostResult:
    """The cost of ``usage`` on ``model``.

    ``reported_usd`` (a cost the provider itself returned, as OpenRouter does)
    gives status ``actual``; a table or override price gives ``estimated``;
    an override with ``included: true`` gives ``included``; otherwise ``unknown``.
    """
    if reported_usd is not None:
        return CostResult(float(reported_usd), "actual", "provider")
    price = lookup_price(model, overrides)
    if price is None:
        return CostResult(None, "unknown")
    if price.included:
        return CostResult(0.0, "included", price.pricing_version)
    amount = (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * price.cache_read
        + usage.cache_write_tokens * price.cache_write
    ) / 1_000_000
    return CostResult(round(amount, 10), "estimated", price.pricing_version)
