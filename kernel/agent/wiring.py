"""What a configured agent adds to the bare loop: prompt layers and background reviews."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..arguments import decode_arguments
from ..config import Config
from ..home import HermesHome
from ..host import PluginHost
from ..tool_registry import ToolCall, ToolRegistry
from .review import ReviewSchedule, after_tool_iterations, every_n_turns

__all__ = ["ENGINE_TOOLSET", "MEMORY_REVIEW_PROMPT", "SKILLS_REVIEW_PROMPT", "engine_tools", "prompt_extras", "review_schedules"]

log = logging.getLogger(__name__)

MEMORY_REVIEW_PROMPT = (
    "[Background memory review — not from the user.] Look back over this conversation. If the user "
    "revealed lasting facts about themselves (preferences, role, environment, how they like to work) or "
    "you learned something durable that will help in future sessions, save it with the memory tool: "
    "target 'user' for the user profile, 'memory' for your own notes. Save nothing temporary, nothing "
    "already saved, and never secrets. If nothing is worth saving, answer 'nothing to save'."
)

SKILLS_REVIEW_PROMPT = (
    "[Background skill review — not from the user.] This conversation took many tool steps. If it "
    "showed a reusable procedure (steps that worked, a fix that was hard to find) or a skill that proved "
    "wrong, record it: check skills_list first, then create a new skill or patch the existing one with "
    "skill_manage. Keep skills short, general and safe; write steps, not this conversation. If nothing "
    "is worth keeping, answer 'nothing to update'."
)

#: The toolset of the tools a context engine offers (``get_tool_schemas``).
ENGINE_TOOLSET = "context"

_MEMORY_WRITES = {"add", "replace", "remove", "batch"}
_SKILL_WRITES = {"create", "edit", "patch", "delete", "write_file", "remove_file"}


def _action(call: ToolCall) -> str:
    try:
        args = decode_arguments(call.arguments)
    except ValueError:
        return ""
    return str(args.get("action", "")) if isinstance(args, dict) else ""


def prompt_extras(
    home: HermesHome, config: Config, host: PluginHost, cwd: Path, warn: Callable[[str], None]
) -> Callable[[], dict[str, str | None]]:
    """Layers read at every session boundary: the skills index and project context files."""

    def extras() -> dict[str, str | None]:
        from ..context_files import load_project_context
        from ..skills import skills_index

        layers: dict[str, str | None] = {}
        try:
            layers["skills_index"] = skills_index(home, config, host) or None
        except Exception as exc:  # a broken skill pack must not stop the agent
            log.warning("skills index unavailable: %s", exc)
        if config.get("context_files.enabled", True):
            project = load_project_context(cwd, cap_chars=int(config.get("context_files.max_chars", 20_000)))
            for warning in project.warnings:
                warn(warning)
            layers["project_context"] = project.text or None
        return layers

    return extras


def review_schedules(host: PluginHost, config: Config, memory_tools: list[Any]) -> list[ReviewSchedule]:
    """The memory review (every ``memory.nudge_interval`` turns) and the skills review
    (after ``skills.review_interval`` tool steps without skill maintenance)."""
    schedules = []
    memory_interval = int(config.get("memory.nudge_interval", 10) or 0)
    if memory_tools and memory_interval > 0:
        schedules.append(
            ReviewSchedule(
                name="memory",
                prompt=MEMORY_REVIEW_PROMPT,
                tools=lambda: ToolRegistry(memory_tools),
                due=every_n_turns(memory_interval),
                is_change=lambda call: _action(call) in _MEMORY_WRITES,
            )
        )
    skills_interval = int(config.get("skills.review_interval", 15) or 0)
    if skills_interval > 0 and "skills" in host.available("hermes.tools"):
        schedules.append(
            ReviewSchedule(
                name="skills",
                prompt=SKILLS_REVIEW_PROMPT,
                tools=lambda: ToolRegistry.load(host, ["skills"]),
                due=after_tool_iterations(skills_interval, frozenset({"skill_manage"})),
                is_change=lambda call: call.name == "skill_manage" and _action(call) in _SKILL_WRITES,
                max_iterations=12,
            )
        )
    return schedules



def engine_tools(engine: Any, reserved_names: Any = ()) -> list[Any]:
    """The context engine's own tools (``get_tool_schemas``), run by its ``handle_tool_call``.

    A tool without a name, or one that would shadow a loaded tool, is refused
    with a warning; an engine whose ``get_tool_schemas`` raises offers none.
    """
    from ..tools import Tool

    try:
        schemas = list(engine.get_tool_schemas() or [])
    except Exception as exc:
        log.warning("context engine %r: get_tool_schemas failed: %s: %s", engine.name, type(exc).__name__, exc)
        return []
    taken, tools = set(reserved_names), []
    for schema in schemas:
        function = schema.get("function", schema) if isinstance(schema, dict) else {}
        name = function.get("name") if isinstance(function, dict) else None
        if not name or name in taken:
            log.warning("context engine %r: tool %r refused (no name, or a tool of that name exists)", engine.name, name)
            continue
        taken.add(name)

        def handler(args: dict[str, Any], ctx: Any, _name: str = name) -> Any:
            return engine.handle_tool_call(_name, args)

        tools.append(
            Tool(
                name=name,
                description=str(function.get("description") or ""),
                parameters=function.get("parameters") or {"type": "object", "properties": {}},
                handler=handler,
                toolset=ENGINE_TOOLSET,
            )
        )
    return tools
