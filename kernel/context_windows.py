"""Known context windows, so compression triggers before the provider refuses.

Longest matching prefix wins; ``model.context_length`` in config overrides the
table, and an overflow error that states the real limit steps it down at run
time. Figures are the vendors' published input windows.
"""

from __future__ import annotations

__all__ = ["DEFAULT_CONTEXT_LENGTH", "context_length_for"]

DEFAULT_CONTEXT_LENGTH = 128_000

_WINDOWS: dict[str, int] = {
    "gpt-5": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "claude-": 200_000,
    "llama3": 128_000,
    "qwen": 32_768,
    "mistral": 32_768,
}


def context_length_for(model: str, configured: int | None = None) -> int:
    """The window for ``model``: the configured value, else the table, else 128,000."""
    if configured:
        return int(configured)
    name = model.lower().rsplit("/", 1)[-1]  # openrouter-style "vendor/model"
    matches = [prefix for prefix in _WINDOWS if name.startswith(prefix)]
    return _WINDOWS[max(matches, key=len)] if matches else DEFAULT_CONTEXT_LENGTH
