"""Argument parsing, path resolution and text checks shared by the built-in tools.

Models send loosely typed arguments ("10" for 10, "true" for true); the
helpers accept those and raise ToolError, naming the argument, for anything
else, so a bad call costs one readable error instead of a traceback.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hermes.kernel import ToolContext, ToolError

__all__ = [
    "BINARY_SNIFF_BYTES",
    "display_path",
    "is_binary",
    "looks_binary",
    "opt_bool",
    "opt_int",
    "opt_str",
    "req_str",
    "resolve_path",
]

BINARY_SNIFF_BYTES = 8192


def req_str(args: dict[str, Any], name: str, *, allow_empty: bool = False) -> str:
    """A required string argument."""
    value = args.get(name)
    if value is None:
        raise ToolError(f"missing required argument {name!r}")
    if not isinstance(value, str):
        raise ToolError(f"argument {name!r} must be a string, got {type(value).__name__}")
    if not allow_empty and not value:
        raise ToolError(f"argument {name!r} must not be empty")
    return value


def opt_str(args: dict[str, Any], name: str) -> str | None:
    """An optional string argument (None or empty means absent)."""
    value = args.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ToolError(f"argument {name!r} must be a string, got {type(value).__name__}")
    return value


def opt_int(
    args: dict[str, Any], name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    """An optional integer argument, clamped to ``maximum``; below ``minimum`` is an error."""
    value = args.get(name)
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        raise ToolError(f"argument {name!r} must be an integer, got a boolean")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise ToolError(f"argument {name!r} must be an integer, got {value!r}") from None
    if not isinstance(value, int):
        raise ToolError(f"argument {name!r} must be an integer, got {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise ToolError(f"argument {name!r} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        value = maximum  # a generous ask is not worth an error turn
    return value


def opt_bool(args: dict[str, Any], name: str, default: bool = False) -> bool:
    """An optional boolean argument; accepts "true"/"false" strings."""
    value = args.get(name)
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0", "yes", "no"):
        return value.strip().lower() in ("true", "1", "yes")
    if isinstance(value, int):
        return bool(value)
    raise ToolError(f"argument {name!r} must be true or false, got {value!r}")


def resolve_path(ctx: ToolContext, raw: str) -> Path:
    """``raw`` with ``~`` expanded, relative to the session's working directory.

    When the session is confined to a workspace (``ctx.services["workspace"]``,
    set by ``hermes serve``), a path outside it, symlinks resolved, is a ToolError.
    """
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute():
        path = Path(ctx.cwd) / path
    workspace = ctx.services.get("workspace")
    if workspace is not None and not path.resolve().is_relative_to(Path(workspace).resolve()):
        raise ToolError(f"{raw} is outside the workspace {workspace}; use a path inside it.")
    return path


def display_path(ctx: ToolContext, path: Path) -> str:
    """``path`` relative to the working directory when inside it (what the model can pass back)."""
    try:
        return str(path.relative_to(Path(ctx.cwd)))
    except ValueError:
        return str(path)


def looks_binary(head: bytes) -> bool:
    """True when a file's first bytes hold a NUL byte (text files, even UTF-16-free ones, do not)."""
    return b"\x00" in head


def is_binary(path: Path) -> bool:
    """True when ``path`` looks like a binary file."""
    with open(path, "rb") as fh:
        return looks_binary(fh.read(BINARY_SNIFF_BYTES))
