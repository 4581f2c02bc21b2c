"""One MCP tool result as the one text the model reads.

A result has content blocks and, since protocol 2025-06-18, optional
``structuredContent``. Real servers repeat themselves: server-filesystem sends
the text again as ``{"content": text}`` and an image again inside
``{"content": [block]}``, FastMCP sends ``{"result": value}`` next to the same
value as JSON text. Structured content is added only when it says something
the blocks do not, compared by meaning (wrappers, JSON text against objects,
whitespace). Binary data anywhere (image and audio blocks, embedded blobs,
base64 or ``data:`` URIs inside structured content) is saved to a file and
replaced by one line, so the model never reads base64. Works on plain data
(``model_dump`` of the SDK's types) and never imports the SDK.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .bulk_redact import redact_bulk

__all__ = ["render_result", "repeats_blocks"]

# Keys a server wraps a plain value in; a one-key object of these says what its value says.
_WRAPPERS = frozenset({"content", "result", "text", "value", "output", "data", "response", "contents"})
_BLOCK_KINDS = frozenset({"text", "image", "audio", "resource", "resource_link"})
_MIN_BASE64 = 256  # shorter strings are ordinary values, not payloads worth a file
_BASE64 = re.compile(r"[A-Za-z0-9+/\r\n]+={0,2}")
_DATA_URI = re.compile(r"data:([\w.+-]+/[\w.+-]+)?(?:;[\w=.+-]+)*;base64,(.*)", re.DOTALL)
# Magic numbers of what servers return most, to name a saved payload's type.
_MAGIC = (
    (b"\x89PNG", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"),
    (b"RIFF", "audio/wav"), (b"%PDF", "application/pdf"), (b"ID3", "audio/mpeg"),
    (b"OggS", "audio/ogg"), (b"PK\x03\x04", "application/zip"),
)  # fmt: skip


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
        if not path.exists():  # the same payload twice in one result is one file
            atomic_write(path, base64.b64decode(data), mode=0o600)
    except (binascii.Error, ValueError, OSError):
        return f"[{media_type}, {size_kb} KB, could not be saved]"
    return f"[{media_type}, {size_kb} KB, saved to {path}]"


def _resource(resource: dict[str, Any], results_dir: Path | None, stem: str, clean: Callable[[str], str]) -> str:
    uri = resource.get("uri", "")
    if isinstance(resource.get("text"), str):
        return clean(f"[resource {uri}]\n{resource['text']}")
    media = str(resource.get("mimeType") or resource.get("mime_type") or "application/octet-stream")
    return clean(f"[resource {uri}] ") + _save_blob(str(resource.get("blob") or ""), media, results_dir, stem)


def _block(block: dict[str, Any], results_dir: Path | None, stem: str, clean: Callable[[str], str]) -> str:
    kind = block.get("type")
    if kind == "text":
        return clean(str(block.get("text", "")))
    if kind in ("image", "audio"):
        media = str(block.get("mimeType") or block.get("mime_type") or kind)
        return _save_blob(str(block.get("data") or ""), media, results_dir, stem)
    if kind == "resource":
        return _resource(dict(block.get("resource") or {}), results_dir, stem, clean)
    if kind == "resource_link":
        return clean(f"[resource link {block.get('uri', '')}: {block.get('name', '')}]")
    return clean(json.dumps(_spill(block, results_dir, stem), ensure_ascii=False, default=str))


# --- does the structured content say anything new? -------------------------------------


def _unwrap(value: Any) -> Any:
    """Peel ``{"content": x}``-style wrappers and one-element lists."""
    for _ in range(8):  # wrappers nest a few levels at most; never loop on a cycle
        if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in _WRAPPERS:
            value = next(iter(value.values()))
        elif isinstance(value, list) and len(value) == 1:
            value = value[0]
        else:
            return value
    return value


def _squash(text: str) -> str:
    return " ".join(text.split())


def _as_json(text: str) -> Any:
    stripped = text.strip()
    if not stripped or stripped[0] not in '[{"-0123456789tfn':
        return _Missing
    try:
        return json.loads(stripped)
    except ValueError:
        return _Missing


class _Missing:
    """Marks text that is not JSON (``None`` is a JSON value)."""


def _same(value: Any, text: str) -> bool:
    """True when ``value`` (already unwrapped) says what ``text`` says."""
    if isinstance(value, str):
        if value == text or _squash(value) == _squash(text):
            return True
        parsed = _as_json(value)  # structured content that is itself JSON text (even of a string)
        return parsed is not _Missing and parsed != value and _same(_unwrap(parsed), text)
    parsed = _as_json(text)
    if parsed is _Missing:
        return False
    return bool(parsed == value or _unwrap(parsed) == value)


def _is_block(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") in _BLOCK_KINDS


def repeats_blocks(structured: Any, content: list[dict[str, Any]]) -> bool:
    """True when ``structured`` says nothing the content blocks do not."""
    if structured is None or structured == {} or structured == []:
        return True
    value = _unwrap(structured)
    blocks = value if isinstance(value, list) else [value]
    if blocks and all(_is_block(b) for b in blocks):  # the blocks again, as a list or one
        return all(b in content for b in blocks)
    texts = [str(b.get("text", "")) for b in content if b.get("type") == "text"]
    if not texts:
        return False
    if any(_same(value, t) for t in texts):
        return True
    return len(texts) > 1 and _same(value, "\n".join(texts))


# --- binary data inside structured content -----------------------------------------------


def _sniff(data: str) -> str | None:
    """The media type of a base64 payload, or None when the string is not one."""
    if len(data) < _MIN_BASE64 or _BASE64.fullmatch(data) is None:
        return None
    try:
        head = base64.b64decode(data[:64] + "=" * (-len(data[:64]) % 4), validate=False)
    except (binascii.Error, ValueError):
        return None
    for magic, media in _MAGIC:
        if head.startswith(magic):
            return media
    # Bytes that are not text: a payload of some other kind. Base64 of text stays as it is.
    printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in head)
    return "application/octet-stream" if head and printable < len(head) * 0.9 else None


def _spill(value: Any, results_dir: Path | None, stem: str) -> Any:
    """``value`` with every binary payload saved to a file and replaced by its line."""
    if isinstance(value, dict):
        if value.get("type") in ("image", "audio") and isinstance(value.get("data"), str):
            media = str(value.get("mimeType") or value.get("mime_type") or value["type"])
            return _save_blob(value["data"], media, results_dir, stem)
        if isinstance(value.get("blob"), str):
            media = str(value.get("mimeType") or value.get("mime_type") or "application/octet-stream")
            return f"[resource {value.get('uri', '')}] " + _save_blob(value["blob"], media, results_dir, stem)
        return {key: _spill(item, results_dir, stem) for key, item in value.items()}
    if isinstance(value, list):
        return [_spill(item, results_dir, stem) for item in value]
    if isinstance(value, str) and len(value) >= _MIN_BASE64:
        uri = _DATA_URI.fullmatch(value[:200]) and _DATA_URI.fullmatch(value)
        if uri:
            return _save_blob(uri.group(2), uri.group(1) or "application/octet-stream", results_dir, stem)
        media = _sniff(value)
        if media is not None:
            return _save_blob(value, media, results_dir, stem)
    return value


def render_result(
    content: list[dict[str, Any]],
    structured: Any = None,
    *,
    results_dir: Path | None = None,
    stem: str = "mcp",
    redact: Callable[[str], str] | None = None,
) -> str:
    """The text a tool result becomes.

    Text stays text; images, audio and binary resources are saved to
    ``results_dir`` and described by a line naming the file (provider tool
    results carry text); embedded text resources are inlined under their URI;
    structured content is added as JSON only when it says something the blocks
    do not (:func:`repeats_blocks`), with its binary payloads saved the same
    way. ``redact`` (the kernel's ``redact_text``) runs over text only, never
    over base64 data, and over big texts only where a secret could be
    (:func:`~.bulk_redact.redact_bulk`).
    """
    clean: Callable[[str], str] = (lambda s: s) if redact is None else (lambda s: redact_bulk(s, redact))
    parts = [_block(block, results_dir, stem, clean) for block in content]
    if not repeats_blocks(structured, content):
        spilled = _spill(structured, results_dir, stem)
        parts.append(clean(json.dumps(spilled, ensure_ascii=False, default=str)))
    return "\n".join(parts) if parts else "(no content)"
