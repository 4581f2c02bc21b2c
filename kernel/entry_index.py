"""The installed entry points of the hermes groups, indexed once per installation.

Scanning distributions needs :mod:`importlib.metadata`, whose import alone (it pulls in
the ``email`` package) and scan cost more than the rest of ``hermes --help``. The index
is kept in one small text file per interpreter (tab-separated: no ``json`` or ``hashlib``
import on this path either) and trusted while ``sys.path`` is the same
list and every folder on it, and every indexed ``entry_points.txt``, keeps its
modification time: ``pip install``, ``pip uninstall`` and a reinstalled editable package
all change one of those. The working directory is matched by name only (it changes all
the time). A cache that cannot be read or written is simply not used.

``HERMES_ENTRY_POINT_CACHE`` names another cache folder; ``off`` turns the cache off.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from pathlib import Path
from typing import Any, NamedTuple

from .home import atomic_write
from .lazy_log import LazyLogger

__all__ = ["EntryRecord", "cache_dir", "installed_entry_points", "scan_distributions"]

log = LazyLogger(__name__)

_FORMAT = "hermes-entry-points 1"
_PREFIXES = ("hermes.", "hermes_agent.")
_VALUE = r"^\s*(?P<module>[\w.]+)\s*(?::\s*(?P<attr>[\w.]+)\s*)?(?:\[[^\]]*\]\s*)?$"


class EntryRecord(NamedTuple):
    """One entry point: where it is found and which distribution installed it."""

    group: str
    name: str
    value: str
    distribution: str
    version: str

    def load(self) -> Any:
        """Import the object ``value`` names (``module`` or ``module:attr.sub``), as importlib would."""
        match = re.match(_VALUE, self.value)  # compiled on first load, not at import
        if match is None:
            raise ValueError(f"entry point {self.name!r} in {self.group} has a malformed value {self.value!r}")
        obj: Any = importlib.import_module(match["module"])
        for part in (match["attr"] or "").split(".") if match["attr"] else ():
            obj = getattr(obj, part)
        return obj


def cache_dir() -> Path | None:
    """Where the index is kept, or None when turned off."""
    chosen = os.environ.get("HERMES_ENTRY_POINT_CACHE", "")
    if chosen.lower() in ("off", "0", "false", "no"):
        return None
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hermes-kernel" / "entry-points"


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _fingerprint() -> list[tuple[str, int | None]]:
    cwd = os.getcwd()
    return [(entry, None if entry in ("", cwd) else _mtime(entry)) for entry in sys.path]


def _stamp(value: int | None) -> str:
    return "-" if value is None else str(value)


def scan_distributions() -> tuple[list[EntryRecord], dict[str, int | None]]:
    """Every hermes entry point installed, and the ``entry_points.txt`` files they came from."""
    import importlib.metadata as metadata

    records: list[EntryRecord] = []
    files: dict[str, int | None] = {}
    seen: set[tuple[str, str, str]] = set()
    for dist in metadata.distributions():
        ours = [ep for ep in dist.entry_points if ep.group.startswith(_PREFIXES)]
        if not ours:
            continue
        name, version = dist.metadata["Name"] or "", dist.version or ""
        folder = getattr(dist, "_path", None)  # a PathDistribution's dist-info folder; others are not watched
        if folder is not None:
            text = str(Path(str(folder)) / "entry_points.txt")
            files[text] = _mtime(text)
        for ep in ours:
            key = (ep.group, ep.name, ep.value)
            if key not in seen:  # the same distribution found twice on sys.path repeats its entries
                seen.add(key)
                records.append(EntryRecord(ep.group, ep.name, ep.value, name, version))
    return records, files


def _read(path: Path, fingerprint: list[tuple[str, int | None]]) -> list[EntryRecord] | None:
    """The records of the index at ``path`` when it was written for this ``sys.path`` and is current."""
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError):
        return None
    if not lines or lines[0] != _FORMAT:
        return None
    paths, records = [], []
    for line in lines[1:]:
        kind, _, rest = line.partition("\t")
        fields = rest.split("\t")
        if kind == "P" and len(fields) == 2:
            paths.append((fields[0], fields[1]))
        elif kind == "F" and len(fields) == 2:
            if _stamp(_mtime(fields[0])) != fields[1]:
                return None
        elif kind == "E" and len(fields) == 5:
            records.append(EntryRecord(*fields))
        elif kind != "" or rest:
            return None  # damaged: rescan
    if paths != [(entry, _stamp(stamp)) for entry, stamp in fingerprint]:
        return None
    return records


def _write(path: Path, fingerprint: list[tuple[str, int | None]], records: list[EntryRecord],
           files: dict[str, int | None]) -> None:  # fmt: skip
    rows = [("P", entry, _stamp(stamp)) for entry, stamp in fingerprint]
    rows += [("F", name, _stamp(stamp)) for name, stamp in files.items()]
    rows += [("E", *record) for record in records]
    if any("\t" in field or "\n" in field for row in rows for field in row):
        return  # a name this format cannot hold: no index, the next start scans again
    try:
        atomic_write(path, "\n".join([_FORMAT, *("\t".join(row) for row in rows)]) + "\n", mode=0o644)
    except OSError as exc:  # a read-only home or full disk costs only the next startup's scan
        log.debug("entry-point index not written to %s: %s", path, exc)


def installed_entry_points() -> list[EntryRecord]:
    """The hermes entry points of this interpreter's ``sys.path``: from the index when it is current."""
    folder = cache_dir()
    if folder is None:
        return scan_distributions()[0]
    # One file per interpreter: a changed sys.path rewrites it rather than adding another.
    name = "".join(c if c.isalnum() else "_" for c in sys.executable).strip("_")[-120:]
    path = folder / f"{name}.txt"
    fingerprint = _fingerprint()
    cached = _read(path, fingerprint)
    if cached is not None:
        return cached
    records, files = scan_distributions()
    _write(path, fingerprint, records, files)
    return records
