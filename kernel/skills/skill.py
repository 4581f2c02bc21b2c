"""SKILL.md: YAML frontmatter plus a Markdown body, parsed and validated.

A skill is a folder holding ``SKILL.md`` and optionally the support folders
``references/``, ``templates/``, ``scripts/`` and ``assets/``.
"""

from __future__ import annotations

import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import HermesError

__all__ = [
    "MAX_DESCRIPTION_CHARS",
    "MAX_FILE_BYTES",
    "MAX_NAME_CHARS",
    "MAX_SKILL_MD_CHARS",
    "SKILL_FILE",
    "SUPPORT_DIRS",
    "Skill",
    "SkillError",
    "current_platform",
    "load_skill",
    "parse_skill_md",
    "split_frontmatter",
    "validate_name",
]

SKILL_FILE = "SKILL.md"
SUPPORT_DIRS = ("references", "templates", "scripts", "assets")
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
MAX_SKILL_MD_CHARS = 100_000
MAX_FILE_BYTES = 1024 * 1024

_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_FRONTMATTER_RE = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)(.*)\Z", re.S)
_PLATFORMS = {"linux": "linux", "darwin": "macos", "win32": "windows", "cygwin": "windows"}


class SkillError(HermesError):
    """An invalid skill or a refused skill operation (the CLI prints ``error: <message>``)."""


def current_platform() -> str:
    """``linux``, ``macos`` or ``windows`` (the names ``platforms:`` uses)."""
    return _PLATFORMS.get(sys.platform, sys.platform)


def validate_name(name: Any) -> str:
    """``name`` if it is a valid skill name, else SkillError."""
    if not isinstance(name, str) or not name:
        raise SkillError("frontmatter needs a 'name'")
    if len(name) > MAX_NAME_CHARS:
        raise SkillError(f"name {name[:20]!r}... is longer than {MAX_NAME_CHARS} characters")
    if not _NAME_RE.match(name) or ".." in name:
        raise SkillError(f"name {name!r} may hold only lowercase letters, digits, '.', '_' and '-'")
    return name


def _str_list(value: Any, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise SkillError(f"{what} must be a list of strings")
    return tuple(value)


@dataclass(frozen=True)
class Skill:
    """One parsed, valid skill. ``source`` is ``user``, ``external`` or ``bundled:<pack>``."""

    name: str
    description: str
    path: Path
    body: str
    source: str = "user"
    category: str = ""
    version: str = ""
    platforms: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def skill_md(self) -> Path:
        return self.path / SKILL_FILE

    @property
    def bundled(self) -> bool:
        return self.source.startswith("bundled")

    def missing_prerequisites(self, environ: dict[str, str] | None = None) -> list[str]:
        """What keeps the skill from being usable here: wrong platform, unset env vars, absent commands."""
        import os

        env = os.environ if environ is None else environ
        missing: list[str] = []
        if self.platforms and current_platform() not in self.platforms:
            missing.append(f"platform {current_platform()} (needs {', '.join(self.platforms)})")
        missing += [f"env {name}" for name in self.env if not env.get(name)]
        missing += [f"command {cmd}" for cmd in self.commands if shutil.which(cmd) is None]
        return missing

    def support_files(self) -> list[str]:
        """Relative paths of the files in the support folders (symlinks left out)."""
        found: list[str] = []
        for sub in SUPPORT_DIRS:
            base = self.path / sub
            if not base.is_dir() or base.is_symlink():
                continue
            for item in sorted(base.rglob("*")):
                if item.is_file() and not item.is_symlink():
                    found.append(item.relative_to(self.path).as_posix())
        return found

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "category": self.category,
            "source": self.source,
            "version": self.version,
            "path": str(self.path),
            "platforms": list(self.platforms),
            "tags": list(self.tags),
        }


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """The frontmatter mapping and the body of a SKILL.md text."""
    import yaml

    match = _FRONTMATTER_RE.match(text.lstrip("\ufeff"))
    if not match:
        raise SkillError("SKILL.md must start with YAML frontmatter between '---' lines")
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise SkillError(f"frontmatter is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise SkillError("frontmatter must be a YAML mapping")
    return data, match.group(2)


def parse_skill_md(text: str, path: Path, *, source: str = "user", category: str = "") -> Skill:
    """Parse and validate the SKILL.md ``text`` of the skill folder ``path``."""
    if len(text) > MAX_SKILL_MD_CHARS:
        raise SkillError(f"SKILL.md has {len(text):,} characters; the limit is {MAX_SKILL_MD_CHARS:,}")
    data, body = split_frontmatter(text)
    name = validate_name(data.get("name"))
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SkillError("frontmatter needs a non-empty 'description'")
    description = " ".join(description.split())
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise SkillError(f"description is longer than {MAX_DESCRIPTION_CHARS} characters")
    if not body.strip():
        raise SkillError("SKILL.md needs a body after the frontmatter")
    version = data.get("version", "")
    platforms = tuple(p.lower() for p in _str_list(data.get("platforms"), "platforms"))
    prereq = data.get("prerequisites") or {}
    if not isinstance(prereq, dict):
        raise SkillError("prerequisites must be a mapping with 'env' and/or 'commands'")
    env = _str_list(prereq.get("env", prereq.get("env_vars")), "prerequisites.env")
    commands = _str_list(prereq.get("commands"), "prerequisites.commands")
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise SkillError("metadata must be a mapping")
    tags = _str_list(metadata.get("tags", data.get("tags")), "metadata.tags")
    return Skill(
        name=name,
        description=description,
        path=path,
        body=body,
        source=source,
        category=category,
        version=str(version) if version is not None else "",
        platforms=platforms,
        env=env,
        commands=commands,
        tags=tags,
        metadata=metadata,
    )


def load_skill(path: Path, *, source: str = "user", category: str = "") -> Skill:
    """Read and parse the skill folder ``path``."""
    skill_md = path / SKILL_FILE
    try:
        if skill_md.stat().st_size > MAX_SKILL_MD_CHARS * 4:
            raise SkillError(f"SKILL.md is larger than {MAX_SKILL_MD_CHARS:,} characters")
        text = skill_md.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SkillError("SKILL.md is not UTF-8 text") from None
    except OSError as exc:
        raise SkillError(f"cannot read SKILL.md: {exc.strerror or exc}") from None
    return parse_skill_md(text, path, source=source, category=category)
