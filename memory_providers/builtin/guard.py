"""Refusing memory content that could steer or rob a future session.

Memory is read back into the system prompt of every later session, so a
saved entry is a standing instruction. Content that tries to override the
agent's instructions, to send secrets somewhere, or that hides characters a
person cannot see is refused with a reason the model can act on.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["SEPARATOR", "refusal_reason"]

#: The line that separates entries in MEMORY.md and USER.md.
SEPARATOR = "§"

_INJECTION = [
    (re.compile(r"\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|earlier|all|system|your)\b"
                r"[^.\n]{0,20}\b(instructions?|prompts?|rules?|guidelines?|directives?)", re.I),
     "it tries to override the agent's instructions"),
    (re.compile(r"\byou are now\b|\bfrom now on,? you (must|will|are)\b|\bnew (system )?instructions?\s*:", re.I),
     "it tries to give the agent a new role or instructions"),
    (re.compile(r"</?\s*(system|assistant|memory-context)\s*>|\[/?(SYSTEM|INST)\]|<\|im_(start|end)\|>", re.I),
     "it contains role or fence markup"),
    (re.compile(r"\b(do not|don't|never)\s+(tell|inform|let)\s+the user\b", re.I),
     "it asks the agent to hide something from the user"),
]

_SECRET_WORDS = r"(api[_-]?key|token|secret|passw(or)?d|credential|\.env\b|\.ssh|id_rsa|id_ed25519|auth\.json|/etc/(passwd|shadow))"
_EXFILTRATION = [
    (re.compile(r"\b(curl|wget|nc|ncat|scp|rsync|invoke-webrequest|fetch)\b[^\n]*(\$\{?[A-Za-z_]*"
                r"(KEY|TOKEN|SECRET|PASSWORD)|" + _SECRET_WORDS + ")", re.I),
     "it sends secrets over the network"),
    (re.compile(r"\b(send|post|upload|forward|exfiltrate|email)\b[^\n]{0,60}" + _SECRET_WORDS
                + r"[^\n]{0,60}\b(to|at)\b[^\n]{0,20}(https?://|\S+@\S+)", re.I),
     "it asks for secrets to be sent elsewhere"),
    (re.compile(r"\b(sk-(ant-)?[A-Za-z0-9_-]{16,}|ghp_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|xox[bpa]-[A-Za-z0-9-]{10,})"),
     "it contains what looks like a credential"),
]


def _invisible(text: str) -> str | None:
    for char in text:
        # Cf: zero-width spaces and joiners, bidi overrides, tag characters, BOM.
        if unicodedata.category(char) == "Cf":
            return f"U+{ord(char):04X} {unicodedata.name(char, 'format character')}"
    return None


def refusal_reason(content: str) -> str | None:
    """Why ``content`` may not be saved, or None when it is fine."""
    hidden = _invisible(content)
    if hidden is not None:
        return f"it contains an invisible character ({hidden}); save plain visible text"
    if any(line.strip() == SEPARATOR for line in content.splitlines()):
        return f"a line holding only {SEPARATOR!r} separates entries and cannot be part of one"
    for pattern, reason in (*_INJECTION, *_EXFILTRATION):
        if pattern.search(content):
            return reason
    return None
