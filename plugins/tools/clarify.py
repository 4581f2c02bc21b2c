"""The ``clarify`` toolset: ask the user a question in an interactive chat.

It works only where someone can answer (``ctx.ask_user`` is set, the REPL).
In one-shot mode it fails with advice to go on with a stated assumption, and
``interactive=True`` keeps it out of parallel batches and one-shot sessions.
"""

from __future__ import annotations

from typing import Any

from hermes.kernel import Tool, ToolContext, ToolError

from ._common import req_str

__all__ = ["CLARIFY", "MAX_CHOICES", "TOOLS", "clarify"]

TOOLSET = "clarify"
MAX_CHOICES = 6


def _choices(raw: Any) -> list[str] | None:
    if raw is None or raw == []:
        return None
    if not isinstance(raw, list) or not all(isinstance(c, str) and c.strip() for c in raw):
        raise ToolError("choices must be a list of non-empty strings.")
    if len(raw) > MAX_CHOICES:
        raise ToolError(f"give at most {MAX_CHOICES} choices; the user can always answer in their own words.")
    return [c.strip() for c in raw]


def clarify(args: dict[str, Any], ctx: ToolContext) -> str:
    """Ask the user ``question`` (optionally offering ``choices``) and return the answer."""
    question = req_str(args, "question").strip()
    choices = _choices(args.get("choices"))
    if ctx.ask_user is None:
        raise ToolError(
            "clarify only works in an interactive chat, and no one can answer here. Proceed on your best "
            "assumption, and state that assumption in your answer."
        )
    answer = (ctx.ask_user(question, choices) or "").strip()
    if not answer:
        return "The user gave no answer. Proceed on your best assumption and state it."
    return f"The user answered: {answer}"


CLARIFY = Tool(
    name="clarify",
    description=(
        "Ask the user a question when the task is ambiguous and a wrong guess would waste real work, "
        "or before an irreversible choice. Offer up to "
        f"{MAX_CHOICES} short choices when the options are known; the user may still answer freely. "
        "Do not ask what you can find out yourself with the other tools."
    ),
    parameters={
        "type": "object",
        "properties": {
            "question": {"type": "string", "description": "One clear question."},
            "choices": {
                "type": "array",
                "items": {"type": "string"},
                "maxItems": MAX_CHOICES,
                "description": "Optional answers to pick from.",
            },
        },
        "required": ["question"],
        "additionalProperties": False,
    },
    handler=clarify,
    toolset=TOOLSET,
    interactive=True,
)

TOOLS: list[Tool] = [CLARIFY]
