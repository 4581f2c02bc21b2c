"""Installing skills from a path or a VCS URL: quarantine, scan, policy, move, lock file.

The source is copied (or cloned) into ``HERMES_HOME/skills/.hub/quarantine/`` first, so
nothing unscanned ever sits where the library looks. Each skill found there is parsed,
scanned and judged by the trust policy; only when every one is allowed are they moved
in, and ``skills/.hub/lock.json`` records source, trust, verdict and content hash.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..home import atomic_write
from .guard import SEVERITIES, ScanResult, decide, scan_skill
from .library import SkillsLibrary, iter_skill_dirs
from .skill import SkillError, load_skill, validate_name

__all__ = [
    "InstallPlan",
    "content_hash",
    "hub_dir",
    "install_skills",
    "is_vcs_url",
    "read_lock",
    "remove_skill",
    "trust_for",
]

MAX_REASON_CHARS = 500
_VCS_PREFIXES = ("git+", "git@", "https://", "http://", "ssh://", "file://")
_COPY_IGNORE = shutil.ignore_patterns(".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", "*.pyc")


def hub_dir(home: Any) -> Path:
    """``HERMES_HOME/skills/.hub`` (hidden, so discovery never looks inside)."""
    return Path(home.skills_dir) / ".hub"


def _lock_path(home: Any) -> Path:
    return hub_dir(home) / "lock.json"


def read_lock(home: Any) -> dict[str, dict[str, Any]]:
    """Installed skills by name: source, trust, verdict, hash, path, installed_at."""
    try:
        data = json.loads(_lock_path(home).read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
    skills = data.get("skills") if isinstance(data, dict) else None
    return skills if isinstance(skills, dict) else {}


def _write_lock(home: Any, skills: dict[str, dict[str, Any]]) -> None:
    text = json.dumps({"version": 1, "skills": dict(sorted(skills.items()))}, indent=2, ensure_ascii=False)
    atomic_write(_lock_path(home), text + "\n", mode=0o644)


def content_hash(folder: Path) -> str:
    """``sha256:<hex>`` over every file's relative path and bytes, in sorted order."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return "sha256:" + digest.hexdigest()


def is_vcs_url(source: str) -> bool:
    return source.startswith(_VCS_PREFIXES)


def trust_for(source: str, config: Any = None) -> str:
    """``trusted`` when the source starts with an entry of ``skills.trusted_sources``, else ``community``."""
    get = getattr(config, "get", None)
    trusted = (get("skills.trusted_sources", []) if get else []) or []
    return "trusted" if any(source.startswith(str(prefix)) for prefix in trusted if prefix) else "community"


