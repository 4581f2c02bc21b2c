"""From MCP shapes to the kernel's: tool names, argument schemas and results.

Works on plain data (``model_dump`` of the SDK's types), so it is testable
without a server and never imports the SDK.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from pathlib import Path
from typing import Any

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


def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data) * 3 // 4


def _save_blob(data: str, media_type: str, results_dir: Path | None, stem: str) -> str:
    """Write base64 ``data`` under ``results_dir`` and say where; the model gets text, not bytes."""
    size_kb = max(1, round(_decoded_size(data) / 1024))
    if results_dir is None:
        return f"[{media_type}, {size_kb} KB, not shown]"
    from hermes.kernel import atomic_write

    suffix = "." + media_type.split("/")[-1].split("+")[0] if "/" in media_type else ".bin"
    digest = hashlib.sha256(data.encode()).hexdigest()[:12]
    path = results_dir / f"{stem}-{digest}{re.sub(r'[^A-Za-z0-9.]', '', suffix)}"
    try:
        atomic_write(path, base64.b64decode(data), mode=0o600)
    except (binascii.Error, ValueError, OSError):
        return f"[{media_type}, {size_kb} KB, could not be saved]"
    return f"[{media_type}, {size_kb} KB, saved to {path}]"


def _resource(resource: dict[str, Any], results_dir: Path | None, stem: str) -> str:
    uri = resource.get("uri", "")
    if isinstance(resource.get("text"), str):
        return f"[resource {uri}]\n{resource['text']}"
    media = str(resource.get("mimeType") or resource.get("mime_type") or "application/octet-stream")
    return f"[resource {uri}] " + _save_blob(str(resource.get("blob") or ""), media, results_dir, stem)


def _same_json(text: str, value: Any) -> bool:
    """True when the text block already says what the structured content says."""
    if isinstance(value, dict) and list(value) == ["result"] and value["result"] == text:
        return True  # servers wrap a plain return value as {"result": ...}
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


def render_result(
    content: list[dict[str, Any]],
    structured: Any = None,
    *,
    results_dir: Path | None = None,
    stem: str = "mcp",
    redact: Any = None,
) -> str:
    """The text a tool result becomes.

    Text stays text; images, audio and binary resources are saved to
    ``results_dir`` and described by a line naming the file (provider tool
    results carry text); embedded text resources are inlined under their URI;
    structured content is added as JSON unless a text block already holds it.
    ``redact`` (the kernel's ``redact_text``) runs over text only, never over
    base64 data.
    """
    clean = redact or (lambda s: s)
    parts: list[str] = []
    texts: list[str] = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            text = str(block.get("text", ""))
            texts.append(text)
            parts.append(clean(text))
        elif kind in ("image", "audio"):
            media = str(block.get("mimeType") or block.get("mime_type") or kind)
            parts.append(_save_blob(str(block.get("data") or ""), media, results_dir, stem))
        elif kind == "resource":
            parts.append(clean(_resource(dict(block.get("resource") or {}), results_dir, stem)))
        elif kind == "resource_link":
            parts.append(clean(f"[resource link {block.get('uri', '')}: {block.get('name', '')}]"))
        else:
            parts.append(clean(json.dumps(block, ensure_ascii=False, default=str)))
    if structured is not None and not any(_same_json(t, structured) for t in texts):
        parts.append(clean(json.dumps(structured, ensure_ascii=False, default=str)))
    return "\n".join(parts) if parts else "(no content)"
