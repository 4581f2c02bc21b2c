"""The skills guard: scan a skill folder, grade the findings, apply the trust policy.

Pattern rules by category run over every text file; structural checks look at the
folder itself (binary files, sizes, file count, symlinks, invisible Unicode). Each
finding has a severity; the worst one sets the verdict (``safe``, ``caution`` or
``dangerous``); :func:`decide` maps verdict and source trust to ``allow``, ``ask`` or
``block``. Nothing here executes or imports skill content.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from ..redact import _VENDOR_RE  # a real-looking key inside a skill is credential exposure
from .skill import MAX_FILE_BYTES, MAX_SKILL_MD_CHARS, SKILL_FILE

__all__ = [
    "CATEGORIES",
    "Finding",
    "INVISIBLE_CHARS",
    "POLICY",
    "Rule",
    "RULES",
    "ScanResult",
    "TRUST_LEVELS",
    "decide",
    "find_invisible",
    "scan_skill",
    "scan_text",
]

SEVERITIES = ("low", "medium", "high", "critical")
CATEGORIES = (
    "exfiltration",
    "prompt_injection",
    "destructive",
    "persistence",
    "obfuscation",
    "network",
    "path_traversal",
    "credential_exposure",
    "structural",
)
TRUST_LEVELS = ("bundled", "trusted", "community", "agent")
MAX_FILES = 200
MAX_TOTAL_BYTES = 10 * MAX_FILE_BYTES
_BINARY_EXTENSIONS = frozenset({".exe", ".dll", ".so", ".dylib", ".bin", ".pyc", ".class", ".jar", ".o", ".a"})
_EXECUTABLE_MAGIC = (b"\x7fELF", b"MZ", b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe")
_SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", ".venv", "venv", "node_modules"})

# Zero-width, bidirectional-override and tag characters: they hide text from a human reader.
INVISIBLE_CHARS = frozenset(
    [chr(c) for c in (0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF)]
    + [chr(c) for c in range(0x202A, 0x202F)]
    + [chr(c) for c in range(0x2066, 0x206A)]
)
_INVISIBLE_RE = re.compile("[" + "".join(sorted(INVISIBLE_CHARS)) + "\U000e0000-\U000e007f]")


class Rule(NamedTuple):
    """A pattern rule: id, category, severity, compiled regex, what it means.

    ``keywords`` (lowercase) are literals the pattern cannot match without; a text holding
    none of them skips the regex, which keeps scans of large files fast.
    """

    id: str
    category: str
    severity: str
    pattern: re.Pattern[str]
    message: str
    keywords: tuple[str, ...] = ()


def _rule(rule_id: str, category: str, severity: str, pattern: str, message: str, keywords: tuple[str, ...] = ()) -> Rule:
    return Rule(rule_id, category, severity, re.compile(pattern, re.I), message, keywords)


_SECRET_VAR = r"\$\{?[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)[A-Z0-9_]*\}?"
_SENSITIVE_FILE = r"(?:~|\$HOME|/home/\w+|/root)?/?(?:\.ssh/(?:id_\w+|authorized_keys)|\.aws/credentials|\.netrc|\.hermes/(?:\.env|auth\.json)|\.docker/config\.json|\.kube/config|\.git-credentials)"

RULES: tuple[Rule, ...] = (
    # exfiltration: secrets or files leaving the machine
    _rule("exfil-curl-secret", "exfiltration", "critical",
          rf"\b(?:curl|wget|http|httpie|Invoke-WebRequest)\b[^\n]*{_SECRET_VAR}", "sends a secret variable over the network", ("curl", "wget", "http", "invoke-webrequest")),
    _rule("exfil-env-dump", "exfiltration", "critical",
          r"\b(?:env|printenv|set)\b\s*\|\s*(?:curl|wget|nc|ncat|netcat)\b", "pipes the environment to the network", ("curl", "wget", "nc")),
    _rule("exfil-file-upload", "exfiltration", "critical",
          rf"\b(?:curl|wget)\b[^\n]*(?:-d\s*@|--data[-\w]*\s*@|-F\s*\S*=@|--upload-file\s|--post-file[= ])[^\n]*(?:\.env\b|{_SENSITIVE_FILE})",
          "uploads a credentials file", ("curl", "wget")),
    _rule("exfil-cat-pipe", "exfiltration", "critical",
          rf"\bcat\b[^\n|]*(?:\.env\b|{_SENSITIVE_FILE})[^\n]*\|\s*(?:curl|wget|nc|ncat|netcat|base64)\b",
          "pipes a credentials file out", ("cat",)),
    _rule("exfil-python-post", "exfiltration", "high",
          r"requests\.(?:post|put)\([^\n]*os\.environ", "posts environment values with requests", ("requests.",)),
    # prompt injection: text that tries to take over the agent
    _rule("inject-ignore", "prompt_injection", "critical",
          r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+)*(?:previous|prior|above|earlier|system|original)\s+(?:instructions|prompts?|rules|directions|guidelines)",
          "tells the agent to ignore its instructions", ("ignore", "disregard", "forget", "override")),
    _rule("inject-new-role", "prompt_injection", "high",
          r"\byou\s+are\s+now\s+(?:in\s+)?(?:DAN|developer\s+mode|jailbroken|unrestricted|an?\s+unfiltered)",
          "tries to give the agent a new role", ("now",)),
    _rule("inject-conceal", "prompt_injection", "high",
          r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+(?:this\s+)?to|reveal\s+(?:this\s+)?to|let)\s+the\s+user",
          "asks the agent to hide something from the user", ("user",)),
    _rule("inject-system-tag", "prompt_injection", "high",
          r"<\s*/?\s*(?:system|im_start|im_end)\s*>|\[/?INST\]|<\|im_start\|>", "imitates system or chat-template markup", ("system", "im_start", "im_end", "inst]")),
    _rule("inject-hidden-comment", "prompt_injection", "high",
          r"<!--(?:(?!-->).){0,400}?\b(?:ignore|instruction|assistant|you must|secret|password|token|curl|execute|exfiltrat)(?:(?!-->).)*-->",
          "hides instructions in an HTML comment", ("<!--",)),
    _rule("inject-hidden-div", "prompt_injection", "high",
          r"<(?:div|span|p)\b[^>]*style\s*=\s*[\"'][^\"']*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0)",
          "hides text with CSS", ("style",)),
    # destructive commands
    _rule("destroy-rm-root", "destructive", "critical",
          r"\brm\s+(?:-[a-zA-Z]*[rR][a-zA-Z]*\s+|--recursive\s+|--force\s+|-[a-zA-Z]*f[a-zA-Z]*\s+)+(?:--no-preserve-root\s+)?(?:/|~|\$HOME|/\*|~/\*|/home|/etc|/usr|\.\./\.\.)(?:\s|$|;|&)",
          "recursively deletes a root or home folder", ("rm",)),
    _rule("destroy-disk", "destructive", "critical",
          r"\b(?:mkfs(?:\.\w+)?\s+/dev/|dd\s+[^\n]*of=/dev/(?:sd|nvme|hd|disk|mmcblk)|wipefs\b|shred\s+[^\n]*/dev/)", "overwrites a disk", ("mkfs", "dd", "wipefs", "shred")),
    _rule("destroy-forkbomb", "destructive", "critical", r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:", "fork bomb", (":()",)),
    _rule("destroy-chmod-root", "destructive", "high", r"\bchmod\s+-R\s+0?777\s+/(?:\s|$)", "opens every file on the system", ("chmod",)),
    _rule("destroy-rmtree-home", "destructive", "critical",
          r"shutil\.rmtree\(\s*(?:os\.path\.expanduser\(\s*[\"']~[\"']\s*\)|Path\.home\(\)|[\"']/[\"'])", "deletes the home or root folder from Python", ("rmtree",)),
    _rule("destroy-force-push", "destructive", "medium", r"\bgit\s+push\s+[^\n]*(?:--force\b(?!-with-lease)|-f\b)", "force-pushes over shared history", ("push",)),
    # persistence: surviving the session
    _rule("persist-shell-rc", "persistence", "high",
          r">>?\s*(?:~|\$HOME)/\.(?:bashrc|zshrc|profile|bash_profile|zprofile|config/fish/config\.fish)", "writes to a shell startup file", ("rc", "profile", "fish")),
    _rule("persist-authorized-keys", "persistence", "critical", r">>?\s*\S*\.ssh/authorized_keys", "adds an SSH key", ("authorized_keys",)),
    _rule("persist-cron", "persistence", "high", r"\bcrontab\s+(?:-\s|-l\s*\|)|\|\s*crontab\b|/etc/cron\.", "installs a cron job", ("cron",)),
    _rule("persist-service", "persistence", "high",
          r"\b(?:systemctl\s+(?:--user\s+)?enable|launchctl\s+(?:load|bootstrap)|schtasks\s+/create)\b|/etc/systemd/system/|Library/LaunchAgents/",
          "installs a service that starts on its own", ("systemctl", "launchctl", "schtasks", "systemd", "launchagents")),
    _rule("persist-hermes-config", "persistence", "high",
          r"(?:>>?|write_text|open\()[^\n]*\.hermes/(?:config\.yaml|SOUL\.md|\.env|memories/)", "rewrites the agent's own configuration or memory", (".hermes/",)),
    # obfuscation: hiding what runs
    _rule("obfus-base64-exec", "obfuscation", "critical",
          r"base64\s+(?:-d|--decode|-D)\b[^\n]*\|\s*(?:ba|z|da)?sh\b|\becho\s+[A-Za-z0-9+/=]{20,}\s*\|\s*base64\s+(?:-d|--decode)",
          "decodes base64 and runs it", ("base64",)),
    _rule("obfus-python-exec", "obfuscation", "critical",
          r"\b(?:exec|eval)\s*\(\s*(?:base64\.b64decode|codecs\.decode|bytes\.fromhex|zlib\.decompress|marshal\.loads|compile\s*\()",
          "runs decoded or compiled code", ("exec", "eval")),
    _rule("obfus-hex-escapes", "obfuscation", "medium", r"(?:\\x[0-9a-fA-F]{2}){16,}", "long hex-escaped string", ("\\x",)),
    _rule("obfus-long-base64", "obfuscation", "medium", r"[A-Za-z0-9+/]{300,}={0,2}", "long base64 blob"),
    # suspicious network use
    _rule("net-pipe-shell", "network", "high",
          r"\b(?:curl|wget)\b[^\n|]*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b|\b(?:curl|wget)\b[^\n|]*\|\s*python\d?\b",
          "pipes a download into a shell", ("curl", "wget")),
    _rule("net-reverse-shell", "network", "critical",
          r"/dev/tcp/|\bnc(?:at)?\s+[^\n]*-[ec]\s|\bsocat\b[^\n]*exec:|\bbash\s+-i\s+>&", "reverse shell", ("/dev/tcp", "nc", "socat", "bash")),
    _rule("net-raw-ip", "network", "medium", r"\bhttps?://\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?/", "fetches from a bare IP address", ("http",)),
    _rule("net-paste-sites", "network", "medium",
          r"\b(?:pastebin\.com|transfer\.sh|ngrok\.io|requestbin|webhook\.site|pipedream\.net|interact\.sh)\b", "talks to a paste, tunnel or request-capture site", ("pastebin", "transfer.sh", "ngrok", "requestbin", "webhook.site", "pipedream", "interact.sh")),
    # path traversal
    _rule("traverse-deep", "path_traversal", "medium", r"(?:\.\./){3,}", "climbs several folders up", ("../",)),
    _rule("traverse-system-files", "path_traversal", "high", r"/etc/(?:passwd|shadow|sudoers)\b", "reads system account files", ("/etc/",)),
    # credential exposure
    _rule("cred-read-files", "credential_exposure", "high",
          rf"\b(?:cat|less|more|head|tail|type|open|read_text|read_file|cp|scp)\b[^\n]{{0,40}}{_SENSITIVE_FILE}",
          "reads a credentials file", (".ssh", "aws", "netrc", ".hermes", "docker", "kube", "git-credentials")),
    _rule("cred-read-dotenv", "credential_exposure", "high",
          r"\b(?:cat|less|more|head|tail|print|upload|send|post)\b[^\n]{0,20}(?<![\w.-])\.env\b(?!\.example|\.sample|\.template)",
          "reads the .env file", (".env",)),
    _rule("cred-dump-environ", "credential_exposure", "medium",
          r"\bprint\(\s*(?:dict\()?os\.environ\s*\)?\s*\)|json\.dumps\(\s*dict\(\s*os\.environ", "prints the whole environment", ("environ",)),
)

_SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}

# verdict -> action per trust level. --force may turn ``ask`` into ``allow``, never ``block``.
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
        return "caution" if worst >= 0 else "safe"

    def summary(self, limit: int = 8) -> str:
        lines = [f"verdict: {self.verdict} ({len(self.findings)} finding(s))"]
        lines += [f"  {f}" for f in sorted(self.findings, key=lambda f: -_SEVERITY_RANK[f.severity])[:limit]]
        if len(self.findings) > limit:
            lines.append(f"  ... and {len(self.findings) - limit} more")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "verdict": self.verdict, "findings": [f.as_dict() for f in self.findings]}


def find_invisible(text: str) -> list[tuple[int, str]]:
    """(line number, ``U+XXXX``) of every invisible or bidi-control character in ``text``."""
    hits: list[tuple[int, str]] = []
    for match in _INVISIBLE_RE.finditer(text):
        if match.start() == 0 and match.group() == "\ufeff":
            continue  # a leading byte-order mark is harmless
        hits.append((text.count("\n", 0, match.start()) + 1, f"U+{ord(match.group()):04X}"))
    return hits


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def scan_text(text: str, file: str = SKILL_FILE) -> list[Finding]:
    """Pattern and invisible-character findings for one text."""
    findings: list[Finding] = []
    lowered = text.lower()
    for rule in RULES:
        if rule.keywords and not any(k in lowered for k in rule.keywords):
            continue
        for match in rule.pattern.finditer(text):
            excerpt = match.group(0)[:120].replace("\n", " ")
            findings.append(Finding(rule.id, rule.category, rule.severity, file, _line_of(text, match.start()), rule.message, excerpt))
            break  # one finding per rule and file is enough to judge
    for match in _VENDOR_RE.finditer(text):
        findings.append(Finding("cred-hardcoded-key", "credential_exposure", "high", file, _line_of(text, match.start()),
                                "contains what looks like a real API key", match.group(0)[:4] + "..."))
        break
    invisible = find_invisible(text)
    if invisible:
        line, code = invisible[0]
        findings.append(Finding("invisible-unicode", "structural", "high", file, line,
                                f"{len(invisible)} invisible or bidi-control character(s), first {code}"))
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
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
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
            try:
                size = file.stat().st_size
            except OSError:
                continue
            total += size
            if size > MAX_FILE_BYTES:
                result.findings.append(Finding("file-too-large", "structural", "high", rel, 0,
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
            text = data.decode("utf-8", errors="replace")
            if rel == SKILL_FILE and len(text) > MAX_SKILL_MD_CHARS:
                result.findings.append(Finding("skill-md-too-large", "structural", "high", rel, 0,
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
