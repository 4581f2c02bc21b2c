"""Compaction beside the engine: when to compress, and one compression as the kernel runs it.

:func:`compress_if_due` asks the engine before a model call (a rough estimate
before the turn's first call, reported tokens after); :func:`compress_agent`
runs one compression: ask, hook, compress, review, rotate, record, tell.

The engine decides what the shorter history is; this module does the
kernel's part around it. It asks the engine first whether there is anything
to do (so a ``/compress`` below the threshold says why and fires no hook),
shows the note for review when asked, stores what the compaction kept
(fidelity score, misses, the note) with the new session, fires
``on_post_compress``, and tells the user in one line how it went, a failed
summary included.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..context_engine import estimate_tokens
from .events import emit
from .history import repair_history
from .sessions import ensure_session, rotate
from .turn_state import TurnFailed, request_tools

if TYPE_CHECKING:
    from .loop import Agent

__all__ = ["MAX_COMPRESSIONS", "ReviewDecision", "Reviewer", "compress_agent", "compress_if_due", "fidelity_line"]

#: Compressions in a row before a call gives up: a preflight pass, or a context-overflow retry.
MAX_COMPRESSIONS = 3

#: ``(decision, text)``: ``accept``, ``edit`` with the edited note, or ``cancel``.
ReviewDecision = tuple[str, "str | None"]
#: ``reviewer(note, fidelity) -> ReviewDecision``, shown before the session rotates.
Reviewer = Callable[[str, "dict[str, Any] | None"], ReviewDecision]


def fidelity_line(fidelity: dict[str, Any] | None) -> str:
    """``fidelity 0.92 (missing: path: a.py, …)`` for a notice; empty without a probe."""
    if not fidelity:
        return ""
    text = f"fidelity {float(fidelity.get('score', 1.0)):.2f}"
    restored = fidelity.get("restored") or []
    if restored:
        text += f" (summary {float(fidelity.get('summary_score', 0)):.2f}; {len(restored)} facts kept verbatim)"
    missing = fidelity.get("missing") or []
    if missing:
        shown = ", ".join(str(m) for m in missing[:3])
        text += f" (missing: {shown}{', …' if len(missing) > 3 else ''})"
    return text


def _review_wanted(agent: Agent, review: bool) -> Reviewer | None:
    reviewer = agent.review_compression
    if reviewer is None:
        return None
    config = agent.tool_context.config
    asked = str(config.get("compression.review", "off") if config is not None else "off").lower() == "ask"
    return reviewer if (review or asked) else None


def compress_agent(agent: Agent, focus_topic: str | None = None, *, manual: bool = False, review: bool = False) -> bool:
    """Compress ``agent``'s history through its engine and continue in a child session.

    Returns False (and sets ``agent.compress_note`` to why) when nothing changed;
    raises :class:`~.turn_state.TurnFailed` without a context engine.
    """
    engine = agent.engine
    if engine is None:
        raise TurnFailed("no context engine is active, so the conversation cannot be compressed")
    session_id = ensure_session(agent)
    if manual:
        engine.resume_automatic()
    messages = list(agent.messages)
    skip = engine.skip_reason(messages)
    if skip:
        return _unchanged(agent, skip, quiet=not manual and skip == agent.compress_note)
    before = _estimate(agent)
    emit(agent.on_event, "status", f"compacting context… ({before:,} tokens)")
    recalled = agent.host.call("on_pre_compress", session_id=session_id, messages=messages)
    engine.pre_compress_context = [text for text in recalled if isinstance(text, str) and text.strip()]
    current = engine.last_prompt_tokens or before
    compressed = repair_history(engine.compress(list(messages), current_tokens=current, focus_topic=focus_topic))
    error = (engine.get_status() or {}).get("last_error")
    if compressed == agent.messages:
        return _unchanged(agent, f"the summary failed ({error})" if error else "the context engine left it as it was")
    probe = getattr(engine, "last_fidelity", None)  # an engine that skipped ContextEngine.__init__ has none
    fidelity = dict(probe) if isinstance(probe, dict) else None
    edited = False
    reviewer = _review_wanted(agent, review)
    if reviewer is not None:
        note = engine.handoff_note(compressed) or ""
        decision, text = reviewer(note, fidelity)
        if decision == "cancel":
            return _unchanged(agent, "compression cancelled in review; the context stays as it was")
        if decision == "edit" and text is not None and text.strip() and text.strip() != note.strip():
            compressed, edited = engine.replace_handoff(compressed, text.strip()), True
    if fidelity is not None:
        fidelity["edited"] = edited
    old = agent.session_id
    rotate(agent, compressed)
    new = agent.session_id
    assert old is not None and new is not None
    if agent.store is not None:
        agent.store.record_compaction(
            new, parent_session_id=old, engine=engine.name, fidelity=fidelity.get("score") if fidelity else None,
            missing=fidelity.get("missing", []) if fidelity else [], handoff=engine.handoff_note(compressed),
            edited=edited, details=fidelity,
        )  # fmt: skip
    agent.host.call("on_post_compress", session_id=old, new_session_id=new, fidelity=fidelity)
    after = _estimate(agent)
    engine.last_prompt_tokens = after  # until the next response reports the real size
    fallback = bool((getattr(engine, "last_compression", None) or {}).get("fallback"))
    what = "compacted context with a mechanical list, NOT a summary" if fallback else "compacted context"
    details = "; ".join(p for p in (fidelity_line(fidelity), "note edited" if edited else "") if p)
    agent.compress_note = f"{what}: {before:,} → {after:,} tokens, now session {new}" + (f" · {details}" if details else "")
    emit(agent.on_event, "status", agent.compress_note, fidelity=fidelity)
    if error:
        emit(agent.on_event, "status", f"warning: the summary failed: {error}")
    if agent.store is not None and len(agent.store.compression_ancestry(new)) > 2:
        emit(agent.on_event, "status", "warning: this conversation has been compressed several times; details fade each time (consider /new)")
    return True


def _unchanged(agent: Agent, why: str, *, quiet: bool = False) -> bool:
    # ``quiet``: an automatic check repeating the last reason (a resting summary model, step
    # after step) is said once, not on every step of the turn.
    agent.compress_note = why
    if not quiet:
        emit(agent.on_event, "status", f"context left as it was: {why}")
    return False


def _estimate(agent: Agent) -> int:
    return estimate_tokens(agent.transcript.request_messages(agent.system_prompt, []), request_tools(agent))


def compress_if_due(agent: Agent, *, preflight: bool) -> None:
    """Compress when the engine says so: a rough estimate before the first call, reported tokens after."""
    engine = agent.engine
    if engine is None:
        return
    if engine.should_compress():
        agent.compress()
    elif preflight:
        for _ in range(MAX_COMPRESSIONS):  # a resumed session on a smaller model may need several
            messages = agent.transcript.request_messages(agent.system_prompt, [])
            if not engine.should_compress_preflight(messages, request_tools(agent)):
                return
            if not agent.compress():
                return
