"""The compact skills block of the system prompt: guidance plus one line per available skill."""

from __future__ import annotations

from typing import Any

from .library import SkillsLibrary

__all__ = ["SKILLS_GUIDANCE", "render_index", "skills_index"]

SKILLS_GUIDANCE = """\
## Skills
Skills are procedures saved from earlier work (SKILL.md files with optional references and templates).
- Before a task, scan the list below; if a skill fits, load it with skill_view(name) and follow it.
- After a task that took many steps, a tricky fix or a workflow worth repeating, save it with \
skill_manage(action="create") so next time is faster.
- When a skill you followed was wrong, outdated or incomplete, fix it at once with \
skill_manage(action="patch")."""

_MAX_LINE_DESCRIPTION = 200  # the full description is one skill_view away


def render_index(library: SkillsLibrary) -> str:
    """The index text for ``library`` (empty when no skill is available)."""
    skills = library.available()
    if not skills:
        return ""
    lines = [SKILLS_GUIDANCE, "", "<available_skills>"]
    category = None
    for skill in skills:
        if skill.category != category:
            category = skill.category
            if category:
                lines.append(f"{category}:")
        description = skill.description
        if len(description) > _MAX_LINE_DESCRIPTION:
            description = description[: _MAX_LINE_DESCRIPTION - 3].rstrip() + "..."
        indent = "  " if category else ""
        lines.append(f"{indent}- {skill.name}: {description}")
    lines.append("</available_skills>")
    return "\n".join(lines)


def skills_index(home: Any, config: Any = None, host: Any = None) -> str:
    """The system-prompt block for ``home``'s skills; ``""`` when none is available.

    Deterministic for the same files, so the cached system prompt stays byte-identical.
    """
    return render_index(SkillsLibrary.discover(home, config, host))
