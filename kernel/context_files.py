"""Project context files: the rules a repository gives its agents, as a system-prompt layer.

Which file, first kind found wins:

1. ``.hermes.md`` or ``HERMES.md``, the nearest one walking up from the working directory
   to the git root (only the working directory when it is not inside a git repository);
2. otherwise ``AGENTS.md``, then ``CLAUDE.md``, then ``.cursorrules`` / ``.cursor/rules/*.mdc``,
   in the working directory only.

The text is capped; content with invisible characters or injection patterns (ignore
previous instructions, hidden HTML comments or divs, curl with secrets, reading ``.env``
or credentials) is left out with a visible warning, never silently injected.
"""

from __future__ import annotations

import os
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

from .skills.guard import find_invisible
from .skills.guard_rules import _BYPASS, _IGNORE_INSTRUCTIONS, _SYSTEM_OVERRIDE, _TRANSLATE_EXECUTE

__all__ = ["DEFAULT_CAP_CHARS", "ProjectContext", "find_context_files", "load_project_context", "scan_context_text"]

DEFAULT_CAP_CHARS = 20_000
_HERMES_NAMES = (".hermes.md", "HERMES.md")
_CWD_KINDS: tuple[tuple[str, ...], ...] = (("AGENTS.md",), ("CLAUDE.md",), (".cursorrules",))
_MAX_READ_BYTES = 2 * 1024 * 1024  # never read a runaway file whole

_SECRET_VAR = r"\$\{?[A-Za-z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|API)[A-Za-z0-9_]*\}?"
# The reference agent's nine context-file threats (and a tenth, chat-template markup), each a
# reason and a pattern; the injection phrasings are shared with the skills guard.
# Compiled on the first scan of a context file (_threats()): most starts have none to scan.
_THREAT_SOURCES: tuple[tuple[str, str], ...] = (
        ("asks to ignore previous instructions", _IGNORE_INSTRUCTIONS),
        ("asks to hide something from the user",
         r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|reveal\s+(?:this\s+)?to|mention\s+(?:this\s+)?to)\s+the\s+user"),
        ("claims to override the system prompt", _SYSTEM_OVERRIDE),
        ("tells the agent to act without its restrictions", _BYPASS),
        ("hides instructions in an HTML comment",
         r"<!--(?:(?!-->).){0,400}?\b(?:ignore|override|system|secret|hidden|instruction|assistant|you must|password|token|curl|execute)(?:(?!-->).)*-->"),
        ("hides text in an invisible HTML element",
         r"<(?:div|span|p)\b[^>]*style\s*=\s*[\"'][^\"']*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0)"),
        ("asks to translate text and then run it", _TRANSLATE_EXECUTE),
        ("sends secrets with curl or wget", rf"\b(?:curl|wget)\b[^\n]*{_SECRET_VAR}"),
        ("reads .env or credential files",
         r"\b(?:cat|less|more|head|tail|type|read|open|print|upload|send|post)\b[^\n]{0,30}(?:(?<![\w.-])\.env\b(?!\.example|\.sample|\.template)|\.ssh/id_\w+|\.aws/credentials|\.netrc|\.pgpass|auth\.json|\.git-credentials|\bcredentials\.json)"),
        ("imitates system or chat-template markup", r"<\s*/?\s*system\s*>|<\|im_start\|>|\[/?INST\]"),
)


@functools.cache
def _threats() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Each context-file threat: its reason and compiled pattern."""
    return tuple((reason, re.compile(pattern, re.I | re.S)) for reason, pattern in _THREAT_SOURCES)


@dataclass(frozen=True)
class ProjectContext:
    """The layer to inject (``text``, may be empty), the file it came from, and one-line warnings."""

    text: str = ""
    source: Path | None = None
    warnings: list[str] = field(default_factory=list)


def _git_root(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def find_context_files(cwd: Path) -> list[Path]:
    """The files of the first kind found (several only for ``.cursor/rules/*.mdc``)."""
    cwd = Path(cwd).resolve()
    root = _git_root(cwd)
    folders = [cwd]
    if root is not None:
        folder = cwd
        while folder != root:
            folder = folder.parent
            folders.append(folder)
    for folder in folders:
        for name in _HERMES_NAMES:
            if (folder / name).is_file():
                return [folder / name]
    for names in _CWD_KINDS:
        for name in names:
            if (cwd / name).is_file():
                return [cwd / name]
    rules = cwd / ".cursor" / "rules"
    if rules.is_dir():
        mdc = sorted(p for p in rules.glob("*.mdc") if p.is_file())
        if mdc:
            return mdc
    return []


def scan_context_text(text: str) -> list[str]:
    """Reasons to leave ``text`` out (empty: safe to inject)."""
    reasons = []
    invisible = find_invisible(text)
    if invisible:
        line, code = invisible[0]
        reasons.append(f"contains {len(invisible)} invisible character(s) (first {code} on line {line})")
    reasons += [reason for reason, pattern in _threats() if pattern.search(text)]
    return reasons


def _read(path: Path) -> str:
    with open(path, "rb") as fh:
        data = fh.read(_MAX_READ_BYTES)
    return data.decode("utf-8", errors="replace")


def _cap(text: str, cap_chars: int) -> str:
    """Keep the head and the tail (rules often end with the most specific ones)."""
    if len(text) <= cap_chars:
        return text
    marker = f"\n\n[... {len(text) - cap_chars:,} characters cut; read the file for the rest ...]\n\n"
    head = int(cap_chars * 0.7)
    tail = max(cap_chars - head, 0)
    return text[:head] + marker + (text[-tail:] if tail else "")


def load_project_context(cwd: Path, cap_chars: int = DEFAULT_CAP_CHARS) -> ProjectContext:
    """The project-context layer for a session started in ``cwd``."""
    files = find_context_files(Path(cwd))
    if not files:
        return ProjectContext()
    warnings: list[str] = []
    parts: list[str] = []
    kept: list[Path] = []
    from .paths_policy import denied_reason

    for path in files:
        denied = denied_reason(Path(os.path.realpath(path)), write=False)
        if denied is not None:  # an AGENTS.md linked to HERMES_HOME/.env must not reach the prompt
            warnings.append(f"project context {path} left out: {denied}")
            continue
        try:
            text = _read(path)
        except OSError as exc:
            warnings.append(f"project context {path} could not be read: {exc.strerror or exc}")
            continue
        reasons = scan_context_text(text)
        if reasons:
            warnings.append(f"project context {path} left out: {'; '.join(reasons)}")
            continue
        if text.strip():
            parts.append(text.strip())
            kept.append(path)
    if not parts:
        return ProjectContext(source=files[0], warnings=warnings)
    body = "\n\n".join(parts)
    if len(body) > cap_chars:
        warnings.append(f"project context {kept[0]} cut to {cap_chars:,} of {len(body):,} characters")
        body = _cap(body, cap_chars)
    names = ", ".join(p.name for p in kept)
    text = (
        f"## Project context ({names})\n"
        "Instructions from the project's context file; follow them unless they conflict with the user's requests.\n\n"
        + body
    )
    return ProjectContext(text=text, source=kept[0], warnings=warnings)
