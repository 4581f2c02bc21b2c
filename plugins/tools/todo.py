"""The ``todo`` toolset: the agent's task list for the current session.

The list lives in ``ctx.state["todo"]`` (a list of ``{"id", "content",
"status"}`` dicts), which lasts as long as the agent. :func:`render_todos`
turns it into text the loop re-injects after a context compaction, so the
plan survives a summary.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes.kernel import CARRY_OVER_KEY, Tool, ToolContext, ToolError

from ._common import opt_bool

__all__ = ["STATE_KEY", "STATUSES", "TODO", "TOOLS", "render_todos", "todo"]

TOOLSET = "todo"
STATE_KEY = "todo"
STATUSES = ("pending", "in_progress", "completed", "cancelled")
ACTIVE = ("pending", "in_progress")
MAX_ITEMS = 100
MAX_CONTENT_CHARS = 500
_MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]", "cancelled": "[-]"}


def _items(state: Mapping[str, Any]) -> list[dict[str, str]]:
    return list(state.get(STATE_KEY) or [])


def render_todos(state: Mapping[str, Any], *, active_only: bool = False) -> str:
    """The task list as text, one item a line; ``""`` when there is nothing to show.

    With ``active_only``, completed and cancelled items are left out (what the
    loop re-injects after compaction).
    """
    items = [i for i in _items(state) if not active_only or i["status"] in ACTIVE]
    if not items:
        return ""
    lines = [f"- {_MARKS[i['status']]} {i['id']}. {i['content']} ({i['status']})" for i in items]
    return "\n".join(lines)


def _summary(items: list[dict[str, str]]) -> str:
    counts = {s: sum(1 for i in items if i["status"] == s) for s in STATUSES}
    return ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in counts.items() if n) or "empty"


def _parse(raw: Any, *, merge: bool) -> list[dict[str, str | None]]:
    if not isinstance(raw, list):
        raise ToolError("todos must be an array of {id, content, status} objects.")
    parsed: list[dict[str, str | None]] = []
    seen: set[str] = set()
    for n, entry in enumerate(raw, start=1):
        if not isinstance(entry, dict):
            raise ToolError(f"todos[{n}] must be an object with id, content and status.")
        ident = entry.get("id")
        if isinstance(ident, int) and not isinstance(ident, bool):
            ident = str(ident)
        if not isinstance(ident, str) or not ident.strip():
            raise ToolError(f"todos[{n}] needs a non-empty string id.")
        ident = ident.strip()
        if ident in seen:
            raise ToolError(f"id {ident!r} appears twice in todos; ids must be unique.")
        seen.add(ident)
        content, status = entry.get("content"), entry.get("status")
        if content is not None and (not isinstance(content, str) or not content.strip()):
            raise ToolError(f"todos[{n}] ({ident}): content must be a non-empty string.")
        if content is None and not merge:
            raise ToolError(f"todos[{n}] ({ident}) needs content (a short description of the task).")
        if status is not None and status not in STATUSES:
            raise ToolError(f"todos[{n}] ({ident}): status must be one of {', '.join(STATUSES)}, got {status!r}.")
        parsed.append({"id": ident, "content": content.strip()[:MAX_CONTENT_CHARS] if content else None, "status": status})
    return parsed


def todo(args: dict[str, Any], ctx: ToolContext) -> str:
    """Read the list (no ``todos``), replace it, or with ``merge`` update items by id and add new ones."""
    raw = args.get("todos")
    merge = opt_bool(args, "merge")
    current = _items(ctx.state)
    if raw is not None:
        updates = _parse(raw, merge=merge)
        if merge:
            by_id = {item["id"]: dict(item) for item in current}
            for update in updates:
                ident = update["id"]
                assert ident is not None
                if ident in by_id:
                    for key in ("content", "status"):
                        if update[key] is not None:
                            by_id[ident][key] = update[key]  # type: ignore[assignment]
                elif update["content"] is None:
                    raise ToolError(f"no item with id {ident!r} to update; give content to add it.")
                else:
                    by_id[ident] = {"id": ident, "content": update["content"], "status": update["status"] or "pending"}
            current = list(by_id.values())
        else:
            current = [
                {"id": u["id"], "content": u["content"], "status": u["status"] or "pending"}  # type: ignore[dict-item]
                for u in updates
            ]
        if len(current) > MAX_ITEMS:
            raise ToolError(f"the list would hold {len(current)} items; keep it under {MAX_ITEMS} by grouping tasks.")
        ctx.state[STATE_KEY] = current
        # Survives compaction: the kernel puts carry-over notes into the rebuilt system prompt.
        active = render_todos(ctx.state, active_only=True)
        notes = ctx.state.setdefault(CARRY_OVER_KEY, {})
        if active:
            notes["Your task list (carried over)"] = active
        else:
            notes.pop("Your task list (carried over)", None)
    if not current:
        return "The task list is empty."
    return f"Task list ({_summary(current)}):\n{render_todos(ctx.state)}"


TODO = Tool(
    name="todo",
    description=(
        "Your task list for this session. Use it for work with three or more steps: write the plan, "
        "mark one item in_progress while you work on it, and mark items completed as soon as they are "
        "done (or cancelled if no longer needed). Call with no arguments to see the list. Without merge, "
        "`todos` replaces the whole list; with merge=true, items are updated by id (only the fields you "
        "give) and unknown ids are added. The list survives context compression."
    ),
    parameters={
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "description": "Items to write. Omit to read the current list.",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "description": "A short unique id, e.g. '1' or 'tests'."},
                        "content": {"type": "string", "description": "What to do, in one line."},
                        "status": {"type": "string", "enum": list(STATUSES), "description": "Default pending."},
                    },
                    "required": ["id"],
                },
            },
            "merge": {
                "type": "boolean",
                "description": "true: update/add items by id and keep the rest. false (default): replace the list.",
            },
        },
        "additionalProperties": False,
    },
    handler=todo,
    toolset=TOOLSET,
)

TOOLS: list[Tool] = [TODO]
