"""The skills guard: scan a skill folder, grade the findings, apply the trust policy.

The pattern rules (:mod:`.guard_rules`) run over every text file, each only on the lines that
hold one of its keywords; :mod:`.guard_context` judges each match by its line, and looks at a
file that reads a secret for a send to an unknown host. Structural checks look at the folder
itself (binary and special files, sizes, file count, symlinks, invisible Unicode). The worst
severity sets the verdict (``low`` findings are notes): ``safe``, ``caution`` or ``dangerous``;
:func:`decide` maps verdict and source trust to ``allow``, ``ask`` or ``block``. Nothing here
executes or imports skill content.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .guard_context import judge, secret_send
from .guard_rules import CATEGORIES, LONG_LINE, RULES, SEVERITIES, Rule, _compiled
from .skill import MAX_FILE_BYTES, MAX_SKILL_MD_CHARS, SKILL_FILE

__all__ = [
    "CATEGORIES",
    "Finding",
    "INVISIBLE_CHARS",
    "POLICY",
    "Rule",
    "RULES",
    "SEVERITIES",
    "ScanResult",
    "TRUST_LEVELS",
    "decide",
    "find_invisible",
    "scan_skill",
    "scan_text",
]

TRUST_LEVELS = ("bundled", "trusted", "community", "agent")
MAX_FILES = 200
MAX_TOTAL_BYTES = 10 * MAX_FILE_BYTES
_BINARY_EXTENSIONS = frozenset({".exe", ".dll", ".so", ".dylib", ".bin", ".pyc", ".class", ".jar", ".o", ".a"})
_EXECUTABLE_MAGIC = (b"\x7fELF", b"MZ", b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe")
# A file named for a miner is one whatever its bytes (a packed or renamed build is still a miner).
_MINER_FILE = r"(?i)^(?:xmrig|xmr-stak|cpuminer|minerd|cgminer|bfgminer|ethminer|nbminer|t-rex|lolminer|phoenixminer|nanominer)(?:[-_.].*)?$"
_SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", ".venv", "venv", "node_modules"})

# Bidirectional overrides and tag characters rewrite what a reader sees (Trojan Source);
# zero-width characters hide text too but also turn up in pasted web pages and emoji.
_BIDI_CHARS = frozenset(
    [chr(c) for c in range(0x202A, 0x202F)] + [chr(c) for c in range(0x2066, 0x206A)] + [chr(0x200E), chr(0x200F)]
)
INVISIBLE_CHARS = frozenset(
    [chr(c) for c in (0x200B, 0x200C, 0x200D, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF)] + list(_BIDI_CHARS)
)
_INVISIBLE_RE = re.compile("[" + "".join(sorted(INVISIBLE_CHARS)) + "\U000e0000-\U000e007f]")


@functools.lru_cache(maxsize=1)
def _trigger() -> tuple[re.Pattern[bytes], re.Pattern[bytes], dict[str, tuple[Rule, ...]]]:
    """Two regexes over every rule keyword (tries, so their cost barely grows with the table) and who needs each.

    A keyword that starts with a letter must start a word (``nc`` in ``nc -e``, not in ``once``):
    that regex steps from one non-word byte to the next, which C does fast. They run over ASCII
    bytes (every other character one ``?``), so offsets stay those of the text.
    """
    needs: dict[str, list[Rule]] = {}
    for rule in RULES:
        for keyword in rule.keywords:
            needs.setdefault(keyword, []).append(rule)
    words = _trie(sorted(k for k in needs if k[:1].isalpha()))
    others = _trie(sorted(k for k in needs if not k[:1].isalpha()))
    # The tries match greedily ("/dev/shm/" over "/dev/shm"): a hit serves every keyword it starts with.
    served = {k: tuple(dict.fromkeys(r for j in needs if k.startswith(j) for r in needs[j])) for k in needs}
    return re.compile(f"[^a-z0-9_](?=({words}))".encode()), re.compile(others.encode()), served


def _trie(words: list[str]) -> str:
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict[str, Any]) -> str:
        alternatives = [re.escape(ch) + build(sub) for ch, sub in sorted(node.items()) if ch]
        if not alternatives:
            return ""
        body = "(?:" + "|".join(alternatives) + ")"
        return body + "?" if "" in node else body

    return build(root)


_SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}

# verdict -> action per trust level. ``force`` turns ``ask`` into ``allow``; only an install with
# --force --reason overrides ``block``, and its lock entry says who and why (install.py).
POLICY: dict[str, dict[str, str]] = {
    "bundled": {"safe": "allow", "caution": "allow", "dangerous": "block"},
    "trusted": {"safe": "allow", "caution": "allow", "dangerous": "block"},
    "community": {"safe": "allow", "caution": "ask", "dangerous": "block"},
    "agent": {"safe": "allow", "caution": "allow", "dangerous": "block"},
}


@dataclass(frozen=True)
class Finding:
    """One thing the guard found: where, what and how bad."""

    rule: str
    category: str
    severity: str
    file: str
    line: int
    message: str
    excerpt: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule, "category": self.category, "severity": self.severity,
            "file": self.file, "line": self.line, "message": self.message, "excerpt": self.excerpt,
        }

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"[{self.severity}] {self.category}: {self.message} ({where})"


@dataclass
class ScanResult:
    """The findings for one skill folder and the verdict they add up to."""

    path: Path
    findings: list[Finding] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        worst = max((_SEVERITY_RANK[f.severity] for f in self.findings), default=-1)
        if worst >= _SEVERITY_RANK["high"]:
            return "dangerous"
        return "caution" if worst >= _SEVERITY_RANK["medium"] else "safe"  # low findings are notes

    def summary(self, limit: int = 8) -> str:
        lines = [f"verdict: {self.verdict} ({len(self.findings)} finding(s))"]
        lines += [f"  {f}" for f in sorted(self.findings, key=lambda f: -_SEVERITY_RANK[f.severity])[:limit]]
        if len(self.findings) > limit:
            lines.append(f"  ... and {len(self.findings) - limit} more")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "verdict": self.verdict, "findings": [f.as_dict() for f in self.findings]}


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def find_invisible(text: str) -> list[tuple[int, str]]:
    """(line number, ``U+XXXX``) of every invisible or bidi-control character in ``text``."""
    hits: list[tuple[int, str]] = []
    for match in _INVISIBLE_RE.finditer(text):
        if match.start() == 0 and match.group() == "\ufeff":
            continue  # a leading byte-order mark is harmless
        hits.append((_line_of(text, match.start()), f"U+{ord(match.group()):04X}"))
    return hits


_WRAP = 400  # how far past its line a multiline rule may match


def _rule(rule_id: str, category: str, severity: str, pattern: str, message: str, keywords: tuple[str, ...] = ()) -> Rule:
    """A :class:`Rule` (for tests and callers building their own)."""
    return Rule(rule_id, category, severity, pattern, message, keywords)


def _lowered(text: str) -> str:
    lowered = text.lower()
    if len(lowered) != len(text):  # a few characters grow when lowered; keep offsets aligned
        lowered = "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)
    return lowered


def _candidates(text: str, lowered: str) -> dict[Rule, list[tuple[int, int]]]:
    """For each rule, the (start, end) spans of the lines holding one of its keywords."""
    words, others, needs = _trigger()
    data = ("\n" + lowered).encode("ascii", "replace")  # the leading byte lets a word start the text
    hits = [(m.start(), m.group(1)) for m in words.finditer(data)]  # offset of the separator = offset in text
    hits += [(m.start() - 1, m.group()) for m in others.finditer(data)]
    spans: dict[Rule, dict[int, int]] = {}
    for position, keyword in hits:
        start = text.rfind("\n", 0, position) + 1
        for rule in needs[keyword.decode()]:
            lines = spans.setdefault(rule, {})
            if start not in lines:
                end = text.find("\n", position)
                lines[start] = len(text) if end < 0 else end
    return {rule: sorted(lines.items()) for rule, lines in spans.items()}


def _long_lines(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for line in text.split("\n"):
        if len(line) >= LONG_LINE:
            spans.append((start, start + len(line)))
        start += len(line) + 1
    return spans


def _first_match(rule: Rule, text: str, spans: list[tuple[int, int]]) -> tuple[int, re.Match[str], str] | None:
    """The worst-judged match of ``rule`` in the given lines, with its offset in ``text``."""
    starts: list[tuple[int, int]] | None = None
    matches: Iterable[re.Match[str]]
    if rule.multiline:  # each candidate line and what follows it, searched in place; near lines share a window
        windows: list[list[int]] = []
        for start, end in spans:
            if windows and start <= windows[-1][1]:
                windows[-1][1] = min(len(text), end + _WRAP)
            else:
                windows.append([start, min(len(text), end + _WRAP)])
        matches = (m for start, end in windows for m in rule.pattern.finditer(text, start, end))
        view = text
    else:  # one search over the candidate lines joined; a match is mapped back through its line's span
        view = "\n".join([text[start:end] for start, end in spans])
        starts = spans
        matches = rule.pattern.finditer(view)
    best: tuple[int, re.Match[str], str] | None = None
    for match in matches:
        line_start = view.rfind("\n", 0, match.start()) + 1
        line_end = view.find("\n", match.start())
        severity = judge(rule, view[line_start: len(view) if line_end < 0 else line_end], match.group(0))
        if severity is None:
            continue
        if best is None or _SEVERITY_RANK[severity] > _SEVERITY_RANK[best[2]]:
            offset = match.start()
            if starts is not None:
                offset = starts[view.count("\n", 0, offset)][0] + offset - line_start
            best = (offset, match, severity)
            if severity == rule.severity:
                break  # nothing later can judge worse
    return best


def scan_text(text: str, file: str = SKILL_FILE) -> list[Finding]:
    """Pattern and invisible-character findings for one text (one finding per rule: its worst match)."""
    findings: list[Finding] = []
    original, text = text, _INVISIBLE_RE.sub("", text)  # "ig\u200bnore" must not slip past the rules
    candidates = _candidates(text, _lowered(text))
    long_lines: list[tuple[int, int]] | None = None
    for rule in RULES:
        if rule.keywords:
            spans = candidates.get(rule)
            if not spans:
                continue
        else:
            long_lines = _long_lines(text) if long_lines is None else long_lines
            spans = long_lines
        hit = _first_match(rule, text, spans)
        if hit is not None:
            offset, match, severity = hit
            excerpt = match.group(0)[:120].replace("\n", " ")
            if rule.category == "credential_exposure" and rule.id.startswith("cred-hardcoded"):
                excerpt = match.group(0)[:4] + "..."  # never print the secret itself
            findings.append(Finding(rule.id, rule.category, severity, file, _line_of(text, offset), rule.message, excerpt))
    # Only a file that already reads a secret can send one: the rest skip the file-wide look.
    combo = secret_send(text) if any(f.category == "credential_exposure" for f in findings) else None
    if combo is not None:
        findings.append(Finding("exfil-secret-send", "exfiltration", "critical", file, _line_of(text, combo[0]), combo[1]))
    invisible = find_invisible(original)
    if invisible:
        line, code = invisible[0]
        bidi = any(chr(int(c[2:], 16)) in _BIDI_CHARS or int(c[2:], 16) >= 0xE0000 for _, c in invisible)
        findings.append(Finding("invisible-unicode", "structural", "high" if bidi else "medium", file, line,
                                f"{len(invisible)} invisible or bidi-control character(s), first {code}"))
    return _worst_per_line(findings)


def _worst_per_line(findings: list[Finding]) -> list[Finding]:
    """Per line and category only the worst findings: ``cat ~/.aws/credentials`` is a read, not also a mention."""
    worst: dict[tuple[str, int], int] = {}
    for f in findings:
        key = (f.category, f.line)
        worst[key] = max(worst.get(key, -1), _SEVERITY_RANK[f.severity])
    return [f for f in findings if _SEVERITY_RANK[f.severity] == worst[(f.category, f.line)]]
    return findings


def _is_inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def scan_skill(path: Path) -> ScanResult:
    """Scan the skill folder ``path`` (files and structure); never follows symlinks."""
    result = ScanResult(Path(path))
    root = Path(path).resolve()
    count = total = 0
    # os.walk follows no symlink unless told to; linked folders are moved to the files below.
    for dirpath, dirnames, filenames in os.walk(root):
        current = Path(dirpath)
        for name in list(dirnames):
            sub = current / name
            if sub.is_symlink():
                dirnames.remove(name)
                filenames.append(name)  # judged below as a symlink
            elif name in _SKIP_DIRS:
                dirnames.remove(name)
        for name in sorted(filenames):
            file = current / name
            rel = file.relative_to(root).as_posix()
            if file.is_symlink():
                target = Path(os.path.realpath(file))
                if not _is_inside(target, root):
                    result.findings.append(Finding("symlink-escape", "structural", "critical", rel, 0,
                                                   "symlink points outside the skill folder"))
                continue
            count += 1
            if _compiled(_MINER_FILE).search(name):
                result.findings.append(Finding("mining-binary", "mining", "critical", rel, 0, "ships a cryptocurrency miner"))
            try:
                info = file.stat()
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):
                # Reading a named pipe would block the scan for good; a socket or device has no place in a skill.
                result.findings.append(Finding("special-file", "structural", "high", rel, 0, "not a regular file (a pipe, socket or device)"))
                continue
            size = info.st_size
            total += size
            if size > MAX_FILE_BYTES:
                result.findings.append(Finding("file-too-large", "structural", "medium", rel, 0,
                                               f"file is {size:,} bytes; the limit is {MAX_FILE_BYTES:,}"))
                continue
            if total > MAX_TOTAL_BYTES:
                continue  # already too large to install; reading the rest only costs time
            data = file.read_bytes()
            if data.startswith(_EXECUTABLE_MAGIC) and (b"\x00" in data[:8192] or file.suffix.lower() in _BINARY_EXTENSIONS):
                result.findings.append(Finding("binary-executable", "structural", "critical", rel, 0, "executable binary"))
                continue
            if b"\x00" in data[:8192] or file.suffix.lower() in _BINARY_EXTENSIONS:
                result.findings.append(Finding("binary-file", "structural", "medium", rel, 0, "binary file (not reviewable)"))
                continue
            text = data.decode(errors="replace")  # bytes decode as UTF-8 unless told otherwise
            if rel == SKILL_FILE and len(text) > MAX_SKILL_MD_CHARS:
                result.findings.append(Finding("skill-md-too-large", "structural", "medium", rel, 0,
                                               f"SKILL.md has {len(text):,} characters; the limit is {MAX_SKILL_MD_CHARS:,}"))
            result.findings += scan_text(text, rel)
    if count > MAX_FILES:
        result.findings.append(Finding("too-many-files", "structural", "medium", ".", 0, f"{count} files; the limit is {MAX_FILES}"))
    if total > MAX_TOTAL_BYTES:
        result.findings.append(Finding("skill-too-large", "structural", "high", ".", 0,
                                       f"{total:,} bytes in all; the limit is {MAX_TOTAL_BYTES:,}"))
    return result


def decide(verdict: str, trust: str, *, force: bool = False) -> str:
    """``allow``, ``ask`` or ``block`` for a verdict from a source of ``trust``.

    ``force`` turns ``ask`` into ``allow``; a ``block`` (every dangerous verdict) stays.
    """
    if trust not in POLICY:
        raise ValueError(f"unknown trust level {trust!r}; known: {', '.join(TRUST_LEVELS)}")
    action = POLICY[trust][verdict]
    return "allow" if action == "ask" and force else action
