"""What the fake server and the scripted provider answer: replies and faults.

A script is a queue. Each model request takes the next entry; when the queue
is empty the ``default`` reply answers. Entries are vendor-neutral and each
front end renders them in its own wire format.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from threading import Lock
from typing import Any, Union

__all__ = [
    "FAULT_KINDS",
    "Fault",
    "Reply",
    "Script",
    "ScriptEntry",
    "ScriptedUsage",
    "ToolCall",
    "entry_from_dict",
    "first_user_text",
    "load_script",
]

#: Every fault the fake server can inject, and the HTTP status it answers with.
FAULT_KINDS: dict[str, int] = {
    "rate_limit": 429,
    "billing": 402,
    "auth": 401,
    "forbidden": 403,
    "model_not_found": 404,
    "payload_too_large": 413,
    "context_overflow": 400,
    "content_policy": 400,
    "server_error": 500,
    "bad_gateway": 502,
    "unavailable": 503,
    "overloaded": 529,
    "hang": 200,
    "drop_stream": 200,
    "malformed_json": 200,
    "empty": 200,
    "cut_stream": 200,
    "slow_stream": 200,
    "thinking_signature": 400,
    "image_too_large": 400,
    "image_rejected": 400,
    "multimodal_tool_content": 400,
    "invalid_encrypted_content": 400,
    "long_context_tier": 429,
    "provider_policy_blocked": 404,
    "upstream_rate_limit": 429,
    "unknown": 418,
}


@dataclass(frozen=True)
class ToolCall:
    """A tool call the scripted model makes; ``id`` is generated when empty."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str = ""

    @property
    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(dict(self.arguments), separators=(",", ":"))


@dataclass(frozen=True)
class ScriptedUsage:
    """Token counts to report, in canonical buckets (input excludes the cache)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass(frozen=True)
class Reply:
    """A successful answer: text, tool calls (several = parallel), reasoning, usage.

    ``usage`` None means: estimate from the request and reply sizes (about four
    characters a token). ``delay`` waits before answering. ``cost_usd`` adds a
    provider-reported cost to OpenAI usage, as OpenRouter does.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str = ""
    usage: ScriptedUsage | None = None
    finish_reason: str | None = None
    delay: float = 0.0
    cost_usd: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "tool_calls", tuple(self.tool_calls))

    def resolved_finish(self) -> str:
        """OpenAI-style finish reason: explicit, else tool_calls or stop."""
        return self.finish_reason or ("tool_calls" if self.tool_calls else "stop")


@dataclass(frozen=True)
class Fault:
    """A failure to inject.

    ``kind`` is one of :data:`FAULT_KINDS`. ``retry_after`` sets the
    ``retry-after`` header; ``reset_after`` the vendor's rate-limit reset
    headers (seconds from now); ``limit`` the context window a
    ``context_overflow`` message states; ``seconds`` how long a ``hang`` lasts;
    ``message``/``status`` override the vendor wording and status.
    ``retry_after_date`` sends ``retry-after`` as an HTTP date instead of
    seconds. ``cut_stream`` streams ``message`` (or a default sentence) and
    ends the body cleanly without a finish reason; ``slow_stream`` streams it
    one word every ``seconds``.
    """

    kind: str
    retry_after: float | None = None
    reset_after: float | None = None
    limit: int | None = None
    seconds: float = 30.0
    message: str | None = None
    status: int | None = None
    retry_after_date: bool = False

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {self.kind!r}; choose from {', '.join(FAULT_KINDS)}")

    @property
    def http_status(self) -> int:
        return self.status or FAULT_KINDS[self.kind]


ScriptEntry = Union[Reply, Fault]


class Script:
    """A thread-safe queue of entries plus the default reply.

    Lanes serve conversations that run at once (parallel sub-agents): a
    request whose first user message contains a lane's key takes that lane's
    next entry; every other request takes from the main queue.
    """

    def __init__(self, entries: Iterable[ScriptEntry] = (), default: Reply | None = None) -> None:
        self._queue: deque[ScriptEntry] = deque(entries)
        self._lanes: dict[str, deque[ScriptEntry]] = {}
        self._lock = Lock()
        self.default = default or Reply(text="OK")

    def add(self, *entries: ScriptEntry) -> None:
        with self._lock:
            self._queue.extend(entries)

    def lane(self, key: str, *entries: ScriptEntry) -> None:
        """Queue entries for requests whose first user message contains ``key``."""
        with self._lock:
            self._lanes.setdefault(key, deque()).extend(entries)

    def next(self, first_user_text: str | None = None) -> ScriptEntry:
        with self._lock:
            if first_user_text:
                for key, lane in self._lanes.items():
                    if lane and key in first_user_text:
                        return lane.popleft()
            return self._queue.popleft() if self._queue else self.default

    def clear(self) -> None:
        with self._lock:
            self._queue.clear()
            self._lanes.clear()


def first_user_text(messages: Any) -> str:
    """The text of the first user message in OpenAI or Anthropic form ("" if none)."""
    for message in messages or ():
        if not isinstance(message, Mapping) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return " ".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
        return ""
    return ""

    def __len__(self) -> int:
        with self._lock:
            return len(self._queue)


_USAGE_FIELDS = {f for f in ScriptedUsage.__dataclass_fields__}


def entry_from_dict(data: Mapping[str, Any]) -> ScriptEntry:
    """An entry from its JSON/YAML form: ``{"text": ...}`` or ``{"fault": "rate_limit", ...}``."""
    if not isinstance(data, Mapping):
        raise ValueError(f"a script entry must be a mapping, got {type(data).__name__}")
    data = dict(data)
    if "fault" in data:
        kind = data.pop("fault")
        unknown = set(data) - set(Fault.__dataclass_fields__)
        if unknown:
            raise ValueError(f"fault {kind!r}: unknown fields {sorted(unknown)}")
        return Fault(kind=kind, **data)
    calls = tuple(
        ToolCall(name=c["name"], arguments=c.get("arguments", {}), id=c.get("id", ""))
        for c in data.pop("tool_calls", [])
    )
    usage = data.pop("usage", None)
    if usage is not None:
        unknown = set(usage) - _USAGE_FIELDS
        if unknown:
            raise ValueError(f"usage: unknown fields {sorted(unknown)}; use {sorted(_USAGE_FIELDS)}")
        usage = ScriptedUsage(**usage)
    unknown = set(data) - set(Reply.__dataclass_fields__)
    if unknown:
        raise ValueError(f"reply: unknown fields {sorted(unknown)}")
    return Reply(tool_calls=calls, usage=usage, **data)


def load_script(path: Path) -> Script:
    """A script file: a list of entries, or ``{"default": {...}, "replies": [...]}``.

    JSON, or YAML when the name ends in ``.yaml``/``.yml``.
    """
    text = Path(path).read_text(encoding="utf-8")
    if re.search(r"\.ya?ml$", str(path)):
        import yaml

        data = yaml.safe_load(text)
    else:
        data = json.loads(text)
    default = None
    if isinstance(data, Mapping):
        if data.get("default") is not None:
            entry = entry_from_dict(data["default"])
            if not isinstance(entry, Reply):
                raise ValueError("the default entry must be a reply, not a fault")
            default = entry
        data = data.get("replies", [])
    if not isinstance(data, list):
        raise ValueError("a script is a list of entries or a mapping with 'replies'")
    return Script([entry_from_dict(item) for item in data], default)
