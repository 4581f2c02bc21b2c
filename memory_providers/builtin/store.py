"""MEMORY.md and USER.md: entries separated by a ``§`` line, bounded in size.

Every change is a read-modify-write under an exclusive lock on a side file
(``.MEMORY.md.lock``, :func:`hermes.kernel.file_lock`), finished by an atomic
replace, so two processes writing at once never lose an entry and a reader
never sees half a file. A batch of operations is
applied to copies first and written only when every operation succeeded.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hermes.kernel import atomic_write, file_lock, lock_file_for

from .guard import SEPARATOR, refusal_reason

__all__ = ["FILES", "MemoryFiles", "MemoryStoreError", "Operation", "Write"]

#: target -> file name, in lock order.
FILES = {"memory": "MEMORY.md", "user": "USER.md"}
_JOIN = f"\n{SEPARATOR}\n"


class MemoryStoreError(Exception):
    """An operation that cannot be done; the message tells the model what to do instead."""


@dataclass(frozen=True)
class Operation:
    """One change: ``add`` content, ``replace`` the entry holding old_text, ``remove`` it."""

    action: str
    target: str
    content: str = ""
    old_text: str = ""


@dataclass(frozen=True)
class Write:
    """A committed change (what ``on_memory_write`` reports)."""

    action: str
    target: str
    content: str


def parse_entries(text: str) -> list[str]:
    """The entries of a memory file (blank entries dropped)."""
    entries, current = [], []
    for line in text.splitlines():
        if line.strip() == SEPARATOR:
            entries.append("\n".join(current).strip())
            current = []
        else:
            current.append(line)
    entries.append("\n".join(current).strip())
    return [e for e in entries if e]


def render_entries(entries: Sequence[str]) -> str:
    return _JOIN.join(entries)


class MemoryFiles:
    """The two memory files of one home and their character limits."""

    def __init__(self, folder: Path, limits: dict[str, int]) -> None:
        self.folder = folder
        self.limits = dict(limits)

    def path(self, target: str) -> Path:
        return self.folder / FILES[target]

    def entries(self, target: str) -> list[str]:
        try:
            return parse_entries(self.path(target).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []

    def usage(self, target: str, entries: Sequence[str] | None = None) -> tuple[int, int]:
        """(characters used, limit); the separators count, as they take prompt space too."""
        text = render_entries(self.entries(target) if entries is None else entries)
        return len(text), self.limits[target]

    def describe(self, target: str, entries: Sequence[str] | None = None) -> str:
        used, limit = self.usage(target, entries)
        return f"{used:,}/{limit:,} chars ({used * 100 // max(limit, 1)}%)"

    def apply(self, operations: Sequence[Operation]) -> list[Write]:
        """Apply ``operations`` all together or not at all; return what was committed."""
        if not operations:
            raise MemoryStoreError("no operations given")
        for op in operations:
            if op.target not in FILES:
                raise MemoryStoreError(f"unknown target {op.target!r}; use 'memory' (your notes) or 'user' (the user profile)")
        targets = [t for t in FILES if any(op.target == t for op in operations)]
        with contextlib.ExitStack() as stack:
            for target in targets:  # always in FILES order, so two batches cannot deadlock
                stack.enter_context(file_lock(lock_file_for(self.path(target))))
            before = {t: self.entries(t) for t in targets}
            after = {t: list(entries) for t, entries in before.items()}
            writes: list[Write] = []
            for index, op in enumerate(operations, start=1):
                try:
                    write = self._apply_one(after[op.target], op)
                except MemoryStoreError as exc:
                    if len(operations) > 1:
                        raise MemoryStoreError(f"operation {index} ({op.action}) failed, nothing was saved: {exc}") from None
                    raise
                if write is not None:
                    writes.append(write)
            for target in targets:
                used, limit = self.usage(target, after[target])
                if used > limit:
                    raise MemoryStoreError(self._overflow(target, before[target], used))
            for target in targets:
                if after[target] != before[target]:
                    text = render_entries(after[target])
                    atomic_write(self.path(target), text + "\n" if text else "", mode=0o600)
        return writes

    def _apply_one(self, entries: list[str], op: Operation) -> Write | None:
        content = op.content.strip()
        if op.action in ("add", "replace"):
            if not content:
                raise MemoryStoreError(f"{op.action} needs non-empty content")
            reason = refusal_reason(content)
            if reason is not None:
                raise MemoryStoreError(f"refused: {reason}")
        if op.action == "add":
            if content in entries:
                return None  # already saved: success without a duplicate
            entries.append(content)
            return Write("add", op.target, content)
        if op.action in ("replace", "remove"):
            index = self._find(entries, op.old_text, op.target)
            if op.action == "remove":
                return Write("remove", op.target, entries.pop(index))
            if content in entries and entries[index] != content:
                entries.pop(index)  # the new text is already another entry: keep one
            else:
                entries[index] = content
            return Write("replace", op.target, content)
        raise MemoryStoreError(f"unknown action {op.action!r}; use add, replace, remove or batch")

    def _find(self, entries: list[str], old_text: str, target: str) -> int:
        needle = old_text.strip()
        if not needle:
            raise MemoryStoreError("old_text is required: a unique piece of the entry to change")
        matches = [i for i, entry in enumerate(entries) if needle in entry]
        if not matches:
            raise MemoryStoreError(f"no {target} entry contains {needle!r}; current entries:\n{_listing(entries)}")
        if len({entries[i] for i in matches}) > 1:
            shown = "\n".join(f"- {entries[i]}" for i in matches)
            raise MemoryStoreError(f"{needle!r} matches {len(matches)} {target} entries; use a longer, unique piece:\n{shown}")
        return matches[0]

    def _overflow(self, target: str, current: list[str], wanted: int) -> str:
        limit = self.limits[target]
        return (
            f"{FILES[target]} would hold {wanted:,} chars, over its limit of {limit:,}. "
            f"Consolidate first: replace or remove entries (a batch can do both at once). "
            f"Current usage {self.describe(target, current)}; current entries:\n{_listing(current)}"
        )


def _listing(entries: Sequence[str]) -> str:
    return "\n".join(f"{i}. {entry}" for i, entry in enumerate(entries, start=1)) or "(none)"
