"""Tool-call arguments decoded with limits: what a model writes must never crash a turn.

Python's ``json.loads`` recurses once per nesting level, so about 2 KB of ``[[[…``
raises ``RecursionError`` (not a ``ValueError``), which slipped past every
``except ValueError`` around argument decoding and ended the turn, leaving the
session unended. :func:`decode_arguments` measures the nesting first, in one
linear pass outside JSON strings, and refuses text over :data:`MAX_ARGUMENT_DEPTH`
levels or :data:`MAX_ARGUMENT_CHARS` characters with an :class:`ArgumentsError`,
a ``ValueError`` whose message says what is wrong; the registry turns it into
the call's error result and the turn goes on. Everything that reads arguments
(dispatch, batching, the CLI's tool line, providers rebuilding history, context
engines) decodes through here.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

__all__ = ["MAX_ARGUMENT_CHARS", "MAX_ARGUMENT_DEPTH", "ArgumentsError", "decode_arguments", "nesting_depth"]

# More than any model writes in one reply (128k output tokens are about 500,000 characters).
MAX_ARGUMENT_CHARS = 2_000_000
# Real tool schemas nest a handful of levels; recursive code downstream (redaction,
# schema checks, the summariser) stays far from Python's limit of 1,000 frames.
MAX_ARGUMENT_DEPTH = 64

# A JSON string once its escaped backslashes and quotes are gone (see nesting_depth).
_STRING = re.compile(r'"[^"]*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class ArgumentsError(ValueError):
    """Arguments that cannot be decoded: the message completes "the arguments …".

    ``reason`` is ``"size"``, ``"depth"`` or ``"json"``: a provider that streams arguments
    retries a request whose JSON came cut (``json``) but passes the others on as text, for
    the registry to answer with an error result.
    """

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def nesting_depth(text: str) -> int:
    """How deep ``[`` and ``{`` nest in ``text`` outside JSON strings (linear, mostly at C speed)."""
    # Escapes pair off from the left, so dropping every pair of backslashes, then every
    # backslash-quote, leaves each string as quotes around quote-free text: one plain run.
    plain = text.replace("\\\\", "").replace('\\"', "")
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", plain))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def decode_arguments(text: str) -> Any:
    """The JSON value of ``text`` (``{}`` for blank text), within the size and depth limits.

    Raises :class:`ArgumentsError` for text too long, nested too deep or not JSON.
    """
    if len(text) > MAX_ARGUMENT_CHARS:
        raise ArgumentsError(f"are {len(text):,} characters long, more than the {MAX_ARGUMENT_CHARS:,} accepted", "size")
    if not text.strip():
        return {}
    # Fewer brackets than the limit cannot nest past it: most arguments skip the scan.
    depth = nesting_depth(text) if text.count("[") + text.count("{") > MAX_ARGUMENT_DEPTH else 0
    if depth > MAX_ARGUMENT_DEPTH:
        raise ArgumentsError(f"nest {depth:,} levels deep, more than the {MAX_ARGUMENT_DEPTH} accepted", "depth")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ArgumentsError(f"are not valid JSON ({exc.msg} at position {exc.pos})", "json") from None
