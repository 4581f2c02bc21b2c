"""Text helpers providers run over what they store and return (Hermes's ``agent.memory_manager``,
``agent.message_content`` and ``agent.skill_commands``)."""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "extract_user_instruction_from_skill_message", "flatten_message_text", "rewrite_memory_query", "sanitize_context",
]

# What a recall fence looks like once a provider echoes it back: the block itself, the note
# Hermes puts before recalled text, and stray opening/closing tags.
_BLOCK = re.compile(r"<\s*memory-context\s*>.*?</\s*memory-context\s*>", re.IGNORECASE | re.DOTALL)
_NOTE = re.compile(
    r"\[System note:\s*The following is recalled memory context,\s*NOT new user input\.\s*"
    r"Treat as (?:informational background data|authoritative reference data[^\]]*)\.\]\s*",
    re.IGNORECASE,
)
_TAG = re.compile(r"</?\s*memory-context\s*>", re.IGNORECASE)


def sanitize_context(text: str) -> str:
    """``text`` without recall fences, their contents and the recall note.

    A provider that stores the user's turn verbatim must not store recalled
    memory again (it would be recalled as if the user had said it).
    """
    return _TAG.sub("", _NOTE.sub("", _BLOCK.sub("", text)))


#: Content parts that carry no text the user could see.
_SILENT_PARTS = frozenset({"image", "image_url", "input_image", "audio", "input_audio", "file", "input_file"})
_TEXT_FIELDS = ("text", "content", "output_text", "input_text")


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part

    def field(name: str) -> Any:
        return part.get(name) if isinstance(part, dict) else getattr(part, name, None)

    if str(field("type") or "").strip().lower() in _SILENT_PARTS:
        return ""
    for name in _TEXT_FIELDS:
        value = field(name)
        if isinstance(value, str):
            return value
    return ""


def flatten_message_text(content: Any, *, sep: str = "\n") -> str:
    """The visible text of a message's ``content``: a string, a list of parts, or one part."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return sep.join(text for text in map(_part_text, content) if text)
    text = _part_text(content)
    if text:
        return text
    try:
        return str(content)
    except Exception:  # noqa: BLE001 - an object whose str() fails has no visible text
        return ""


# How Hermes Agent words a turn that invoked a /skill or a skill bundle (facts from its
# skill_commands module): providers call the extractor so memory keeps the user's words only.
_SKILL_PREFIX = "[IMPORTANT: The user has invoked the "
_ONE_SKILL = "The full skill content is loaded below.]"
_ONE_SKILL_INSTRUCTION = "The user has provided the following instruction alongside the skill invocation: "
_RUNTIME_NOTE = "\n\n[Runtime note:"
_BUNDLE = " skill bundle,"
_BUNDLE_INSTRUCTION = "\nUser instruction: "
_BUNDLE_FIRST_SKILL = "\n\n[Loaded as part of the "


def _between(text: str, start: int, marker_len: int, end_marker: str) -> str | None:
    rest = text[start + marker_len :]
    end = rest.find(end_marker)
    rest = (rest if end < 0 else rest[:end]).strip()
    return rest or None


def extract_user_instruction_from_skill_message(content: Any) -> str | None:
    """What the user asked in a skill-invocation turn.

    A plain message comes back unchanged; a skill turn gives the user's
    instruction, or None when there was none (nothing worth storing); a
    non-string gives None.
    """
    if not isinstance(content, str):
        return None
    if not content.startswith(_SKILL_PREFIX):
        return content
    if _BUNDLE in content:
        # A bundle puts the instruction before the skills: the first occurrence is the user's.
        at = content.find(_BUNDLE_INSTRUCTION)
        return None if at < 0 else _between(content, at, len(_BUNDLE_INSTRUCTION), _BUNDLE_FIRST_SKILL)
    if _ONE_SKILL in content:
        # One skill puts it after the skill's body, which may quote the marker: the last one counts.
        at = content.rfind(_ONE_SKILL_INSTRUCTION)
        return None if at < 0 else _between(content, at, len(_ONE_SKILL_INSTRUCTION), _RUNTIME_NOTE)
    return None


def rewrite_memory_query(user_message: str) -> str:
    """A cleaner recall query for ``user_message``, or ``""`` to search with the message itself.

    Hermes Agent asks an auxiliary model for the rewrite; hermes-kernel gives
    providers no model of their own, so the answer is always ``""``, which
    every caller treats as "use the original text" (the behaviour with the
    rewrite switched off).
    """
    return ""
