"""The ``skills`` toolset: ``skills_list``, ``skill_view`` and ``skill_manage``.

Progressive disclosure: the system prompt carries only names and descriptions
(``hermes.kernel.skills.skills_index``); these tools load a skill's body and
support files on demand, and let the agent create and improve its own skills
in ``HERMES_HOME/skills`` (every write scanned by the skills guard).

Handlers use ``ctx.home`` and ``ctx.config``; the plugin host comes from
``ctx.services["host"]`` when the kernel provides one, else one is built once
and kept in ``ctx.state``.
"""

from __future__ import annotations

import json
from typing import Any

from hermes.kernel import Tool, ToolContext, ToolError
from hermes.kernel.paths_policy import denied_reason
from hermes.kernel.skills import SkillError, SkillManager, SkillsLibrary
from hermes.kernel.skills.manage import safe_support_path

from ._common import opt_str, req_str

__all__ = ["SKILLS_LIST", "SKILL_MANAGE", "SKILL_VIEW", "TOOLS", "TOOLSET"]

TOOLSET = "skills"
_MAX_VIEW_CHARS = 100_000
_ACTIONS = ("create", "edit", "patch", "delete", "write_file", "remove_file")


def _home(ctx: ToolContext) -> Any:
    if ctx.home is not None:
        return ctx.home
    from hermes.kernel import resolve_home

    return resolve_home()


def _host(ctx: ToolContext) -> Any:
    host = ctx.services.get("host") or ctx.state.get("skills_host")
    if host is None:
        from hermes.kernel import PluginHost

        host = PluginHost.from_config(ctx.config) if ctx.config is not None else PluginHost()
        ctx.state["skills_host"] = host  # entry-point discovery once per agent, not per call
    return host


def _library(ctx: ToolContext) -> SkillsLibrary:
    return SkillsLibrary.discover(_home(ctx), ctx.config, _host(ctx))


def skills_list(args: dict[str, Any], ctx: ToolContext) -> str:
    """Available skills (name, description, category, source), optionally of one category."""
    category = opt_str(args, "category")
    library = _library(ctx)
    skills = [s for s in library.available() if category is None or s.category == category or s.category.startswith(category + "/")]
    rows = [{"name": s.name, "description": s.description, "category": s.category, "source": s.source} for s in skills]
    result: dict[str, Any] = {"skills": rows, "count": len(rows)}
    unavailable = [s.name for s in library.all() if s not in skills and library.is_enabled(s) and s.missing_prerequisites()]
    if unavailable:
        result["unavailable"] = unavailable
    if not rows:
        result["hint"] = "No skills yet. Save a procedure worth repeating with skill_manage(action='create')."
    return json.dumps(result, ensure_ascii=False)


def _check_not_denied(ctx: ToolContext, path: Any, shown: str) -> None:
    """A skill file that is (a link to) one of the path policy's denied files is never shown."""
    import os
    from pathlib import Path

    for candidate in (Path(os.path.abspath(path)), Path(os.path.realpath(path))):
        reason = denied_reason(candidate, write=False, hermes_home=getattr(ctx.home, "root", None))
        if reason is not None:
            raise ToolError(f"{shown}: access denied: {reason}. It is never shown to the agent.")


def skill_view(args: dict[str, Any], ctx: ToolContext) -> str:
    """SKILL.md of a skill plus its list of support files, or one support file with ``file``."""
    name = req_str(args, "name")
    file = opt_str(args, "file")
    skill = _library(ctx).get(name)
    if skill is None:
        raise ToolError(f"no skill named {name!r}; call skills_list to see the available ones")
    if file is None or file == "SKILL.md":
        _check_not_denied(ctx, skill.skill_md, "SKILL.md")
        text = skill.skill_md.read_text(encoding="utf-8")
        files = skill.support_files()
        footer = ("\n\n[support files: " + ", ".join(files) + " — load one with skill_view(name, file)]") if files else ""
        return f"[skill {skill.name} ({skill.source}) at {skill.path}]\n\n{text}{footer}"
    try:
        path = safe_support_path(skill.path, file)
    except SkillError as exc:
        raise ToolError(str(exc)) from None
    if not path.is_file():
        raise ToolError(f"{file} does not exist in skill {name!r}; available: {', '.join(skill.support_files()) or 'none'}")
    _check_not_denied(ctx, path, file)
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        raise ToolError(f"{file} is a binary file; it cannot be shown as text")
    text = data.decode("utf-8", errors="replace")
    if len(text) > _MAX_VIEW_CHARS:
        text = text[:_MAX_VIEW_CHARS] + f"\n[... truncated at {_MAX_VIEW_CHARS:,} characters]"
    return text


