"""Short automatic session titles: from the auxiliary model, or locally from the first request.

:class:`TitleSchedule` (a chat's REPL) runs the title call on a background
thread after the first completed turn of an untitled session, through the
context engine's summarizer (``auxiliary.compression`` when set, else the main
model); an answer-shaped reply (a model that answered instead of naming) is
dropped rather than stored. :class:`LocalTitle` (a one-shot, a stateless API
request) names the session after its first user message with no model call,
so such a turn makes exactly the calls its answer needs. A title the user set
is never replaced. ``sessions.auto_title: false`` turns both off.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable
from typing import Any

from ..store.titles import sanitize_title

__all__ = ["LocalTitle", "TitleSchedule", "clean_title", "local_title", "title_prompt"]

log = logging.getLogger(__name__)

# What the model reads of the exchange, and the most words a title may have:
# titling is a 3-7 word task, a longer reply is an answer, not a name.
MAX_INPUT_CHARS = 1000
MAX_WORDS = 12
MAX_CHARS = 80
LOCAL_MAX_CHARS = 60  # a local title is the request's start: long enough to recognise, short in a list
TITLE_MAX_TOKENS = 60

TITLE_SYSTEM = (
    "You name conversations so their owner can find them again in a list. Read the opening exchange and "
    "reply with JSON only, {\"title\": \"...\"}: three to seven words in sentence case naming what the user "
    "wants done, keeping file names, error codes and technical terms exact, with no quotes, no trailing "
    "punctuation and no prefix. Name the conversation; never answer it."
)


def title_prompt(user_text: str, answer_text: str) -> str:
    """The user-side prompt: the first request and the start of the answer, capped."""
    user = user_text.strip()[: MAX_INPUT_CHARS]
    answer = answer_text.strip()[: MAX_INPUT_CHARS // 2]
    return f"User:\n{user}\n\nAssistant (beginning):\n{answer}"


def clean_title(reply: str) -> str | None:
    """The title in a model reply (JSON or plain text), tidied; None when it is not title-shaped."""
    text = reply.strip()
    fenced = re.search(r"\{.*\}", text, re.S)
    if fenced:
        try:
            value = json.loads(fenced.group(0)).get("title")
            text = value if isinstance(value, str) else ""
        except (ValueError, AttributeError):
            pass
    text = text.strip().splitlines()[0].strip() if text.strip() else ""
    text = re.sub(r"^(title\s*:\s*)", "", text, flags=re.I).strip().strip("\"'`*").rstrip(".!?:;,").strip()
    if not text or len(text.split()) > MAX_WORDS or len(text) > MAX_CHARS:
        return None
    return text


def local_title(user_text: str) -> str | None:
    """The first request as a title: one line, whitespace collapsed, cut at a word with ``…`` past 60 characters."""
    text = sanitize_title(user_text.encode("utf-8", "replace").decode("utf-8"))
    if text is None or len(text) <= LOCAL_MAX_CHARS:
        return text
    return text[: LOCAL_MAX_CHARS - 3].rsplit(" ", 1)[0] + "…"


def _store_title(store: Any, session_id: str, title: str) -> None:
    from ..store import TitleInUseError

    try:
        store.set_title(session_id, title)
    except TitleInUseError:  # titles are unique: this session's id tells it apart
        store.set_title(session_id, f"{title} ({session_id[-6:]})")


def _first_request(agent: Any) -> str | None:
    first = next((m.get("content") for m in agent.messages if m.get("role") == "user"), None)
    return first if isinstance(first, str) else None


class LocalTitle:
    """A schedule (``agent.reviews``) that names an untitled session after its first user message, no model call.

    Runs after every turn of the agent, on the turn's thread: one cheap store
    write, so it is done before a one-shot exits. A session already titled
    (by its user, or by an earlier turn) keeps its title.
    """

    name = "title"

    def maybe_start(self, agent: Any, result: dict[str, Any]) -> None:
        session_id = result.get("session_id") or agent.session_id
        first = _first_request(agent)
        if agent.store is None or not session_id or first is None:
            return
        try:
            row = agent.store.get_session(session_id)
            title = local_title(first)
            if row is not None and not row.get("title") and title is not None:
                _store_title(agent.store, session_id, title)
        except Exception as exc:  # a title is a nicety: it never disturbs the conversation
            log.info("no title for %s: %s", session_id, exc)

    def wait(self, timeout: float) -> None:
        """Nothing runs in the background: the title was stored with the turn."""


class TitleSchedule:
    """A review-like schedule (``agent.reviews``) that titles a session after its first exchange."""

    name = "title"

    def __init__(self, summarize: Callable[[str, str, int], str]) -> None:
        self.summarize = summarize
        self.threads: list[threading.Thread] = []

    def maybe_start(self, agent: Any, result: dict[str, Any]) -> threading.Thread | None:
        if not result.get("completed") or agent.store is None or agent.turn != 1:
            return None
        session_id = result.get("session_id") or agent.session_id
        user = _first_request(agent)
        if not session_id or user is None:
            return None
        answer = str(result.get("final_response") or "")
        thread = threading.Thread(
            target=self._run, args=(agent.store, session_id, user, answer), name="hermes-title", daemon=True
        )
        self.threads.append(thread)
        thread.start()
        return thread

    def _run(self, store: Any, session_id: str, user: str, answer: str) -> None:
        try:
            session = store.get_session(session_id)
            if session is None or session.get("title"):
                return  # deleted meanwhile, or the user named it: theirs wins
            title = clean_title(self.summarize(TITLE_SYSTEM, title_prompt(user, answer), TITLE_MAX_TOKENS))
            if title is None or (store.get_session(session_id) or {}).get("title"):
                return
            _store_title(store, session_id, title)
        except Exception as exc:  # a title is a nicety: it never disturbs the conversation
            log.info("no automatic title for %s: %s", session_id, exc)

    def wait(self, timeout: float) -> None:
        """Let a running title call finish (one-shot mode, before the process exits)."""
        for thread in self.threads:
            thread.join(timeout)
