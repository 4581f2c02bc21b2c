"""Changes to a request that let a refused call succeed, and request hygiene.

:func:`sanitize_messages` runs on every request: lone surrogates (what
``surrogateescape`` makes of invalid bytes in a file, a tool's output or the
command line) cannot be encoded as UTF-8 JSON, so one such character would
fail the whole turn. They become U+FFFD.

:func:`repair` answers the failure reasons whose flag ``should_repair`` is
set: strip signed thinking, drop encrypted reasoning, replace images with a
note, flatten multimodal tool results. :func:`next_tier` gives the probe
tiers a context window steps down through when an overflow states no limit.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["PROBE_TIERS", "next_tier", "repair", "sanitize_messages", "sanitize_text", "stepped_window"]

#: Windows tried in turn when the provider refuses a request as too long without saying its limit.
PROBE_TIERS = (256_000, 128_000, 64_000, 32_000, 16_000, 8_000)
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def sanitize_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (unchanged, same object, when clean)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return sanitize_text(value)
    if isinstance(value, list):
        cleaned = [_clean(v) for v in value]
        return value if all(a is b for a, b in zip(cleaned, value)) else cleaned
    if isinstance(value, dict):
        cleaned_items = {k: _clean(v) for k, v in value.items()}
        return value if all(cleaned_items[k] is value[k] for k in value) else cleaned_items
    return value


def sanitize_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages safe to encode; untouched messages are passed through as the same objects."""
    return [_clean(m) for m in messages]


def next_tier(current: int) -> int | None:
    """The largest probe tier below ``current``; None below the smallest."""
    return next((tier for tier in PROBE_TIERS if tier < current), None)


def stepped_window(reason: str, current: int) -> int | None:
    """A smaller window when a refusal stated none: 200K for a 1M tier, else the next probe tier."""
    if reason == "long_context_tier" and current > 200_000:
        return 200_000
    return next_tier(current)


def _is_image(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") in ("image_url", "image", "input_image")


def _drop_images(content: Any) -> Any:
    if not isinstance(content, list) or not any(_is_image(p) for p in content):
        return content
    return [{"type": "text", "text": "[image removed: the model refused it]"} if _is_image(p) else p for p in content]


def _flatten(content: Any) -> Any:
    if not isinstance(content, list):
        return content
    texts = [str(p.get("text", "")) if isinstance(p, dict) and p.get("type") == "text"
             else "[image omitted: this endpoint takes no images in tool results]" if _is_image(p)
             else str(p) for p in content]
    return "\n".join(t for t in texts if t)


def repair(reason: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """``messages`` changed so a request refused for ``reason`` can succeed; None when nothing changes."""
    out: list[dict[str, Any]] = []
    changed = False
    for message in messages:
        fixed = dict(message)
        if reason in ("thinking_signature", "invalid_encrypted_content"):
            for key in ("reasoning_details", "encrypted_content", "codex_reasoning_items", "reasoning"):
                fixed.pop(key, None)
        elif reason in ("image_too_large", "image_rejected"):
            fixed["content"] = _drop_images(message.get("content"))
        elif reason == "multimodal_tool_content" and message.get("role") == "tool":
            fixed["content"] = _flatten(message.get("content"))
        changed = changed or fixed != message
        out.append(fixed)
    return out if changed else None
