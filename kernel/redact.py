"""Masking of secrets for anything a person or a log will read."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["is_secret_key", "mask_secret", "mask_secrets"]

_SECRET_KEY_RE = re.compile(r"(api[_-]?key|token|secret|password|passwd|credential|auth)", re.I)


def is_secret_key(key: str) -> bool:
    """True for names that hold credentials (``OPENAI_API_KEY``, ``model.api_key``)."""
    return bool(_SECRET_KEY_RE.search(key))


def mask_secret(value: str) -> str:
    """Keep at most the first and last four characters: ``sk-p...9xQz``.

    Short values are hidden whole, so a mask never reveals most of a key.
    """
    if len(value) < 16:
        return "****"
    return f"{value[:4]}...{value[-4:]}"


def mask_secrets(data: Any, key: str = "") -> Any:
    """A copy of ``data`` with every string under a secret-looking key masked."""
    if isinstance(data, Mapping):
        return {k: mask_secrets(v, str(k)) for k, v in data.items()}
    if isinstance(data, list):
        return [mask_secrets(v, key) for v in data]
    if isinstance(data, str) and data and is_secret_key(key):
        return mask_secret(data)
    return data
