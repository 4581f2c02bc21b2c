"""Changes agents make to their own skills, each scanned by the guard and undone if forbidden.

Only skills under ``HERMES_HOME/skills`` may change; bundled and external skills are
read-only (a user skill of the same name shadows them). Every write is checked against
path escapes and size limits first, then scanned; a write whose verdict the ``agent``
trust policy blocks is rolled back to the exact previous state.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from .guard import ScanResult, decide, scan_skill
from .library import SkillsLibrary
from .skill import (
    MAX_FILE_BYTES,
    MAX_SKILL_MD_CHARS,
    SKILL_FILE,
    SUPPORT_DIRS,
    Skill,
    SkillError,
    parse_skill_md,
    validate_name,
)

__all__ = ["ManageResult", "SkillManager", "safe_support_path"]


@dataclass(frozen=True)
class ManageResult:
    """What a change did: a message for the model, and the guard's result when a write was scanned."""

    message: str
    scan: ScanResult | None = None


def safe_support_path(skill_dir: Path, raw: str) -> Path:
    """``raw`` as a path inside one of the skill's support folders, or SkillError.

    Refuses absolute paths, ``..``, and any symlink along the way (the folder itself included).
    """
    if not raw or not isinstance(raw, str):
        raise SkillError("file_path must be a relative path like references/notes.md")
    if "\\" in raw or raw.startswith(("/", "~")) or PurePosixPath(raw).is_absolute() or ":" in raw.split("/")[0]:
        raise SkillError(f"file_path {raw!r} must be relative to the skill folder")
    parts = tuple(raw.split("/"))
    if any(p in ("", ".", "..") for p in parts):
        raise SkillError(f"file_path {raw!r} must not contain '..' or '.' segments")
    if len(parts) < 2 or parts[0] not in SUPPORT_DIRS:
        raise SkillError(f"file_path must be inside one of {', '.join(d + '/' for d in SUPPORT_DIRS)} (got {raw!r})")
    path = skill_dir.joinpath(*parts)
    probe = skill_dir
    for part in parts:
        probe = probe / part
        if probe.is_symlink():
            raise SkillError(f"file_path {raw!r} goes through a symlink")
    if skill_dir.is_symlink():
        raise SkillError("the skill folder is a symlink")
    return path


def _check_text_size(text: str, what: str) -> None:
    if len(text.encode("utf-8")) > MAX_FILE_BYTES:
        raise SkillError(f"{what} is larger than {MAX_FILE_BYTES:,} bytes")


