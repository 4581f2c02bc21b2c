"""The ``builtin`` memory provider: MEMORY.md, USER.md and the ``memory`` tool."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hermes.kernel import MemoryProvider, ToolError

from .store import FILES, MemoryFiles, MemoryStoreError, Operation, render_entries

__all__ = ["BuiltinMemoryProvider", "DEFAULT_LIMITS", "MEMORY_TOOL"]

DEFAULT_LIMITS = {"memory": 2200, "user": 1375}
_LIMIT_KEYS = {"memory": "memory.memory_limit", "user": "memory.user_limit"}

_OPERATION = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["add", "replace", "remove"]},
        "target": {"type": "string", "enum": ["memory", "user"]},
        "content": {"type": "string", "description": "The entry text (add, replace)."},
        "old_text": {"type": "string", "description": "A unique piece of the entry to change (replace, remove)."},
    },
    "required": ["action", "target"],
}

MEMORY_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "memory",
        "description": (
            "Save durable notes that later sessions will see in the system prompt. target 'memory' is your own "
            "notes (environment facts, conventions, lessons learned); 'user' is the user's profile (name, role, "
            "preferences). Save facts that will still matter next week, not task progress. Entries are short; "
            "add appends one, replace and remove find the entry by a unique piece of its text (old_text), batch "
            "applies several operations all together or not at all. When full, consolidate with replace/remove."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["add", "replace", "remove", "batch"]},
                "target": {"type": "string", "enum": ["memory", "user"]},
                "content": {"type": "string", "description": "The entry text (add, replace)."},
                "old_text": {"type": "string", "description": "A unique piece of the entry to change (replace, remove)."},
                "operations": {"type": "array", "items": _OPERATION, "description": "For batch: the operations in order."},
            },
            "required": ["action"],
        },
    },
}


def limits_from(config: Any) -> dict[str, int]:
    """Character limits per file from ``memory.memory_limit`` / ``memory.user_limit``."""
    limits = dict(DEFAULT_LIMITS)
    if config is not None:
        for target, key in _LIMIT_KEYS.items():
            value = config.get(key, limits[target])
            try:
                limits[target] = max(1, int(value))
            except (TypeError, ValueError):
                pass  # a bad value keeps the default; `hermes doctor` is the place to complain
    return limits


def _operation(raw: Any) -> Operation:
    if not isinstance(raw, dict):
        raise ToolError("each operation must be an object with action, target, content / old_text")
    return Operation(
        action=str(raw.get("action") or ""),
        target=str(raw.get("target") or ""),
        content=str(raw.get("content") or ""),
        old_text=str(raw.get("old_text") or ""),
    )


class BuiltinMemoryProvider(MemoryProvider):
    """Agent notes and user profile as two small Markdown files in ``HERMES_HOME/memories``.

    Besides the contract's keyword arguments, :meth:`initialize` takes
    ``config`` (for the limits) and ``notify_memory_write(action, target,
    content)``, called after every committed write so the kernel can fire
    ``on_memory_write``.
    """

    name = "builtin"

    def __init__(self) -> None:
        self.files: MemoryFiles | None = None
        self._notify: Callable[[str, str, str], None] | None = None

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        home = kwargs["hermes_home"]
        self.files = MemoryFiles(home.memories_dir, limits_from(kwargs.get("config")))
        self._notify = kwargs.get("notify_memory_write")

    def _files(self) -> MemoryFiles:
        if self.files is None:
            raise RuntimeError("the builtin memory provider is not initialized")
        return self.files

    def system_prompt_block(self) -> str | None:
        files = self._files()
        sections = [
            "## Memory\n"
            "Notes saved in earlier sessions with the memory tool. This snapshot is fixed for the session: "
            "what you save now is on disk at once and appears here from the next session on."
        ]
        titles = {"memory": "Your notes", "user": "The user"}
        for target, filename in FILES.items():
            entries = files.entries(target)
            body = render_entries(entries) if entries else "(empty)"
            sections.append(f"### {titles[target]} ({filename}, {files.describe(target, entries)})\n{body}")
        return "\n\n".join(sections)

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [MEMORY_TOOL]

    def handle_tool_call(self, name: str, args: dict[str, Any]) -> str:
        if name != "memory":
            return super().handle_tool_call(name, args)
        action = str(args.get("action") or "")
        if action == "batch":
            raw = args.get("operations")
            if not isinstance(raw, list) or not raw:
                raise ToolError("batch needs a non-empty 'operations' list")
            operations = [_operation(item) for item in raw]
        else:
            operations = [_operation(args)]
        files = self._files()
        try:
            writes = files.apply(operations)
        except MemoryStoreError as exc:
            raise ToolError(str(exc)) from None
        for write in writes:
            if self._notify is not None:
                self._notify(write.action, write.target, write.content)
        touched = [t for t in FILES if any(op.target == t for op in operations)]
        return json.dumps(
            {
                "saved": [{"action": w.action, "target": w.target, "content": w.content} for w in writes],
                "unchanged": len(operations) - len(writes),  # duplicate adds
                "usage": {t: files.describe(t) for t in touched},
            },
            ensure_ascii=False,
        )

    def describe(self, hermes_home: Any, config: Any) -> dict[str, Any]:
        """Status for ``hermes memory status|show``: each file's path, entries and usage."""
        files = MemoryFiles(hermes_home.memories_dir, limits_from(config))
        report = {}
        for target in FILES:
            entries = files.entries(target)
            used, limit = files.usage(target, entries)
            report[target] = {
                "path": str(files.path(target)), "entries": entries, "chars": used, "limit": limit,
            }  # fmt: skip
        return {"files": report}
