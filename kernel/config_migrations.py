"""Config layout versions: append-only migrations from older ``config.yaml`` files.

A file without ``config_version`` is version 0 (the layout before versions).
Each migration takes the mapping of version N and returns version N + 1; it
is never edited once released. On load an older file is upgraded, the
original is kept beside it as ``config.yaml.v<N>-<YYYYmmdd-HHMMSS>.bak`` and
the upgraded file replaces it; ``hermes config migrate`` does the same on demand.
"""

from __future__ import annotations

import copy
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .config_schema import CONFIG_VERSION
from .errors import ConfigError
from .lazy_log import LazyLogger

__all__ = ["MIGRATIONS", "file_version", "migrate_data", "migrate_file", "migrated_in_this_process"]

log = LazyLogger(__name__)

Migration = Callable[[dict[str, Any]], dict[str, Any]]

# Upgrades written by this process: path -> (version it had, backup). Loading the
# config migrates before any command runs, so `hermes config migrate` reports from here.
_written: dict[Path, tuple[int, Path]] = {}


def migrated_in_this_process(path: Path) -> tuple[int, Path] | None:
    """(version it had, backup) when this process upgraded ``path``, else None."""
    return _written.get(path)


def _split_names(value: Any) -> Any:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def _v0_to_v1(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1: lists of names are lists (``toolsets: a,b`` was a string); the version is stamped."""
    if "toolsets" in data:
        data["toolsets"] = _split_names(data["toolsets"])
    for section, key in (("plugins", "disabled"), ("skills", "disabled"), ("skills", "external_dirs")):
        node = data.get(section)
        if isinstance(node, dict) and key in node:
            node[key] = _split_names(node[key])
    return data


# MIGRATIONS[n] upgrades version n to n + 1. Append only.
MIGRATIONS: list[Migration] = [_v0_to_v1]
assert len(MIGRATIONS) == CONFIG_VERSION, "one migration per config version"


def file_version(data: dict[str, Any], path: Path | str = "config.yaml") -> int:
    """The layout version of a config mapping (0 when it has none)."""
    version = data.get("config_version", 0)
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise ConfigError(f"{path}: config_version must be a whole number, not {version!r}")
    if version > CONFIG_VERSION:
        raise ConfigError(
            f"{path}: config_version {version} is newer than this hermes-kernel understands "
            f"({CONFIG_VERSION}); upgrade hermes-kernel"
        )
    return version


def migrate_data(data: dict[str, Any], path: Path | str = "config.yaml") -> tuple[dict[str, Any], int]:
    """The mapping upgraded to :data:`CONFIG_VERSION` and the version it had."""
    start = file_version(data, path)
    upgraded = copy.deepcopy(data)
    for version in range(start, CONFIG_VERSION):
        upgraded = MIGRATIONS[version](upgraded)
    if start < CONFIG_VERSION:
        # The version goes first so a reader sees it at the top of the file.
        upgraded = {"config_version": CONFIG_VERSION, **{k: v for k, v in upgraded.items() if k != "config_version"}}
    return upgraded, start


def _reread(path: Path, read: dict[str, Any]) -> dict[str, Any]:
    """The file's mapping as it is now, or ``read`` (what the caller read) if it cannot be parsed."""
    import yaml

    try:
        now = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return read
    return now if isinstance(now, dict) else read


def migrate_file(path: Path, data: dict[str, Any], *, write: bool = True) -> tuple[dict[str, Any], Path | None]:
    """Upgrade the file at ``path`` whose mapping is ``data``; returns (upgraded, backup path or None).

    Nothing is written when the file is current. When it cannot be written (a
    read-only home) the upgrade is used in memory and the file stays as it was.
    """
    upgraded, start = migrate_data(data, path)
    if start == CONFIG_VERSION or not write:
        return upgraded, None
    import yaml

    from .home import atomic_write, file_lock, lock_file_for

    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup = path.with_name(f"{path.name}.v{start}-{stamp}.bak")
    try:
        with file_lock(lock_file_for(path)):
            # Upgrade what the file holds now: a `config set` since ``data`` was read must not be lost.
            upgraded, start = migrate_data(_reread(path, data), path)
            if start == CONFIG_VERSION:
                return upgraded, None  # another process upgraded it meanwhile
            shutil.copy2(path, backup)
            atomic_write(path, yaml.safe_dump(upgraded, sort_keys=False, allow_unicode=True))
    except OSError as exc:
        log.debug("config migration not written (%s); using it in memory", exc)
        return upgraded, None
    _written[path] = (start, backup)
    log.info("upgraded %s from config version %d to %d; the original is %s", path, start, CONFIG_VERSION, backup)
    return upgraded, backup
