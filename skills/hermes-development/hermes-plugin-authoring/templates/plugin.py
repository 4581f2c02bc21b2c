"""hermes_myplugin: a hook listener and a one-tool toolset."""

from __future__ import annotations

from typing import Any

from hermes.kernel import Tool, ToolContext, ToolError, hookimpl


@hookimpl
def on_session_end(session_id: str, reason: str) -> None:
    """Called once when a session really ends (not after every turn)."""
    print(f"session {session_id} ended: {reason}")


def word_count(args: dict[str, Any], ctx: ToolContext) -> str:
    text = args.get("text")
    if not isinstance(text, str):
        raise ToolError("text must be a string")
    return str(len(text.split()))


TOOLS = [
    Tool(
        name="word_count",
        description="Count the words in a text.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        handler=word_count,
        toolset="myplugin",
        read_only=True,
    )
]
