"""Properties of both built-in engines over random transcripts (hypothesis).

Whatever the transcript (tool calls, parallel calls, images, long arguments,
with or without a system message) and however the summary call goes, the
result is a list the strict validator accepts, the head stays verbatim while
no summary exists, and the newest user message survives verbatim as its own
message with no other user message after it (except a handoff whose wording
points back at it).
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes.context_engines.compressor import Compressor
from hermes.context_engines.compressor.assembly import HANDOFF_PREFIX_INLINE
from hermes.context_engines.masking import Masking
from hermes.kernel import Config, ProviderError
from hermes.kernel.testing import validate_messages

from .transcripts import transcripts, user

# Modest by default to keep the suite fast; HERMES_HYPOTHESIS_EXAMPLES=2000 for a deep run.
_EXAMPLES = int(os.environ.get("HERMES_HYPOTHESIS_EXAMPLES", "60"))
_SETTINGS = settings(max_examples=_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_OUTCOMES = ["ok", "empty", "none", "auth", "timeout", "server_error", "overloaded", "rate_limit", "format_error", "crash"]


def _summarizer(outcome: str) -> Any:
    if outcome == "none":
        return None

    def summarize(system: str, prompt: str, max_tokens: int) -> str:
        if outcome == "ok":
            return "## Active Task\nkeep going\n## Goal\ntest"
        if outcome == "empty":
            return "  "
        if outcome == "crash":
            raise RuntimeError("the summary model broke")
        raise ProviderError(outcome, "scripted failure")  # type: ignore[arg-type]

    return summarize


def _body(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return messages[1:] if messages and messages[0]["role"] == "system" else messages


def _check(engine: Any, messages: list[dict[str, Any]], focus: str | None) -> list[dict[str, Any]]:
    original = [dict(m) for m in messages]
    out = engine.compress(messages, focus_topic=focus)
    assert messages == original, "the engine changed its input"
    validate_messages(out)
    body, out_body = _body(messages), _body(out)
    if messages[0]["role"] == "system":
        assert out[0]["role"] == "system"
    newest = max(i for i, m in enumerate(body) if m["role"] == "user")
    kept = [i for i, m in enumerate(out_body) if m == body[newest]]
    assert kept, "the newest user message is not kept verbatim as its own message"
    for later in out_body[kept[-1] + 1 :]:  # only a handoff that points back at it may follow
        assert later["role"] != "user" or str(later["content"]).startswith(HANDOFF_PREFIX_INLINE), later
    return out


@_SETTINGS
@given(
    messages=transcripts(min_turns=1, max_turns=14),
    engine_kind=st.sampled_from(["compressor", "masking"]),
    outcome=st.sampled_from(_OUTCOMES),
    focus=st.one_of(st.none(), st.just("the database schema")),
    protect=st.sampled_from([3, 3, 0, 1, 2]),
    window=st.sampled_from([8_000, 8_000, 3_000, 20_000]),
)
def test_any_transcript_compresses_to_a_valid_list(messages, engine_kind, outcome, focus, protect, window) -> None:
    cls = Compressor if engine_kind == "compressor" else Masking
    config = Config({"compression": {"threshold": 0.5, "target_ratio": 0.2, "protect_first_n": protect}})
    engine = cls(context_length=window, config=config, summarizer=_summarizer(outcome))
    engine.pre_compress_context = ["memory: the user prefers tabs"]
    out = _check(engine, messages, focus)
    body, out_body = _body(messages), _body(out)
    if len(body) >= protect:  # no summary existed yet: the protected head stays as it was
        assert out_body[:protect] == body[:protect]

    # A second round on the compressed list plus a new turn: the head may go, validity may not.
    again = out + [{"role": "assistant", "content": "done"}] if out[-1]["role"] == "user" else list(out)
    again.append(user("and now the follow-up, please"))
    second = _check(engine, again, None)
    assert sum("[CONTEXT HANDOFF]" in str(m.get("content")) for m in second) <= 1
