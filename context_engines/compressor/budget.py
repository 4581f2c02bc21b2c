"""Token arithmetic: when to compress, how much tail to keep, how long a summary may be."""

from __future__ import annotations

from typing import Any

__all__ = [
    "THRESHOLD_FLOOR",
    "setting",
    "summary_budget",
    "summary_input_cap",
    "tail_budget",
    "threshold_tokens",
]

#: Below 64k tokens a conversation is never worth summarising on a big window.
THRESHOLD_FLOOR = 64_000
_FIT_RATIO = 0.85  # used instead of the floor when the floor would not fit the window


def setting(config: Any, key: str, default: Any) -> Any:
    """``config.get(key)`` with a default, also when the engine runs without a Config."""
    if config is None:
        return default
    try:
        value = config.get(key, default)
    except Exception:  # a malformed key path in a third-party Config: use the default
        return default
    return default if value is None else value


def threshold_tokens(context_length: int, ratio: float) -> int:
    """``max(window × ratio, 64,000)``, but 85% of the window when 64,000 would not fit in it."""
    floor = THRESHOLD_FLOOR if THRESHOLD_FLOOR <= context_length * _FIT_RATIO else int(context_length * _FIT_RATIO)
    return max(int(context_length * ratio), floor)


def tail_budget(threshold: int, target_ratio: float) -> int:
    """Tokens of recent conversation kept verbatim after a compression."""
    return max(1, int(threshold * target_ratio))


def summary_budget(content_tokens: int, context_length: int) -> int:
    """``max(2,000, min(20% of the compressed content, 5% of the window, 12,000))`` tokens."""
    return max(2_000, min(int(content_tokens * 0.20), int(context_length * 0.05), 12_000))


def summary_input_cap(context_length: int, configured: int) -> int:
    """Tokens of conversation sent to the summarizer at most: the configured cap, never over 60% of the window."""
    return max(2_000, min(int(configured), int(context_length * 0.60)))
