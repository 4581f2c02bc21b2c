"""Fidelity probes: a deterministic check of what a compacted context still holds.

No model is called. The facts a continuation needs are taken from the newest
turns of the conversation before compression (the newest request verbatim,
the active task, file paths, URLs, identifiers, numbers, error messages, and
the user's stated constraints); each is looked up in the context after it.
The share found is the score; what is not found is listed, so an engine can
ask for the summary again naming the misses, or keep them verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .context_engine import HANDOFF_MARKER, MARKER_KEY

__all__ = ["Fact", "Fidelity", "facts_block", "needed_facts", "probe"]

#: User turns, counted back from the newest, whose facts a compaction must keep.
RECENT_TURNS = 3
_MAX_MESSAGES = 400  # a turn of many tool steps is read from its newest messages only
_MAX_CHARS = 400_000
_PER_KIND = 25  # the newest facts of each kind; enough to judge, bounded in cost

_URL = re.compile(r"https?://[^\s<>\"'`)\]]+")
_PATH = re.compile(
    r"(?<![\w/.~-])(?:~|\.{1,2})?(?:/[\w.@+-]+){2,}/?"  # /abs/path, ./rel/path, ~/x/y
    r"|(?<![\w/.-])[\w.-]+(?:/[\w.-]+)+\.\w{1,8}\b"  # dir/file.ext
    r"|(?<![\w/.-])[\w-]+\.(?:py|js|ts|tsx|jsx|md|json|ya?ml|toml|txt|rs|go|c|h|cpp|hpp|java|rb|sh|cfg|ini|lock|html|css|sql|csv|env)\b"
)
_IDENT = re.compile(
    r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b"  # snake_case, CONSTANT_NAME
    r"|\b[a-z]+(?:[A-Z][a-z0-9]+)+\b"  # camelCase
    r"|\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b"  # PascalCase
)
_NUMBER = re.compile(r"(?<![\w.])(?:\d+\.\d+(?:\.\d+)+|\d{3,}(?:\.\d+)?)(?![\w.])")
_ERROR = re.compile(r"(?:\b[A-Z]\w*(?:Error|Exception)\b|\berror:|\bfatal:|\bFAILED\b|\bfailed:)[^\n]*")
_CONSTRAINT = re.compile(r"\b(?:always|never|don't|do not|must|prefer|avoid|only use|make sure)\b", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n")  # a dot inside src/app.py ends no sentence
_WORD = re.compile(r"\w{4,}")
_KEPT_SHARE = 0.6  # a constraint is kept when this share of its words survives (summaries paraphrase)


@dataclass(frozen=True)
class Fact:
    """One thing the continuation needs: its kind and its text."""

    kind: str  # request, task, path, url, identifier, number, error, constraint
    text: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.text}"


@dataclass
class Fidelity:
    """The probe's verdict: ``score`` in [0, 1], the facts checked and those missing."""

    score: float
    checked: int
    missing: list[Fact] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"score": round(self.score, 3), "checked": self.checked, "missing": [str(f) for f in self.missing]}


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):  # image parts are skipped: no pattern ever walks base64 data
        text = "\n".join(str(p.get("text") or "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    else:
        text = ""
    calls = message.get("tool_calls") or ()
    if calls:
        text += "\n" + "\n".join(str((c.get("function") or {}).get("arguments") or "") for c in calls)
    return text


def _window(messages: Sequence[dict[str, Any]], turns: int) -> list[dict[str, Any]]:
    """The newest ``turns`` user turns (with their tool steps), newest messages first, bounded."""
    window: list[dict[str, Any]] = []
    seen_users = 0
    chars = 0
    for message in reversed(messages):
        if len(window) >= _MAX_MESSAGES or chars >= _MAX_CHARS:
            break
        window.append(message)
        chars += len(_text(message))
        if message.get("role") == "user" and message.get(MARKER_KEY) is None:
            seen_users += 1
            if seen_users >= turns:
                break
    return window


def _add(found: dict[tuple[str, str], Fact], counts: dict[str, int], kind: str, text: str) -> None:
    text = text.strip().rstrip(".,;:")
    if len(text) < 3 or counts.get(kind, 0) >= _PER_KIND or (kind, text) in found:
        return
    found[(kind, text)] = Fact(kind, text)
    counts[kind] = counts.get(kind, 0) + 1


def needed_facts(messages: Sequence[dict[str, Any]], *, turns: int = RECENT_TURNS) -> list[Fact]:
    """What the newest ``turns`` user turns mention that a continuation needs, newest first."""
    found: dict[tuple[str, str], Fact] = {}
    counts: dict[str, int] = {}
    requests = [m for m in messages if m.get("role") == "user" and m.get(MARKER_KEY) is None and _text(m).strip()]
    if requests:
        newest = _text(requests[-1]).strip()
        found[("request", newest)] = Fact("request", newest)
        found[("task", "active task")] = Fact("task", newest.splitlines()[0][:200])
    for message in _window(messages, turns):
        if message.get(MARKER_KEY) is not None:
            continue  # the kernel's own notes are not the user's facts
        text = _text(message)
        if not text:
            continue
        for match in _URL.finditer(text):
            _add(found, counts, "url", match.group(0))
        for match in _PATH.finditer(text):
            _add(found, counts, "path", match.group(0))
        for match in _ERROR.finditer(text):
            _add(found, counts, "error", match.group(0)[:120])
        for match in _IDENT.finditer(text):
            _add(found, counts, "identifier", match.group(0))
        for match in _NUMBER.finditer(text):
            _add(found, counts, "number", match.group(0))
        if message.get("role") == "user":
            for sentence in _SENTENCE_END.split(text):
                if _CONSTRAINT.search(sentence):
                    _add(found, counts, "constraint", sentence.rstrip(".!?")[:200])
    return list(found.values())


def _after_text(after: Sequence[dict[str, Any]], tail: int) -> str:
    # The head, every marked note and the newest messages: where kept facts can be. The old
    # middle of a masked list is left out, so the probe stays cheap on a huge list.
    picked = [m for m in after[:8]]
    picked += [m for m in after[8:-tail] if m.get(MARKER_KEY) == HANDOFF_MARKER] if tail < len(after) else []
    picked += list(after[max(8, len(after) - tail) :])
    return "\n".join(_text(m) for m in picked)


def _kept(fact: Fact, text: str, words: set[str], summary_has_task: bool) -> bool:
    if fact.kind == "task":
        return summary_has_task or fact.text in text
    if fact.kind == "constraint":
        needed = {w.lower() for w in _WORD.findall(fact.text)}
        return not needed or len(needed & words) >= _KEPT_SHARE * len(needed)
    return fact.text in text


def probe(
    before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]], *, turns: int = RECENT_TURNS,
    facts: Sequence[Fact] | None = None,
) -> Fidelity:  # fmt: skip
    """How much of what ``before``'s newest turns need is still in ``after``."""
    facts = list(needed_facts(before, turns=turns) if facts is None else facts)
    if not facts:
        return Fidelity(1.0, 0)
    text = _after_text(after, len(_window(before, turns)) + 8)
    words = {w.lower() for w in _WORD.findall(text)} if any(f.kind == "constraint" for f in facts) else set()
    task = re.search(r"## Active Task\s*\n\s*(?!none\b)\S", text, re.I) is not None
    missing = [f for f in facts if not _kept(f, text, words, task)]
    return Fidelity((len(facts) - len(missing)) / len(facts), len(facts), missing)


def facts_block(missing: Sequence[Fact], *, limit_chars: int = 4_000) -> str:
    """The short "facts kept verbatim" section appended to a handoff note."""
    lines = ["## Facts kept verbatim", "(the compaction would have lost these; they are copied from the conversation)"]
    used = sum(len(line) + 1 for line in lines)
    for fact in missing:
        line = f"- {fact.kind}: {fact.text}"
        if used + len(line) + 1 > limit_chars:
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)
