"""The ``files`` toolset: read_file, write_file, patch and search_files.

Paths are relative to the session's working directory (``ctx.cwd``); ``~``
expands. Every failure the model can fix is a ToolError that says what to
do instead.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hermes.kernel import Tool, ToolContext, ToolError
from hermes.kernel.paths_policy import check_no_markers, check_path

from ._common import display_path, opt_bool, opt_int, opt_str, req_str, resolve_path
from ._fileops import as_file_bytes, atomic_write_text, check_readable_text_file, read_text, shown
from ._search import find_content, find_names

__all__ = [
    "PATCH",
    "READ_FILE",
    "READ_MAX_CHARS",
    "SEARCH_FILES",
    "TOOLS",
    "WRITE_FILE",
    "patch",
    "read_file",
    "search_files",
    "write_file",
]

TOOLSET = "files"
READ_DEFAULT_LIMIT = 500
READ_MAX_LIMIT = 2000
READ_MAX_LINE_CHARS = 2000
# read_file results are never spilled to disk (that invites a read-back loop),
# so the tool bounds its own output well under the kernel's 100,000 spill size.
READ_MAX_CHARS = 50_000
SEARCH_DEFAULT_LIMIT = 50
SEARCH_MAX_LIMIT = 500
SNIPPET_CONTEXT = 2
SNIPPET_MAX_LINES = 30


# --- read_file -------------------------------------------------------------------


def _numbered(number: int, line: str) -> str:
    if len(line) > READ_MAX_LINE_CHARS:
        line = f"{line[:READ_MAX_LINE_CHARS]} … [line truncated, {len(line) - READ_MAX_LINE_CHARS:,} more characters]"
    return f"{number:>6}|{line}"


def read_file(args: dict[str, Any], ctx: ToolContext) -> str:
    """Numbered lines ``offset``..``offset+limit-1`` of a text file, with a note when more remain."""
    raw = req_str(args, "path")
    offset = opt_int(args, "offset", 1, minimum=1)
    limit = opt_int(args, "limit", READ_DEFAULT_LIMIT, minimum=1, maximum=READ_MAX_LIMIT)
    path = resolve_path(ctx, raw)
    check_path(ctx, path, raw, write=False)
    check_readable_text_file(path, raw)

    out: list[str] = []
    size = 0
    total = 0
    last_shown = 0
    capped = False
    # surrogateescape + shown(): a Latin-1 byte reads as its character, and patch can match it.
    with open(path, encoding="utf-8", errors="surrogateescape") as fh:
        for total, line in enumerate(fh, start=1):
            if offset <= total < offset + limit and not capped:
                entry = _numbered(total, shown(line.rstrip("\r\n")))
                if out and size + len(entry) + 1 > READ_MAX_CHARS:
                    capped = True
                    continue
                out.append(entry)
                size += len(entry) + 1
                last_shown = total
    if total == 0:
        return f"({raw} is empty)"
    if offset > total:
        raise ToolError(f"offset {offset} is past the end of {raw}, which has {total:,} lines.")
    text = "\n".join(out)
    if last_shown < total:
        why = f"output capped at {READ_MAX_CHARS:,} characters; " if capped else ""
        text += (
            f"\n[{why}showing lines {offset:,}-{last_shown:,} of {total:,}; "
            f"{total - last_shown:,} more: continue with offset={last_shown + 1}]"
        )
    return text


# --- write_file ------------------------------------------------------------------


def _line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def write_file(args: dict[str, Any], ctx: ToolContext) -> str:
    """Write ``content`` to ``path`` (replacing it), creating parent folders."""
    raw = req_str(args, "path")
    content = req_str(args, "content", allow_empty=True)
    path = resolve_path(ctx, raw)
    check_path(ctx, path, raw, write=True)
    check_no_markers(path, content, raw)
    if path.is_dir():
        raise ToolError(f"{raw} is a directory; give a file path inside it.")
    existed = path.exists()
    try:
        written = atomic_write_text(path, content)
    except PermissionError:
        raise ToolError(f"{raw}: permission denied; choose a path you can write to.") from None
    except (NotADirectoryError, FileExistsError):  # mkdir meets a file where a folder should be
        raise ToolError(f"{raw}: a parent of this path is a file, not a folder.") from None
    verb = "overwrote" if existed else "created"
    return f"{verb} {raw}: wrote {written:,} bytes ({_line_count(content):,} lines)."


# --- patch -----------------------------------------------------------------------


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _occurrences(text: str, old: str) -> list[int]:
    """Where ``old`` starts in ``text``, overlapping matches included ("aa" is in "aaa" twice)."""
    starts, index = [], text.find(old)
    while index != -1:
        starts.append(index)
        index = text.find(old, index + 1)
    return starts


def _loose_match_lines(text: str, old: str) -> list[int]:
    """Lines where ``old`` would match if leading/trailing whitespace on each line were ignored."""
    wanted = [line.strip() for line in old.strip("\n").splitlines()]
    if not wanted or not any(wanted):
        return []
    lines = [line.strip() for line in text.splitlines()]
    size = len(wanted)
    return [i + 1 for i in range(len(lines) - size + 1) if lines[i : i + size] == wanted][:5]


def _snippet(text: str, start_line: int, new_line_count: int) -> str:
    lines = text.splitlines()
    first = max(1, start_line - SNIPPET_CONTEXT)
    last = min(len(lines), start_line + new_line_count - 1 + SNIPPET_CONTEXT)
    last = min(last, first + SNIPPET_MAX_LINES - 1)
    return "\n".join(_numbered(n, lines[n - 1]) for n in range(first, last + 1))


def _non_overlapping(text: str, old: str) -> list[int]:
    found, index = [], text.find(old)
    while index != -1:
        found.append(index)
        index = text.find(old, index + len(old))
    return found


def patch(args: dict[str, Any], ctx: ToolContext) -> str:
    """Replace the one occurrence of ``old_string`` (or all, with ``replace_all``) in a file."""
    raw = req_str(args, "path")
    old = req_str(args, "old_string", allow_empty=True)
    new = req_str(args, "new_string", allow_empty=True)
    replace_all = opt_bool(args, "replace_all")
    if not old:
        raise ToolError("old_string is empty; to create or rewrite a whole file use write_file.")
    if old == new:
        raise ToolError("old_string and new_string are identical; there is nothing to change.")
    path = resolve_path(ctx, raw)
    check_path(ctx, path, raw, write=True)
    check_no_markers(path, new, raw)
    check_readable_text_file(path, raw)
    raw_text = read_text(path)
    text = shown(raw_text)  # what read_file showed; same indices as raw_text

    starts = _occurrences(text, old)
    if not starts and "\r\n" in text and "\r\n" not in old:
        # The model writes "\n"; a Windows-style file says "\r\n". Match in the file's style.
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        starts = _occurrences(text, old)
    count = len(starts)
    if count == 0:
        near = _loose_match_lines(text, old)
        hint = (
            f" Text that differs only in whitespace or indentation starts at line(s) {', '.join(map(str, near))};"
            " copy it exactly from read_file output."
            if near
            else " Use read_file to copy the current text exactly (whitespace and indentation must match)."
        )
        raise ToolError(f"old_string was not found in {raw}.{hint}")
    if count > 1 and not replace_all:
        lines = sorted({_line_of(text, index) for index in starts})[:10]
        raise ToolError(
            f"old_string occurs {count} times in {raw} (lines {', '.join(map(str, lines))}); include more "
            "surrounding context to make it unique, or set replace_all=true to change every one."
        )
    first_line = _line_of(text, starts[0])
    stored = as_file_bytes(new, raw_text)
    if replace_all:
        count = text.count(old)  # what str.replace changes: non-overlapping occurrences
        spans = [m for m in _non_overlapping(text, old)]
    else:
        spans = [starts[0]]
    pieces, last = [], 0
    for start in spans:  # splice into the raw text, so bytes outside the edit stay exactly as they were
        pieces += [raw_text[last:start], stored]
        last = start + len(old)
    written = "".join(pieces) + raw_text[last:]
    updated = shown(written)
    try:
        atomic_write_text(path, written)
    except PermissionError:
        raise ToolError(f"{raw}: permission denied; the file cannot be changed.") from None
    what = f"replaced {count} occurrences" if count > 1 else "replaced 1 occurrence"
    snippet = _snippet(updated, first_line, max(1, new.count("\n") + 1))
    return f"patched {raw}: {what} (first at line {first_line}). It now reads:\n{snippet}"


# --- search_files ----------------------------------------------------------------


def search_files(args: dict[str, Any], ctx: ToolContext) -> str:
    """Regex over file contents, or glob/substring over file names, below ``path``."""
    pattern = req_str(args, "pattern")
    raw = opt_str(args, "path") or "."
    target = opt_str(args, "target") or "content"
    file_glob = opt_str(args, "file_glob")
    limit = opt_int(args, "limit", SEARCH_DEFAULT_LIMIT, minimum=1, maximum=SEARCH_MAX_LIMIT)
    ignore_case = opt_bool(args, "ignore_case")
    if target not in ("content", "files"):
        raise ToolError(f"target must be 'content' or 'files', got {target!r}.")
    root = resolve_path(ctx, raw)
    check_path(ctx, root, raw, write=False)
    if not root.exists():
        raise ToolError(f"{raw}: no such file or folder.")

    def show(path: Path) -> str:
        return display_path(ctx, path)

    if target == "content":
        try:
            regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
        except re.error as exc:
            raise ToolError(
                f"invalid regular expression {pattern!r}: {exc}. Escape special characters "
                r"(\( \[ \. \*) to match them literally."
            ) from None
        result = find_content(
            root, regex, show=show, file_glob=file_glob, limit=limit, interrupted=ctx.is_interrupted
        )
        kind, none = "matches", f"no matches for {pattern!r} in {raw} ({result.files_searched:,} text files searched)"
    else:
        result = find_names(
            root, pattern, show=show, file_glob=file_glob, limit=limit, interrupted=ctx.is_interrupted
        )
        kind, none = "files", f"no file names match {pattern!r} in {raw}"

    lines = result.lines or [none]
    if result.more:
        lines.append(f"[more {kind} exist beyond the first {limit}; narrow the pattern, path or file_glob, or raise limit]")
    if result.stopped == "time":
        lines.append("[search stopped early: it took too long; search a smaller path]")
    elif result.stopped == "interrupted":
        lines.append("[search stopped early: interrupted]")
    return "\n".join(lines)


# --- the toolset -----------------------------------------------------------------

READ_FILE = Tool(
    name="read_file",
    description=(
        "Read a text file with line numbers (each line shown as `     N|text`). Reads up to `limit` lines "
        "starting at line `offset`; when more remain, the result ends with the offset to continue from. "
        "Refuses binary files and folders (use search_files to list a folder). Read a file before patching it."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to read; relative paths are relative to the working directory."},
            "offset": {"type": "integer", "minimum": 1, "description": "First line to show (1-based). Default 1."},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": READ_MAX_LIMIT,
                "description": f"Most lines to show. Default {READ_DEFAULT_LIMIT}, at most {READ_MAX_LIMIT}.",
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    handler=read_file,
    toolset=TOOLSET,
    read_only=True,
    path_params=("path",),
    spill_large_results=False,
)

WRITE_FILE = Tool(
    name="write_file",
    description=(
        "Create a file or replace its whole content, creating missing parent folders. "
        "To change part of an existing file, use patch instead: it is safer and cheaper."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to write; relative paths are relative to the working directory."},
            "content": {"type": "string", "description": "The complete new content of the file."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    },
    handler=write_file,
    toolset=TOOLSET,
    path_params=("path",),
)

PATCH = Tool(
    name="patch",
    description=(
        "Edit a file by exact string replacement: `old_string` must appear in the file exactly once "
        "(same whitespace and indentation as read_file shows, without the line-number prefix) and is "
        "replaced by `new_string`. If it appears several times, include more surrounding lines to make it "
        "unique, or set replace_all to change every occurrence. Returns the edited region."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to edit; relative paths are relative to the working directory."},
            "old_string": {"type": "string", "description": "The exact text to replace (must be unique unless replace_all)."},
            "new_string": {"type": "string", "description": "The text to put in its place (may be empty to delete)."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence instead of exactly one. Default false."},
        },
        "required": ["path", "old_string", "new_string"],
        "additionalProperties": False,
    },
    handler=patch,
    toolset=TOOLSET,
    path_params=("path",),
)

SEARCH_FILES = Tool(
    name="search_files",
    description=(
        "Search below a folder. target='content' (default): `pattern` is a Python regular expression "
        "matched against each line of text files; results are `file:line: text`. target='files': `pattern` "
        "is a glob on file names (`*.py`, `test_*`) or, without wildcards, a case-insensitive substring of "
        "the path; results are file paths. Skips .git, virtual environments, node_modules, __pycache__ and "
        "binary files."
    ),
    parameters={
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regex (content) or glob/substring (files)."},
            "path": {"type": "string", "description": "Folder or file to search. Default: the working directory."},
            "target": {
                "type": "string",
                "enum": ["content", "files"],
                "description": "'content' searches inside files, 'files' matches file names. Default 'content'.",
            },
            "file_glob": {"type": "string", "description": "Only consider files matching this glob, e.g. `*.py` or `src/*.ts`."},
            "ignore_case": {"type": "boolean", "description": "Case-insensitive content search. Default false."},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": SEARCH_MAX_LIMIT,
                "description": f"Most results to return. Default {SEARCH_DEFAULT_LIMIT}.",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
    handler=search_files,
    toolset=TOOLSET,
    read_only=True,
    path_params=("path",),
)

TOOLS: list[Tool] = [READ_FILE, WRITE_FILE, PATCH, SEARCH_FILES]
