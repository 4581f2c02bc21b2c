"""Vendor usage reports normalised into :class:`CanonicalUsage`.

OpenAI Chat counts cached tokens inside ``prompt_tokens``; Anthropic reports
cache reads and cache writes beside ``input_tokens``. CanonicalUsage keeps
``input_tokens`` free of cache tokens in both cases, so the buckets add up and
price correctly. Reasoning tokens are part of the output and also kept apart,
because they do not predict the next request's size (FIELD-NOTES).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..usage import CanonicalUsage

__all__ = ["normalize_anthropic_usage", "normalize_openai_usage", "usage_dict"]


def usage_dict(usage: Any) -> dict[str, Any]:
    """A plain dict of an SDK usage object (pydantic model, mapping or None)."""
    if usage is None:
        return {}
    if isinstance(usage, Mapping):
        return dict(usage)
    dump = getattr(usage, "model_dump", None)
    if callable(dump):
        return dump()
    return dict(vars(usage))


def _int(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def _details(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key)
    return value if isinstance(value, Mapping) else {}


def normalize_openai_usage(usage: Any) -> CanonicalUsage:
    """OpenAI Chat ``usage``: cache reads and writes are subtracted from ``prompt_tokens``.

    Both live inside ``prompt_tokens`` on this wire (OpenRouter and other
    aggregators report ``cache_write_tokens`` beside ``cached_tokens``).
    """
    data = usage_dict(usage)
    prompt = _int(data.get("prompt_tokens"))
    prompt_details = _details(data, "prompt_tokens_details")
    completion_details = _details(data, "completion_tokens_details")
    cached = min(prompt, _int(prompt_details.get("cached_tokens")))
    # Some OpenAI-compatible servers (DeepSeek) report cache hits under their own name.
    cached = cached or min(prompt, _int(data.get("prompt_cache_hit_tokens")))
    written = min(prompt - cached, _int(prompt_details.get("cache_write_tokens")))
    return CanonicalUsage(
        input_tokens=prompt - cached - written,
        output_tokens=_int(data.get("completion_tokens")),
        cache_read_tokens=cached,
        cache_write_tokens=written,
        reasoning_tokens=_int(completion_details.get("reasoning_tokens")),
        request_count=1,
    )


def normalize_anthropic_usage(usage: Any, reasoning_tokens: int = 0) -> CanonicalUsage:
    """Anthropic ``usage``: cache reads and writes are already separate from input."""
    data = usage_dict(usage)
    return CanonicalUsage(
        input_tokens=_int(data.get("input_tokens")),
        output_tokens=_int(data.get("output_tokens")),
        cache_read_tokens=_int(data.get("cache_read_input_tokens")),
        cache_write_tokens=_int(data.get("cache_creation_input_tokens")),
        reasoning_tokens=reasoning_tokens,
        request_count=1,
    )