def _fetch(source: str, dest: Path) -> None:
    """Copy a local folder, or shallow-clone a VCS URL (``URL#subdir`` picks a folder), into ``dest``."""
    if is_vcs_url(source):
        url, _, subdir = source.partition("#")
        url = url.removeprefix("git+")
        clone = dest.parent / "clone"
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
        try:
            proc = subprocess.run(
                ["git", "clone", "--depth", "1", "--quiet", "--", url, str(clone)],
                capture_output=True, text=True, env=env, timeout=300,
            )
        except FileNotFoundError:
            raise SkillError("installing from a URL needs git on PATH") from None
        except subprocess.TimeoutExpired:
            raise SkillError(f"git clone of {url} timed out") from None
        if proc.returncode != 0:
            reason = (proc.stderr.strip().splitlines() or ["unknown error"])[-1]
            raise SkillError(f"git clone of {url} failed: {reason}")
        origin = clone / subdir if subdir else clone
        if subdir and (".." in Path(subdir).parts or not origin.resolve().is_relative_to(clone.resolve())):
            raise SkillError(f"subfolder {subdir!r} escapes the repository")
    else:
        origin = Path(source).expanduser()
    if not origin.is_dir():
        raise SkillError(f"{source} is not a folder with skills")
    # symlinks=True keeps links as links, so the guard sees (and refuses) any that escape.
    try:
        shutil.copytree(origin, dest, symlinks=True, ignore=_COPY_IGNORE)
    except shutil.Error as exc:  # a named pipe, socket or unreadable file: copytree lists each
        errors = exc.args[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise SkillError(f"cannot copy {source}: {errors[0][2]}{more}; a skill holds only regular files and folders") from None


@dataclass
class InstallPlan:
    """One skill waiting in quarantine: where, its scan and the policy's answer."""

    name: str
    staged: Path
    scan: ScanResult
    action: str
    dest: Path


def install_skills(
    home: Any,
    source: str,
    *,
    config: Any = None,
    host: Any = None,
    trust: str | None = None,
    category: str | None = None,
    force: bool = False,
    reason: str | None = None,
    by: str | None = None,
    confirm: Callable[[InstallPlan], bool] | None = None,
    report: Callable[[InstallPlan], None] | None = None,
) -> list[dict[str, Any]]:
    """Install every skill found at ``source``; all or nothing. Returns their lock entries.

    ``confirm`` answers ``ask`` verdicts (None: refuse them); ``force`` allows them and
    replaces skills already installed. A ``block`` (dangerous) is overridden only by
    ``force`` with a ``reason``; the lock entry then records who (``by``), why and what
    the guard found. ``report`` sees each plan before the decision (the CLI prints findings with it).
    """
    if reason is not None:
        reason = " ".join(reason.split())
        if not reason:
            raise SkillError("--reason is empty; say why you accept this skill, e.g. --reason 'reviewed scripts/setup.sh'")
        if len(reason) > MAX_REASON_CHARS:
            raise SkillError(f"--reason has {len(reason)} characters; keep it under {MAX_REASON_CHARS}")
    overriding = force and reason is not None
    trust = trust or trust_for(source, config)
    if category:
        for part in category.split("/"):
            validate_name(part)
    root = Path(home.skills_dir)
    quarantine = hub_dir(home) / "quarantine" / uuid.uuid4().hex
    quarantine.mkdir(parents=True, mode=0o700)
    try:
        staged_root = quarantine / "src"
        _fetch(source, staged_root)
        folders = iter_skill_dirs(staged_root)
        if not folders:
            raise SkillError(f"no SKILL.md found in {source}")
        library = SkillsLibrary.discover(home, config, host)
        plans: list[InstallPlan] = []
        seen: set[str] = set()
        for folder in folders:
            try:
                skill = load_skill(folder)
            except SkillError as exc:
                raise SkillError(f"invalid skill in {folder.relative_to(staged_root).as_posix() or '.'}: {exc}") from None
            if skill.name in seen:
                raise SkillError(f"{source} holds two skills named {skill.name!r}")
            seen.add(skill.name)
            existing = library.get(skill.name)
            if existing is not None and existing.source == "user":
                if not force:
                    raise SkillError(f"skill {skill.name!r} is already installed; use --force --reason TEXT to replace it")
                dest = existing.path
            else:
                dest = root.joinpath(*(category.split("/") if category else ()), skill.name)
            scan = scan_skill(folder)
            plan = InstallPlan(skill.name, folder, scan, decide(scan.verdict, trust, force=force), dest)
            if report is not None:
                report(plan)
            if plan.action == "ask" and not (confirm is not None and confirm(plan)):
                raise SkillError(f"skill {skill.name!r} scanned {scan.verdict}; not installed (review it, then use --force --reason TEXT)")
            if plan.action == "block" and not overriding:
                hint = " (to install it anyway: --force --reason TEXT)" if trust != "agent" else ""
                raise SkillError(f"skill {skill.name!r} scanned {scan.verdict}; blocked for {trust} sources{hint}")
            plans.append(plan)
        lock = read_lock(home)
        entries = []
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        for plan in plans:
            if plan.dest.exists():
                shutil.rmtree(plan.dest)
            plan.dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(plan.staged), str(plan.dest))
            entry = {
                "source": source,
                "trust": trust,
                "verdict": plan.scan.verdict,
                "hash": content_hash(plan.dest),
                "path": plan.dest.relative_to(root).as_posix(),
                "installed_at": now,
            }
            if overriding:
                entry["forced"] = _override_record(plan.scan, reason or "", by, now)
            lock[plan.name] = entry
            entries.append({"name": plan.name, **entry})
        _write_lock(home, lock)
        return entries
    finally:
        shutil.rmtree(quarantine, ignore_errors=True)


def _override_record(scan: ScanResult, reason: str, by: str | None, now: str) -> dict[str, Any]:
    """Who accepted the guard's verdict, why, and the worst of what it found."""
    worst = sorted(scan.findings, key=lambda f: -SEVERITIES.index(f.severity))[:5]
    return {
        "by": by or _user(),
        "reason": reason,
        "verdict": scan.verdict,
        "findings": [f"{f.severity} {f.rule} ({f.file}:{f.line})" if f.line else f"{f.severity} {f.rule} ({f.file})" for f in worst],
        "at": now,
    }


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name and no passwd entry (some containers)
        return f"uid {os.getuid()}"


def remove_skill(home: Any, name: str, *, config: Any = None, host: Any = None) -> Path:
    """Delete the user skill ``name`` and its lock entry; bundled and external skills are refused."""
    validate_name(name)
    skill = SkillsLibrary.discover(home, config, host).get(name)
    if skill is None:
        raise SkillError(f"no skill named {name!r}; see `hermes skills list`")
    if skill.source != "user":
        raise SkillError(
            f"skill {name!r} is {skill.source}, not in {home.skills_dir}; "
            f"hide it with `hermes config set skills.disabled '[{name}]'`"
        )
    shutil.rmtree(skill.path)
    lock = read_lock(home)
    if lock.pop(name, None) is not None:
        _write_lock(home, lock)
    return skill.path
