"""Phase 1, no model call: make old messages cheap before anything reads them.

Only messages in ``[start, end)`` (the part about to be summarised or
masked) are rewritten; the head and the tail stay as they were.

* identical tool outputs of 200+ characters: all but the newest copy become
  a one-line pointer (content hash, so the cost is linear);
* old tool results become one informative line per tool
  (``[terminal] ran 'pytest' -> exit 0, 47 lines``);
* images are replaced by a placeholder first, so no later regex pass (secret
  redaction) ever walks base64 data;
* tool-call arguments over 500 characters are shrunk and stay valid JSON.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Sequence
from typing import Any

from hermes.kernel import decode_arguments

from .._messages import call_arguments, call_name, strip_images, text_of

__all__ = ["DEDUPE_MIN_CHARS", "MAX_ARGUMENT_CHARS", "describe_result", "prune", "shrink_arguments"]

DEDUPE_MIN_CHARS = 200
MAX_ARGUMENT_CHARS = 500
_VALUE_KEEP = 120  # characters kept of each long string argument


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _lines(text: str) -> int:
    return text.count("\n") + 1 if text else 0


def describe_result(name: str, args: dict[str, Any], output: str) -> str:
    """One line that says what a tool call did, so the fact survives without its output."""
    first = output.lstrip().split("\n", 1)[0].strip()  # never split a long output into all its lines
    if name == "terminal":
        command = _short(str(args.get("command", "")), 60)
        if first.startswith("exit code:"):
            outcome = f"exit {first.split(':', 1)[1].strip()}"
            body = output.split("\n", 1)[1] if "\n" in output else ""
            return f"[terminal] ran '{command}' -> {outcome}, {_lines(body)} lines"
        return f"[terminal] ran '{command}' -> {_short(first, 60)}"
    if name == "read_file":
        return f"[read_file] read {args.get('path', '?')} from line {args.get('offset', 1)} ({len(output):,} chars)"
    if name == "write_file":
        return f"[write_file] wrote {args.get('path', '?')} ({len(str(args.get('content', ''))):,} chars) -> {_short(first, 60)}"
    if name == "patch":
        return f"[patch] edited {args.get('path', '?')} -> {_short(first, 80)}"
    if name == "search_files":
        where = args.get("path") or "."
        return f"[search_files] searched '{_short(str(args.get('pattern', '')), 40)}' in {where} -> {_lines(output)} lines"
    shown = _short(json.dumps(args, ensure_ascii=False, sort_keys=True), 60) if args else "no arguments"
    return f"[{name}] {shown} -> {_lines(output)} lines, {len(output):,} chars: {_short(first, 60)}"


def _shrink_value(value: Any) -> Any:
    if isinstance(value, str) and len(value) > _VALUE_KEEP + 40:
        return f"{value[:_VALUE_KEEP]}… [{len(value) - _VALUE_KEEP:,} more chars]"
    if isinstance(value, list):
        kept = [_shrink_value(v) for v in value[:10]]
        return kept + ([f"… [{len(value) - 10} more items]"] if len(value) > 10 else [])
    if isinstance(value, dict):
        return {k: _shrink_value(v) for k, v in value.items()}
    return value


def shrink_arguments(arguments: str) -> str:
    """Arguments of at most about 500 characters that are still a JSON object."""
    if len(arguments) <= MAX_ARGUMENT_CHARS:
        return arguments
    try:
        parsed = decode_arguments(arguments)
    except ValueError:  # not JSON, too deep or too long: kept as a cut string
        parsed = None
    if not isinstance(parsed, dict):
        return json.dumps({"_shrunk": arguments[:_VALUE_KEEP] + "…"}, ensure_ascii=False)
    shrunk = json.dumps(_shrink_value(parsed), ensure_ascii=False)
    if len(shrunk) > MAX_ARGUMENT_CHARS:  # many keys: keep their names only
        shrunk = json.dumps({"_shrunk_keys": [k[:40] for k in list(parsed)[:20]]}, ensure_ascii=False)
    return shrunk


def _shrink_calls(message: dict[str, Any]) -> dict[str, Any]:
    calls = message.get("tool_calls")
    if not calls or all(len(str((c.get("function") or {}).get("arguments", ""))) <= MAX_ARGUMENT_CHARS for c in calls):
        return message
    new_calls = []
    for call in calls:
        function = dict(call.get("function") or {})
        function["arguments"] = shrink_arguments(str(function.get("arguments", "{}")))
        new_calls.append({**call, "function": function})
    return {**message, "tool_calls": new_calls}


def prune(
    messages: Sequence[dict[str, Any]], start: int, end: int, keep: Collection[int] = ()
) -> list[dict[str, Any]]:
    """A copy of ``messages`` with ``[start, end)`` pruned, except the indices in ``keep``;
    duplicates count the newest copy anywhere after ``start``."""
    calls: dict[str, dict[str, Any]] = {}
    for message in messages:
        for call in message.get("tool_calls") or ():
            calls[str(call.get("id"))] = call
    seen: set[str] = set()
    duplicate: set[int] = set()
    for index in range(len(messages) - 1, start - 1, -1):  # newest first, so the newest copy is kept
        message = messages[index]
        if message.get("role") != "tool":
            continue
        text = text_of(message)
        if len(text) < DEDUPE_MIN_CHARS:
            continue
        digest = hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=16).hexdigest()
        if digest in seen and index < end:
            duplicate.add(index)
        seen.add(digest)
    result = list(messages)
    for index in range(start, end):
        if index in keep:
            continue
        message = strip_images(messages[index])
        role = message.get("role")
        if role == "assistant":
            message = _shrink_calls(message)
        elif role == "tool":
            call = calls.get(str(message.get("tool_call_id")), {})
            name = call_name(call) if call else str(message.get("tool_name") or "tool")
            if index in duplicate:
                line = f"[{name}] same output as a later {name} call (duplicate removed)"
            else:
                line = describe_result(name, call_arguments(call) if call else {}, text_of(message))
            if index in duplicate or len(line) < len(text_of(message)):
                message = {**message, "content": line}
        result[index] = message
    return result
