"""Skills: SKILL.md procedures from packs, the user's folder and external folders.

Public surface:

* :func:`skills_index` — the system-prompt block (guidance plus one line per available skill).
* :class:`SkillsLibrary` — discovery with shadowing, invalid-skill reporting and filtering.
* :class:`SkillManager` — guarded changes to ``HERMES_HOME/skills`` (the ``skill_manage`` tool).
* :func:`scan_skill` / :func:`decide` — the guard and its trust policy.
* :func:`install_skills` / :func:`remove_skill` / :func:`read_lock` — quarantined installs.
"""

from __future__ import annotations

from .guard import Finding, ScanResult, decide, scan_skill
from .index import skills_index
from .install import install_skills, read_lock, remove_skill
from .library import InvalidSkill, SkillsLibrary
from .manage import SkillManager
from .skill import Skill, SkillError, parse_skill_md

__all__ = [
    "Finding",
    "InvalidSkill",
    "ScanResult",
    "Skill",
    "SkillError",
    "SkillManager",
    "SkillsLibrary",
    "decide",
    "install_skills",
    "parse_skill_md",
    "read_lock",
    "remove_skill",
    "scan_skill",
    "skills_index",
]
