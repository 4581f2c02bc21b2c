"""Message content on its way into and out of the store.

Plain text is stored as is. Anything else (a list of content parts, a dict, a
string SQLite cannot encode) is stored as JSON in ``content_parts`` beside a
plain-text rendering in ``content`` that the search indexes read, so it comes
back exactly as it went in. Base64 images never reach the database: they are
replaced, before anything else looks at the text, by a short description.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["describe_image", "tool_args_text", "decode_content", "encode_content", "strip_images", "to_json", "from_json"]

# data:image/png;base64,iVBOR... (the payload may be long; the pattern is linear)
_DATA_URL = re.compile(r"data:(image/[\w.+-]+);base64,[A-Za-z0-9+/]{16,}={0,2}")


def describe_image(media_type: str, base64_chars: int) -> str:
    """The text kept instead of an image: its type and decoded size."""
    size_kb = max(1, round(base64_chars * 3 / 4 / 1024))
    return f"[image {media_type}, {size_kb} KB, not stored]"


def _strip_text(text: str) -> str:
    if "base64," not in text:  # cheap guard before the regex
        return text
    return _DATA_URL.sub(lambda m: describe_image(m.group(1), len(m.group(0)) - len(m.group(1)) - 13), text)


def _image_part(part: dict[str, Any]) -> str | None:
    """Description of an image content part holding base64 data, else None."""
    kind = part.get("type")
    if kind == "image_url":  # OpenAI: {"type": "image_url", "image_url": {"url": "data:..."}}
        url = part.get("image_url")
        url = url.get("url") if isinstance(url, dict) else url
        if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
            media = url[5 : url.index(";")] or "image"
            return describe_image(media, len(url) - url.index(",") - 1)
    if kind == "image":  # Anthropic: {"type": "image", "source": {"type": "base64", ...}}
        source = part.get("source")
        if isinstance(source, dict) and source.get("type") == "base64":
            data = source.get("data")
            return describe_image(str(source.get("media_type") or "image"), len(data) if isinstance(data, str) else 0)
    return None


def strip_images(value: Any) -> Any:
    """``value`` with every base64 image replaced by a text description (a new object)."""
    if isinstance(value, str):
        return _strip_text(value)
    if isinstance(value, list):
        out = []
        for item in value:
            if isinstance(item, dict) and (text := _image_part(item)) is not None:
                out.append({"type": "text", "text": text})
            else:
                out.append(strip_images(item))
        return out
    if isinstance(value, dict):
        return {key: strip_images(item) for key, item in value.items()}
    return value


def _plain_text(value: Any) -> str:
    """What search should see of structured content: its text parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(t for t in (_plain_text(item) for item in value) if t)
    if isinstance(value, dict):
        for key in ("text", "content", "thinking"):
            if key in value:
                return _plain_text(value[key])
        return ""
    return ""


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates
        return False
    return "\x00" not in text  # NUL would cut the text short in some SQLite paths


def to_json(value: Any) -> str:
    # ensure_ascii keeps lone surrogates representable; allow_nan=False refuses
    # values that would not read back equal.
    return json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def from_json(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def encode_content(content: Any) -> tuple[str | None, str | None]:
    """``(content, content_parts)`` columns for a message's content (images already stripped)."""
    if content is None:
        return None, None
    if isinstance(content, str) and _encodable(content):
        return content, None
    plain = _plain_text(content)
    if not _encodable(plain):
        plain = plain.encode("utf-8", "replace").decode("utf-8").replace("\x00", " ")
    return plain, to_json(content)


def decode_content(content: str | None, content_parts: str | None) -> Any:
    """The content as it was given to :func:`encode_content`."""
    if content_parts is not None:
        return json.loads(content_parts)
    return content


def tool_args_text(tool_calls: Any) -> str | None:
    """The arguments of every tool call as one text for the search indexes.

    OpenAI-style calls carry ``function.arguments`` (a JSON string), others
    ``arguments`` or Anthropic-style ``input`` (an object, serialised).
    """
    if not isinstance(tool_calls, list):
        return None
    parts = []
    for call in tool_calls:
        if not isinstance(call, dict):
            continue
        function = call.get("function")
        args = function.get("arguments") if isinstance(function, dict) else None
        if not isinstance(args, str):
            args = call.get("arguments") if isinstance(call.get("arguments"), str) else call.get("input")
        if args is not None:
            parts.append(args if isinstance(args, str) else json.dumps(args, ensure_ascii=False))
    return " ".join(parts) if parts else None
