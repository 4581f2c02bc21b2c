"""Walking a tree for ``search_files``: which folders to skip and how matches are collected."""

from __future__ import annotations

import fnmatch
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ._common import BINARY_SNIFF_BYTES, looks_binary

__all__ = ["SKIP_DIRS", "SearchResult", "find_content", "find_names", "is_skipped_dir", "walk_files"]

# Folders that are never the model's own code: version control, dependency
# caches, virtual environments. Searching them floods the result with noise.
SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn",
        ".venv", "venv", "node_modules", "__pycache__",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox",
    }
)
MAX_FILE_BYTES = 10 * 1024 * 1024  # larger files are logs or data, not source
MAX_LINE_CHARS = 250
TIME_BUDGET_S = 30.0


@dataclass
class SearchResult:
    """Matches (as output lines) and why the search stopped."""

    lines: list[str] = field(default_factory=list)
    more: bool = False
    files_searched: int = 0
    stopped: str | None = None  # "time" or "interrupted"


def is_skipped_dir(parent: str, name: str) -> bool:
    """True for a folder search_files never descends into."""
    return name in SKIP_DIRS or os.path.isfile(os.path.join(parent, name, "pyvenv.cfg"))


def walk_files(root: Path) -> Iterator[Path]:
    """Files under ``root`` in a stable order, skipping SKIP_DIRS and virtual environments.

    Symlinked folders are not followed (no loops, no escaping the tree).
    """
    if root.is_file():
        yield root
        return
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not is_skipped_dir(dirpath, d))
        for name in sorted(filenames):
            path = Path(dirpath, name)
            if not _denied(path):
                yield path


def _denied(path: Path) -> bool:
    """True for files on the path policy's deny list (~/.ssh/..., HERMES_HOME/.env): never searched."""
    from hermes.kernel.paths_policy import denied_reason

    target = Path(os.path.realpath(path)) if path.is_symlink() else Path(os.path.abspath(path))
    return denied_reason(target, write=False) is not None


def _glob_matches(glob: str, path: Path, rel: str) -> bool:
    # A glob with a slash is about the path ("src/*.py"), otherwise about the name.
    if "/" in glob:
        return fnmatch.fnmatch(rel, glob) or fnmatch.fnmatch(rel, glob.removeprefix("**/"))
    return fnmatch.fnmatch(path.name, glob)


def _stop_reason(started: float, interrupted: Callable[[], bool]) -> str | None:
    if interrupted():
        return "interrupted"
    if time.monotonic() - started > TIME_BUDGET_S:
        return "time"
    return None


def find_content(
    root: Path,
    regex: re.Pattern[str],
    *,
    show: Callable[[Path], str],
    file_glob: str | None,
    limit: int,
    interrupted: Callable[[], bool],
) -> SearchResult:
    """Lines matching ``regex`` as ``file:line: text``, at most ``limit`` (``more`` when there are others)."""
    result = SearchResult()
    started = time.monotonic()
    for path in walk_files(root):
        rel = path.relative_to(root).as_posix() if path != root else path.name
        if file_glob and not _glob_matches(file_glob, path, rel):
            continue
        if result.files_searched % 64 == 0 and (reason := _stop_reason(started, interrupted)):
            result.stopped = reason
            break
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            with open(path, "rb") as fh:
                if looks_binary(fh.read(BINARY_SNIFF_BYTES)):
                    continue
                fh.seek(0)
                text = fh.read().decode("utf-8", errors="replace")
        except OSError:  # unreadable or vanished: not worth failing the whole search
            continue
        result.files_searched += 1
        shown = show(path)
        for number, line in enumerate(text.splitlines(), start=1):
            if regex.search(line):
                if len(result.lines) == limit:
                    result.more = True
                    return result
                if len(line) > MAX_LINE_CHARS:
                    line = line[:MAX_LINE_CHARS] + " …"
                result.lines.append(f"{shown}:{number}: {line}")
    return result


def find_names(
    root: Path,
    pattern: str,
    *,
    show: Callable[[Path], str],
    file_glob: str | None,
    limit: int,
    interrupted: Callable[[], bool],
) -> SearchResult:
    """Files whose name matches a glob, or whose path contains ``pattern`` (case-insensitive)."""
    result = SearchResult()
    started = time.monotonic()
    is_glob = any(ch in pattern for ch in "*?[")
    needle = pattern.lower()
    for count, path in enumerate(walk_files(root)):
        if count % 256 == 0 and (reason := _stop_reason(started, interrupted)):
            result.stopped = reason
            break
        rel = path.relative_to(root).as_posix() if path != root else path.name
        result.files_searched += 1
        if file_glob and not _glob_matches(file_glob, path, rel):
            continue
        matched = _glob_matches(pattern, path, rel) if is_glob else needle in rel.lower()
        if matched:
            if len(result.lines) == limit:
                result.more = True
                break
            result.lines.append(show(path))
    return result
