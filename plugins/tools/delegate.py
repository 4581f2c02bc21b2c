"""The ``delegation`` toolset: ``delegate_task`` hands work to isolated sub-agents.

The tool is a thin front end: the kernel provides the spawning service as
``ctx.services["delegator"]`` (absent in agents that may not delegate).
"""

from __future__ import annotations

import json
from typing import Any

from hermes.kernel import Tool, ToolContext, ToolError
from hermes.kernel.approvals import is_unattended

__all__ = ["TOOLS", "delegate_task"]

MAX_TASKS = 10

_TASK_SCHEMA = {
    "type": "object",
    "properties": {
        "goal": {"type": "string", "description": "What the sub-agent must achieve, stated so a newcomer understands it."},
        "context": {"type": "string", "description": "Everything it needs from this conversation: paths, findings, constraints. It sees nothing else."},
        "toolsets": {"type": "array", "items": {"type": "string"}, "description": "Toolsets it may use (default: the same as yours, minus delegation)."},
    },
    "required": ["goal"],
}


def _tasks(args: dict[str, Any]) -> list[dict[str, Any]]:
    raw = args.get("tasks")
    if raw is None:
        if not isinstance(args.get("goal"), str) or not args["goal"].strip():
            raise ToolError("give either goal (one task) or tasks (a list of {goal, context, toolsets})")
        raw = [{k: args[k] for k in ("goal", "context", "toolsets") if k in args}]
    if not isinstance(raw, list) or not raw:
        raise ToolError("tasks must be a non-empty list of {goal, context, toolsets} objects")
    if len(raw) > MAX_TASKS:
        raise ToolError(f"at most {MAX_TASKS} tasks at once; group smaller tasks together")
    tasks = []
    for number, item in enumerate(raw, start=1):
        if not isinstance(item, dict) or not isinstance(item.get("goal"), str) or not item["goal"].strip():
            raise ToolError(f"tasks[{number}] needs a non-empty goal")
        context = item.get("context")
        toolsets = item.get("toolsets")
        if context is not None and not isinstance(context, str):
            raise ToolError(f"tasks[{number}].context must be text")
        if toolsets is not None and (not isinstance(toolsets, list) or not all(isinstance(t, str) for t in toolsets)):
            raise ToolError(f"tasks[{number}].toolsets must be a list of toolset names")
        tasks.append({"goal": item["goal"].strip(), "context": context, "toolsets": toolsets or None})
    return tasks


def _check_server_toolsets(tasks: list[dict[str, Any]], delegator: Any) -> None:
    """On a server a sub-agent gets no toolset its parent lacks (``serve.toolsets`` decides: no terminal by default)."""
    parent = getattr(delegator, "parent", None)
    have = {getattr(tool, "toolset", None) for tool in getattr(parent, "tools", None) or []}
    for number, task in enumerate(tasks, start=1):
        missing = sorted(set(task["toolsets"] or ()) - have)
        if missing:
            raise ToolError(
                f"tasks[{number}] asks for toolsets this server does not give you ({', '.join(missing)}); "
                "a sub-agent gets only toolsets you have (serve.toolsets decides). Leave toolsets out or pick from yours."
            )


def delegate_task(args: dict[str, Any], ctx: ToolContext) -> str:
    """Run one task or a batch in fresh sub-agents; return one report per task, in order."""
    delegator = ctx.services.get("delegator")
    if delegator is None:
        raise ToolError("delegation is not available here (sub-agents cannot delegate further); do the work yourself")
    tasks = _tasks(args)
    if is_unattended(ctx):
        _check_server_toolsets(tasks, delegator)
    try:
        results = delegator.run(tasks)
    except Exception as exc:  # never let a spawning failure end the parent's turn
        raise ToolError(f"could not start sub-agents: {type(exc).__name__}: {exc}") from None
    return json.dumps({"results": results}, ensure_ascii=False, indent=1)


TOOLS = [
    Tool(
        name="delegate_task",
        description=(
            "Hand self-contained work to sub-agents that start with a fresh context window and report back "
            "briefly. Use it for reasoning-heavy side work (investigating, reading many files, trying an "
            "approach) so your own context stays small. Give one goal, or tasks: a list run in parallel. "
            "Sub-agents cannot see this conversation: put what they need in context. They cannot ask the "
            "user, write memory or delegate further."
        ),
        parameters={
            "type": "object",
            "properties": {
                **_TASK_SCHEMA["properties"],
                "tasks": {"type": "array", "items": _TASK_SCHEMA, "maxItems": MAX_TASKS, "description": "Several independent tasks to run in parallel."},
            },
        },
        handler=delegate_task,
        toolset="delegation",
    )
]
