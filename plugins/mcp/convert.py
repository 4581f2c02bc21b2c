"""From MCP shapes to the kernel's: tool names and argument schemas (results: :mod:`.results`).

Works on plain data (``model_dump`` of the SDK's types), so it is testable
without a server and never imports the SDK.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from .results import render_result  # re-exported: the result half of the conversion

__all__ = ["render_result", "safe_schema", "tool_name"]

_BAD_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_MAX_NAME = 64  # both OpenAI and Anthropic cap tool names at 64 characters
# Keys OpenAI rejects or ignores at the top of a function's parameters.
_TOP_LEVEL_DROP = ("$schema", "$id", "title", "oneOf", "anyOf", "allOf", "not", "enum", "const")


def tool_name(server: str, tool: str) -> str:
    """``mcp_<server>_<tool>``, limited to the characters and length both providers accept."""
    name = _BAD_CHARS.sub("_", f"mcp_{server}_{tool}")
    if len(name) > _MAX_NAME:  # keep distinct long names distinct
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        name = f"{name[: _MAX_NAME - 9]}_{digest}"
    return name


def _fix_nested(node: Any) -> Any:
    """Arrays get ``items`` (OpenAI rejects an array schema without one); the rest is kept."""
    if isinstance(node, list):
        return [_fix_nested(item) for item in node]
    if not isinstance(node, dict):
        return node
    fixed = {key: _fix_nested(value) for key, value in node.items()}
    kind = fixed.get("type")
    if (kind == "array" or (isinstance(kind, list) and "array" in kind)) and "items" not in fixed:
        fixed["items"] = {}
    return fixed


def safe_schema(schema: Any) -> dict[str, Any]:
    """An ``object`` schema both providers take as a tool's parameters.

    Anthropic's ``input_schema`` and OpenAI's function parameters need a
    top-level ``type: object`` with ``properties``; OpenAI refuses top-level
    combinators (``anyOf``...) and ``enum``, and any array schema without
    ``items``. Other nested parts are kept as they are; ``required`` names that
    are not properties are dropped (OpenAI rejects them).
    """
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}
    out = {k: _fix_nested(v) for k, v in schema.items() if k not in _TOP_LEVEL_DROP}
    out["type"] = "object"
    properties = out.get("properties")
    if not isinstance(properties, dict):
        properties = {}
    out["properties"] = properties
    required = out.get("required")
    if isinstance(required, list):
        kept = [r for r in required if isinstance(r, str) and r in properties]
        if kept:
            out["required"] = kept
        else:
            out.pop("required")
    elif "required" in out:
        out.pop("required")
    return out