def skill_manage(args: dict[str, Any], ctx: ToolContext) -> str:
    """Create, edit, patch or delete a skill in HERMES_HOME/skills, or write/remove a support file."""
    action = req_str(args, "action")
    name = req_str(args, "name")
    manager = SkillManager(_home(ctx), ctx.config, _host(ctx))
    try:
        if action == "create":
            result = manager.create(name, req_str(args, "content"), opt_str(args, "category"))
        elif action == "edit":
            result = manager.edit(name, req_str(args, "content"))
        elif action == "patch":
            result = manager.patch(
                name, req_str(args, "old_string"), req_str(args, "new_string", allow_empty=True), opt_str(args, "file_path")
            )
        elif action == "delete":
            result = manager.delete(name)
        elif action == "write_file":
            result = manager.write_file(name, req_str(args, "file_path"), req_str(args, "file_content", allow_empty=True))
        elif action == "remove_file":
            result = manager.remove_file(name, req_str(args, "file_path"))
        else:
            raise ToolError(f"unknown action {action!r}; use one of {', '.join(_ACTIONS)}")
    except SkillError as exc:
        raise ToolError(str(exc)) from None
    # The self-improvement review counts skill maintenance; a successful change resets it.
    ctx.state["skills_changed"] = ctx.state.get("skills_changed", 0) + 1
    return result.message


SKILLS_LIST = Tool(
    name="skills_list",
    description=(
        "List the skills available to you (saved procedures): name, description, category and source. "
        "Load one with skill_view before a task it fits."
    ),
    parameters={
        "type": "object",
        "properties": {"category": {"type": "string", "description": "Only skills of this category."}},
    },
    handler=skills_list,
    toolset=TOOLSET,
    read_only=True,
)

SKILL_VIEW = Tool(
    name="skill_view",
    description=(
        "Load a skill: its full SKILL.md (instructions) and the list of its support files. "
        "Pass file (e.g. references/api.md) to load one support file."
    ),
    parameters={
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The skill's name, as in skills_list."},
            "file": {"type": "string", "description": "A support file path relative to the skill folder."},
        },
        "required": ["name"],
    },
    handler=skill_view,
    toolset=TOOLSET,
    read_only=True,
)

SKILL_MANAGE = Tool(
    name="skill_manage",
    description=(
        "Create and improve your own skills (in HERMES_HOME/skills). Save a skill after a task that took many "
        "steps or a tricky fix; patch a skill as soon as you find it wrong or incomplete.\n"
        "Actions: create (name, content = full SKILL.md, optional category), edit (name, content), "
        "patch (name, old_string, new_string, optional file_path; old_string must occur exactly once), "
        "delete (name), write_file (name, file_path, file_content), remove_file (name, file_path).\n"
        "SKILL.md starts with YAML frontmatter: ---\\nname: lowercase-name\\ndescription: when to use it, in one "
        "line\\n--- then Markdown steps. Support files go under references/, templates/, scripts/ or assets/. "
        "Every change is checked by a security guard and refused if it looks dangerous."
    ),
    parameters={
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(_ACTIONS), "description": "What to do (see above)."},
            "name": {"type": "string", "description": "Skill name: lowercase letters, digits, '.', '_', '-' (max 64)."},
            "content": {"type": "string", "description": "Full SKILL.md text (create, edit)."},
            "category": {"type": "string", "description": "Optional category folder for create, e.g. devops."},
            "old_string": {"type": "string", "description": "Exact text to replace (patch)."},
            "new_string": {"type": "string", "description": "Replacement text (patch)."},
            "file_path": {"type": "string", "description": "Support file, e.g. references/notes.md."},
            "file_content": {"type": "string", "description": "Content of the support file (write_file)."},
        },
        "required": ["action", "name"],
    },
    handler=skill_manage,
    toolset=TOOLSET,
    max_result_chars=4000,
)

TOOLS = [SKILLS_LIST, SKILL_VIEW, SKILL_MANAGE]
