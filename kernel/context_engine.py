"""The context-engine contract: when to compress a conversation and how.

An engine is a driver in ``hermes.context_engines`` chosen by
``context.engine``. The kernel creates one per agent, registers it with the
plugin host (so its ``@hookimpl`` methods receive the kernel hooks), feeds it
every response's usage, asks :meth:`ContextEngine.should_compress` after each
response, and hands it the message list to :meth:`ContextEngine.compress`.
Session rotation, the ``on_pre_compress`` hook and persistence stay in the
kernel; an engine only turns one message list into a shorter valid one.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from .hookspecs import hookimpl

__all__ = ["HANDOFF_MARKER", "IMAGE_TOKENS", "MARKER_KEY", "ContextEngine", "Summarizer", "estimate_tokens"]

#: The message field that names a marker the kernel or its engine inserted. It is
#: stored with the message (``messages.marker``) and never sent to a provider, so
#: no text a user pastes or a tool returns can pose as one.
MARKER_KEY = "marker"
#: ``message[MARKER_KEY]`` of the message that carries an engine's handoff note.
HANDOFF_MARKER = "handoff"

#: ``summarizer(system, prompt, max_tokens) -> text``: one model call made for the
#: engine by the kernel (the auxiliary summary model, falling back once to the
#: main one). It raises ``hermes.kernel.ProviderError`` when the call fails, so
#: an engine can tell an auth or network failure from any other.
Summarizer = Callable[[str, str, int], str]

_CHARS_PER_TOKEN = 4
#: What one image costs, whatever its base64 size (providers bill images by pixels, not bytes).
IMAGE_TOKENS = 1_500
_IMAGE_PARTS = frozenset({"image_url", "image", "input_image"})


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        chars = 0
        for part in content:
            if isinstance(part, dict) and part.get("type") in _IMAGE_PARTS:
                chars += IMAGE_TOKENS * _CHARS_PER_TOKEN  # never the base64 data as if it were text
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                chars += len(part["text"]) + 16
            else:
                chars += len(json.dumps(part, ensure_ascii=False))
        return chars
    return 0 if content is None else len(json.dumps(content, ensure_ascii=False))


def _calls_chars(calls: Any) -> int:
    # The usual shape is measured without serialising it (this runs over every message).
    chars = 0
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, dict) else None
        arguments = function.get("arguments") if isinstance(function, dict) else None
        if not isinstance(arguments, str):
            return len(json.dumps(calls, ensure_ascii=False, default=str))
        chars += len(arguments) + arguments.count('"') + len(str(function.get("name") or "")) + len(str(call.get("id") or "")) + 60
    return chars


def estimate_tokens(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()) -> int:
    """A rough token count (characters / 4) of messages and tool schemas, for preflight checks.

    Each image part counts :data:`IMAGE_TOKENS`, however long its base64 data.
    """
    chars = 0
    for message in messages:
        chars += _content_chars(message.get("content"))
        calls = message.get("tool_calls")
        if calls:
            chars += _calls_chars(calls)
        chars += 16  # role and framing
    if tools:
        chars += len(json.dumps(list(tools), ensure_ascii=False))
    return chars // _CHARS_PER_TOKEN + 1


class ContextEngine(ABC):
    """Decides when the conversation must shrink and produces the shorter version.

    Token state is public: ``last_prompt_tokens`` and ``last_completion_tokens``
    (from the latest response), ``threshold_tokens`` (compress at or above
    it), ``context_length`` (the model's window) and ``compression_count``.

    After a compression the kernel reads ``system_note`` into the rebuilt
    system prompt. The kernel sets, before each :meth:`compress` call, ``pre_compress_context``
    to the texts ``on_pre_compress`` listeners returned (give them to the
    summarizer as extra context), and ``summarizer`` when a model is available
    for summaries.

    :param context_length: the model's context window in tokens.
    :param config: the merged :class:`~hermes.kernel.Config` (engines read their own keys).
    :param summarizer: a :data:`Summarizer`, or None when no model may be called.
    """

    #: The engine's name (its entry-point name).
    name: str = ""
    #: Config keys the engine reads (``ConfigKey`` entries); ``hermes config set`` checks them.
    config_keys: ClassVar[Sequence[Any]] = ()

    def __init__(
        self,
        *,
        context_length: int = 128_000,
        config: Any = None,
        summarizer: Summarizer | None = None,
        model: str = "",
    ) -> None:
        self.config = config
        self.summarizer = summarizer
        self.model = model
        self.context_length = context_length
        self.threshold_tokens = context_length
        self.last_prompt_tokens = 0
        self.last_completion_tokens = 0
        self.compression_count = 0
        self.pre_compress_context: list[str] = []
        #: Set by :meth:`compress` to tell the model earlier turns were compacted;
        #: the kernel adds it to the system prompt it rebuilds after the compression.
        self.system_note: str | None = None
        #: The latest compression's fidelity probe (:mod:`hermes.kernel.fidelity`), or None.
        self.last_fidelity: dict[str, Any] | None = None
        self.update_model(model, context_length)

    # --- required ----------------------------------------------------------------

    @abstractmethod
    def update_from_response(self, usage: Any) -> None:
        """Record a response's :class:`~hermes.kernel.CanonicalUsage` (prompt tokens drive the trigger)."""

    @abstractmethod
    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        """True when the conversation should be compressed before the next call."""

    @abstractmethod
    def compress(
        self,
        messages: list[dict[str, Any]],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
    ) -> list[dict[str, Any]]:
        """A shorter message list that every provider accepts (no system message in it)."""

    # --- optional ------------------------------------------------------------------

    def should_compress_preflight(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()) -> bool:
        """Before the first call of a turn, from a rough estimate (no usage reported yet)."""
        return estimate_tokens(messages, tools) >= self.threshold_tokens

    def update_model(self, model: str, context_length: int) -> None:
        """The model or its window changed (a fallback, or an overflow error stated the real limit)."""
        self.model = model
        self.context_length = context_length
        self.threshold_tokens = int(context_length * 0.85)

    def resume_automatic(self) -> None:
        """A manual ``/compress``: lift any switch-off of automatic compression (anti-thrashing)."""

    def on_session_start(self, session_id: str, **kwargs: Any) -> None:
        """A session (new or resumed) starts with this engine."""

    def on_session_reset(self) -> None:
        """``/new``: forget per-conversation state (counters, cooldowns)."""
        self.last_prompt_tokens = 0
        self.last_completion_tokens = 0
        self.compression_count = 0

    def skip_reason(self, messages: list[dict[str, Any]]) -> str | None:
        """Why :meth:`compress` would leave ``messages`` unchanged, or None to go ahead.

        Asked before ``on_pre_compress`` fires, so a ``/compress`` with nothing to
        do says why in one line and no listener runs for nothing.
        """
        return None

    def handoff_note(self, messages: Sequence[dict[str, Any]]) -> str | None:
        """The note a compression left in ``messages`` (the message marked ``handoff``), or None."""
        for message in messages:
            if message.get(MARKER_KEY) == HANDOFF_MARKER:
                content = message.get("content")
                return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        return None

    def replace_handoff(self, messages: Sequence[dict[str, Any]], text: str) -> list[dict[str, Any]]:
        """``messages`` with the note replaced by ``text`` (the user edited it in review)."""
        return [{**m, "content": text} if m.get(MARKER_KEY) == HANDOFF_MARKER else m for m in messages]

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """Tools the engine offers the model (OpenAI Chat schemas); none by default."""
        return []

    def handle_tool_call(self, name: str, args: dict[str, Any]) -> str:
        """Run one of the engine's tools."""
        raise NotImplementedError(f"{self.name} has no tool {name!r}")

    def get_status(self) -> dict[str, Any]:
        """Token state for status lines and ``hermes doctor``."""
        return {
            "engine": self.name,
            "model": self.model,
            "context_length": self.context_length,
            "threshold_tokens": self.threshold_tokens,
            "last_prompt_tokens": self.last_prompt_tokens,
            "last_completion_tokens": self.last_completion_tokens,
            "compression_count": self.compression_count,
        }

    # --- kernel hooks (override to listen) ------------------------------------------

    @hookimpl
    def on_session_switch(self, old_session_id: str | None, new_session_id: str, reason: str) -> None:
        """The active session changed; ``reset`` and ``new`` call :meth:`on_session_reset`."""
        if reason in ("new", "reset"):
            self.on_session_reset()

    @hookimpl
    def on_session_end(self, session_id: str, messages: list[dict[str, Any]], reason: str) -> None:
        """The session really ended."""
