"""Discovery of skills across bundled packs, ``HERMES_HOME/skills`` and ``skills.external_dirs``.

Precedence, highest first: the user's folder, the external folders in config order,
then the ``hermes.skills`` packs. A skill shadows any lower one of the same name.
Invalid skills are collected, never raised; VCS, virtual-environment and hidden
folders are never entered.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .skill import SKILL_FILE, SUPPORT_DIRS, Skill, SkillError, load_skill

__all__ = [
    "InvalidSkill",
    "SKILLS_GROUP",
    "SkillRoot",
    "SkillsLibrary",
    "bundled_roots",
    "is_ignored_dir",
    "iter_skill_dirs",
]

log = logging.getLogger(__name__)

SKILLS_GROUP = "hermes.skills"
_MAX_DEPTH = 4  # category folders nest; deeper trees are not skill packs
_IGNORED_DIRS = frozenset(
    {".git", ".hg", ".svn", ".bzr", "CVS", ".venv", "venv", "env", ".env", "virtualenv", "node_modules",
     "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", "site-packages", ".hub"}
)


def is_ignored_dir(path: Path) -> bool:
    """VCS, virtual-environment, cache and hidden folders: never scanned for skills."""
    name = path.name
    return name in _IGNORED_DIRS or name.startswith(".") or (path / "pyvenv.cfg").exists()


def iter_skill_dirs(root: Path) -> list[Path]:
    """Folders below ``root`` that hold a SKILL.md (a skill's own subfolders are not searched)."""
    found: list[Path] = []

    def walk(folder: Path, depth: int) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                continue
            path = Path(entry.path)
            if is_ignored_dir(path) or entry.name in SUPPORT_DIRS:
                continue
            if (path / SKILL_FILE).is_file():
                found.append(path)
            elif depth < _MAX_DEPTH:
                walk(path, depth + 1)

    if (root / SKILL_FILE).is_file():
        return [root]
    if root.is_dir():
        walk(root, 1)
    return found


@dataclass(frozen=True)
class SkillRoot:
    """A folder skills are found in, and what they count as (``user``, ``external``, ``bundled:<pack>``)."""

    path: Path
    source: str


@dataclass(frozen=True)
class InvalidSkill:
    """A folder with a SKILL.md that could not be used, and why."""

    path: Path
    source: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return {"path": str(self.path), "source": self.source, "reason": self.reason}


def _pack_folder(obj: Any) -> Path | None:
    """The folder of the package a ``hermes.skills`` entry point names."""
    if isinstance(obj, (str, os.PathLike)):
        return Path(obj)
    paths = list(getattr(obj, "__path__", []) or [])
    if paths:
        return Path(paths[0])
    file = getattr(obj, "__file__", None)
    return Path(file).parent if file else None


@dataclass
class SkillsLibrary:
    """Every skill visible to one profile, with what shadowed what and what was invalid."""

    roots: list[SkillRoot]
    disabled: frozenset[str] = frozenset()
    skills: dict[str, Skill] = field(default_factory=dict)
    shadowed: list[Skill] = field(default_factory=list)
    invalid: list[InvalidSkill] = field(default_factory=list)

    @classmethod
    def discover(cls, home: Any, config: Any = None, host: Any = None) -> SkillsLibrary:
        """Find the skills of ``home`` (a HermesHome), its config's external folders and the packs.

        ``host`` (a PluginHost) loads the ``hermes.skills`` packs; None builds one from ``config``.
        """
        roots = [SkillRoot(Path(home.skills_dir), "user")]
        # A tenant's home on a shared server (serve/tenants.py) also offers the profile's
        # skills, read-only: the tenant writes only into its own folder.
        roots += [SkillRoot(Path(folder), "external") for folder in getattr(home, "shared_skills_dirs", ())]
        get = getattr(config, "get", None)
        external = get("skills.external_dirs", []) if get else []
        for raw in external or []:
            roots.append(SkillRoot(Path(os.path.expandvars(os.path.expanduser(str(raw)))), "external"))
        roots += bundled_roots(config, host)
        disabled = frozenset(get("skills.disabled", []) or []) if get else frozenset()
        library = cls(roots=roots, disabled=disabled)
        library.scan()
        return library

    def scan(self) -> None:
        self.skills.clear()
        self.shadowed.clear()
        self.invalid.clear()
        for root in self.roots:
            for folder in iter_skill_dirs(root.path):
                rel = folder.parent.relative_to(root.path) if folder != root.path else Path()
                category = rel.as_posix() if rel.parts else ""
                try:
                    skill = load_skill(folder, source=root.source, category=category)
                except SkillError as exc:
                    self.invalid.append(InvalidSkill(folder, root.source, str(exc)))
                    continue
                if skill.name in self.skills:
                    self.shadowed.append(skill)  # a higher root already has this name
                else:
                    self.skills[skill.name] = skill

    def get(self, name: str) -> Skill | None:
        return self.skills.get(name)

    def is_enabled(self, skill: Skill) -> bool:
        return skill.name not in self.disabled

    def available(self) -> list[Skill]:
        """Enabled skills whose platform and prerequisites are met, by category then name."""
        usable = [s for s in self.skills.values() if self.is_enabled(s) and not s.missing_prerequisites()]
        return sorted(usable, key=lambda s: (s.category, s.name))

    def all(self) -> list[Skill]:
        return sorted(self.skills.values(), key=lambda s: (s.category, s.name))


def bundled_roots(config: Any = None, host: Any = None) -> list[SkillRoot]:
    """One root per ``hermes.skills`` entry point (packs failing to load are recorded by the host)."""
    if host is None:
        from ..host import PluginHost

        host = PluginHost.from_config(config) if config is not None else PluginHost()
    roots: list[SkillRoot] = []
    for loaded in host.extensions(SKILLS_GROUP):
        folder = _pack_folder(loaded.obj)
        if folder is None:
            log.warning("skill pack %r names no folder; skipped", loaded.name)
            continue
        # the built-in pack is plain "bundled"; third-party packs keep their entry-point name
        roots.append(SkillRoot(folder, "bundled" if loaded.name == "bundled" else f"bundled:{loaded.name}"))
    return roots