class SkillManager:
    """Create, edit, patch and delete the user's skills with guard and rollback."""

    def __init__(self, home: Any, config: Any = None, host: Any = None) -> None:
        self.home = home
        self.config = config
        self.host = host
        self.root = Path(home.skills_dir)

    # --- lookup -------------------------------------------------------------------------

    def _library(self) -> SkillsLibrary:
        return SkillsLibrary.discover(self.home, self.config, self.host)

    def _own(self, name: str) -> Skill:
        validate_name(name)
        skill = self._library().get(name)
        if skill is None:
            raise SkillError(f"no skill named {name!r}; see skills_list")
        if skill.source != "user":
            raise SkillError(
                f"skill {name!r} is {skill.source} and read-only; create a skill of the same name to shadow it"
            )
        return skill

    # --- guarded writes -----------------------------------------------------------------

    def _guarded(self, skill_dir: Path, changes: dict[Path, str | None], *, new_dir: bool = False) -> ScanResult:
        """Apply ``changes`` (path -> text, None deletes), scan, roll back when the policy blocks."""
        backup: dict[Path, bytes | None] = {p: (p.read_bytes() if p.is_file() else None) for p in changes}
        try:
            for path, text in changes.items():
                if text is None:
                    path.unlink(missing_ok=True)
                else:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    _atomic_text(path, text)
            scan = scan_skill(skill_dir)
            if decide(scan.verdict, "agent") == "block":
                raise SkillError("the skills guard refused this change; nothing was written.\n" + scan.summary())
            return scan
        except BaseException:
            if new_dir:
                shutil.rmtree(skill_dir, ignore_errors=True)
            else:
                for path, data in backup.items():
                    if data is None:
                        path.unlink(missing_ok=True)
                    else:
                        path.write_bytes(data)
                    _prune_empty(path.parent, stop=skill_dir)
            raise

    @staticmethod
    def _report(message: str, scan: ScanResult) -> ManageResult:
        if scan.verdict != "safe":
            message += "\nThe guard noted:\n" + scan.summary()
        return ManageResult(message, scan)

    # --- actions --------------------------------------------------------------------------

    def create(self, name: str, content: str, category: str | None = None) -> ManageResult:
        validate_name(name)
        parsed = self._parse(content, self.root / name)
        if parsed.name != name:
            raise SkillError(f"frontmatter name {parsed.name!r} differs from {name!r}")
        library = self._library()
        existing = library.get(name)
        if existing is not None and existing.source == "user":
            raise SkillError(f"skill {name!r} already exists at {existing.path}; use edit or patch")
        folder = self.root
        if category:
            for part in category.split("/"):
                validate_name(part)  # same alphabet, so no '..' or absolute paths
                folder = folder / part
        skill_dir = folder / name
        if skill_dir.exists() or skill_dir.is_symlink():
            raise SkillError(f"{skill_dir} already exists")
        skill_dir.mkdir(parents=True)
        scan = self._guarded(skill_dir, {skill_dir / SKILL_FILE: content}, new_dir=True)
        shadow = f" (shadows the {existing.source} skill)" if existing is not None else ""
        return self._report(f"Created skill {name!r} at {skill_dir}{shadow}.", scan)

    def edit(self, name: str, content: str) -> ManageResult:
        skill = self._own(name)
        parsed = self._parse(content, skill.path)
        if parsed.name != name:
            raise SkillError(f"frontmatter name {parsed.name!r} differs from {name!r}; delete and create to rename")
        scan = self._guarded(skill.path, {skill.skill_md: content})
        return self._report(f"Rewrote SKILL.md of {name!r}.", scan)

    def patch(self, name: str, old: str, new: str, file_path: str | None = None) -> ManageResult:
        skill = self._own(name)
        target = safe_support_path(skill.path, file_path) if file_path else skill.skill_md
        if not target.is_file():
            raise SkillError(f"{file_path or SKILL_FILE} does not exist in skill {name!r}")
        text = target.read_text(encoding="utf-8")
        if not old:
            raise SkillError("old_string must not be empty")
        count = text.count(old)
        if count == 0:
            raise SkillError(f"old_string was not found in {file_path or SKILL_FILE}; view the skill and copy it exactly")
        if count > 1:
            raise SkillError(f"old_string occurs {count} times in {file_path or SKILL_FILE}; include more context to make it unique")
        updated = text.replace(old, new, 1)
        if target == skill.skill_md:
            parsed = self._parse(updated, skill.path)
            if parsed.name != name:
                raise SkillError("a patch must not change the skill's name")
        else:
            _check_text_size(updated, file_path or "file")
        scan = self._guarded(skill.path, {target: updated})
        return self._report(f"Patched {file_path or SKILL_FILE} of {name!r}.", scan)

    def delete(self, name: str) -> ManageResult:
        skill = self._own(name)
        shutil.rmtree(skill.path)
        _prune_empty(skill.path.parent, stop=self.root)
        return ManageResult(f"Deleted skill {name!r}.")

    def write_file(self, name: str, file_path: str, content: str) -> ManageResult:
        skill = self._own(name)
        target = safe_support_path(skill.path, file_path)
        _check_text_size(content, file_path)
        scan = self._guarded(skill.path, {target: content})
        return self._report(f"Wrote {file_path} in {name!r} ({len(content):,} characters).", scan)

    def remove_file(self, name: str, file_path: str) -> ManageResult:
        skill = self._own(name)
        target = safe_support_path(skill.path, file_path)
        if not target.is_file():
            raise SkillError(f"{file_path} does not exist in skill {name!r}")
        target.unlink()
        _prune_empty(target.parent, stop=skill.path)
        return ManageResult(f"Removed {file_path} from {name!r}.")

    @staticmethod
    def _parse(content: str, path: Path) -> Skill:
        if not isinstance(content, str):
            raise SkillError("content must be the full SKILL.md text")
        if len(content) > MAX_SKILL_MD_CHARS:
            raise SkillError(f"SKILL.md has {len(content):,} characters; the limit is {MAX_SKILL_MD_CHARS:,}")
        return parse_skill_md(content, path)


def _atomic_text(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with open(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _prune_empty(folder: Path, stop: Path | None = None) -> None:
    """Remove empty support folders left behind (never ``stop`` or above)."""
    while folder != stop and folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
        if stop is None and folder.name not in SUPPORT_DIRS:
            return
        folder.rmdir()
        folder = folder.parent
