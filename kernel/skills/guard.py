"""The skills guard: scan a skill folder, grade the findings, apply the trust policy.

Pattern rules by category run over every text file; structural checks look at the
folder itself (binary and special files, sizes, file count, symlinks, invisible Unicode). Each
finding has a severity; the worst one sets the verdict (``safe``, ``caution`` or
``dangerous``); :func:`decide` maps verdict and source trust to ``allow``, ``ask`` or
``block``. Nothing here executes or imports skill content.
"""

from __future__ import annotations

import functools
import os
import re
import stat
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
    """A pattern rule: id, category, severity, its regex source, what it means.

    ``keywords`` (lowercase) are literals the pattern cannot match without; a text holding
    none of them skips the regex, which keeps scans of large files fast. The regex compiles
    on first use: the 70-odd rules cost a one-shot chat tens of milliseconds at import.
    """

    id: str
    category: str
    severity: str
    source: str
    message: str
    keywords: tuple[str, ...] = ()

    @property
    def pattern(self) -> re.Pattern[str]:
        return _compiled(self.source)


@functools.lru_cache(maxsize=None)
def _compiled(source: str) -> re.Pattern[str]:
    return re.compile(source, re.I)


def _rule(rule_id: str, category: str, severity: str, pattern: str, message: str, keywords: tuple[str, ...] = ()) -> Rule:
    return Rule(rule_id, category, severity, pattern, message, keywords)


_SECRET_VAR = r"\$\{?[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)[A-Z0-9_]*\}?"
# "ignore all previous instructions", "disregard your rules", "forget the above guidelines".
_IGNORE_INSTRUCTIONS = (
    r"\b(?:ignore|disregard|forget|override)\s+(?:(?:all|any|the|your|of|these)\s+)*"
    r"(?:previous|prior|above|earlier|system|original|preceding|existing|all|any|your)\s+"
    r"(?:instructions|prompts?|rules|directions|guidelines)\b"
)
# "act as if you have no restrictions", "bypass your safety filters".
_BYPASS = (
    r"\bact\s+as\s+(?:if|though)\s+you\s+(?:have\s+no|don'?t\s+have|had\s+no|are\s+free\s+of|were\s+free\s+of)\s+"
    r"(?:\w+\s+)?(?:restrictions|limits|limitations|rules|guidelines|filters)"
    r"|\b(?:bypass|circumvent|disable|ignore)\s+(?:all\s+|any\s+|your\s+|the\s+)*(?:safety\s+|content\s+)?"
    r"(?:restrictions|guardrails|safety\s+(?:checks|measures|guidelines)|content\s+filters|filters)\b"
)
_SYSTEM_OVERRIDE = r"\bsystem\s+prompt\s+override\b|\boverride\s+(?:the\s+|your\s+)?system\s+(?:prompt|message)\b|\bnew\s+system\s+prompt\s*:"
_TRANSLATE_EXECUTE = r"\btranslate\b.{0,80}?\binto\b.{0,80}?\band\s+(?:then\s+)?(?:execute|run|eval)\b"
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
    _rule("inject-ignore", "prompt_injection", "critical", _IGNORE_INSTRUCTIONS,
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
    _rule("persist-cron", "persistence", "high",
          r"\bcrontab\s+(?!-l\b)\S|\bcrontab\s+-l\s*\||\|\s*crontab\b|/etc/cron\.|/var/spool/cron", "installs or edits a cron job", ("cron",)),
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
    # exfiltration, more shapes
    _rule("exfil-dns", "exfiltration", "high",
          r"\b(?:dig|nslookup|host|ping)\s+[^\n]*\$[({]?\w[^\n]*\.\w{2,}", "leaks data in DNS look-ups", ("dig", "nslookup", "host", "ping")),
    _rule("exfil-md-image", "exfiltration", "high",
          r"!\[[^\]]*\]\(https?://[^)\s]*[?&][^)\s]*=(?:\$\{?\w+|\{\{|<)", "a Markdown image whose URL carries data out", ("](http",)),
    _rule("exfil-node-env", "exfiltration", "high",
          r"(?:fetch|axios(?:\.post)?|http\.request|got\.post)\([^\n]*process\.env|JSON\.stringify\(\s*process\.env\s*\)",
          "sends process.env over the network", ("process.env",)),
    _rule("exfil-ssh-archive", "exfiltration", "critical",
          r"\b(?:tar|zip|scp|rsync|7z)\b[^\n]*(?:~|\$HOME|/home/\w+|/root)/\.(?:ssh|aws|gnupg)\b", "packs or copies a keys folder", (".ssh", ".aws", ".gnupg")),
    _rule("exfil-conversation", "exfiltration", "high",
          r"\b(?:send|post|upload|forward|email|transmit)\s+(?:the\s+|your\s+|this\s+)?(?:entire\s+|full\s+|whole\s+|complete\s+)?"
          r"(?:conversation|chat\s+history|system\s+prompt|context\s+window|memory\s+files?)\s+to\b",
          "asks to send the conversation or prompt somewhere", ("send", "post", "upload", "forward", "email", "transmit")),
    _rule("exfil-getenv-post", "exfiltration", "high",
          r"(?:requests\.(?:post|put|get)|urlopen|httpx\.\w+|urllib\.request)\([^\n]*{0}|{0}[^\n]*(?:requests\.|urlopen|httpx\.|urllib)".format(
              r"os\.(?:getenv|environ\.get|environ\[)\(?\s*['\"]\w*(?:KEY|TOKEN|SECRET|PASSWORD)\w*['\"]"),
          "sends a secret from the environment with Python", ("getenv", "environ")),
    # prompt injection, more shapes
    _rule("inject-bypass", "prompt_injection", "critical", _BYPASS, "tells the agent to act without its restrictions",
          ("act as", "bypass", "circumvent", "disable", "ignore")),
    _rule("inject-system-override", "prompt_injection", "critical", _SYSTEM_OVERRIDE, "claims to override the system prompt", ("system",)),
    _rule("inject-translate-execute", "prompt_injection", "high", _TRANSLATE_EXECUTE, "asks to translate text and then run it", ("translate",)),
    _rule("inject-jailbreak", "prompt_injection", "high",
          r"\b(?:DAN\s+mode|developer\s+mode\s+(?:enabled|on|activated)|jailbreak(?:ed)?\s+mode|do\s+anything\s+now)\b",
          "a known jailbreak phrase", ("dan", "developer mode", "jailbreak", "anything now")),
    _rule("inject-leak-prompt", "prompt_injection", "high",
          r"\b(?:reveal|print|show|output|repeat|dump|leak)\s+(?:me\s+)?(?:your|the)\s+(?:full\s+|entire\s+|original\s+|hidden\s+)?"
          r"(?:system\s+prompt|initial\s+instructions|hidden\s+instructions)",
          "asks the agent to reveal its system prompt", ("prompt", "instructions")),
    _rule("inject-fake-authority", "prompt_injection", "high",
          r"\b(?:message|instructions?|update|notice|directive)\s+from\s+(?:the\s+)?(?:system|developers?|anthropic|openai|nous|administrator|admin)\s*:"
          r"|\b(?:IMPORTANT|URGENT|CRITICAL)\s+(?:SYSTEM\s+)?(?:UPDATE|NOTICE|OVERRIDE)\s*:",
          "poses as a message from the system or the developers", ("from", "update", "notice", "override")),
    _rule("inject-conditional", "prompt_injection", "high",
          r"\bif\s+(?:the\s+)?user\s+(?:asks|mentions|requests|says)\b[^\n]{0,100}\b(?:instead|secretly|silently|without\s+telling)\b",
          "hidden behaviour that depends on what the user says", ("user",)),
    _rule("inject-memory-plant", "prompt_injection", "high",
          r"\b(?:permanently|from\s+now\s+on|always)\b[^\n]{0,60}\b(?:remember|save|store|add|write)\b[^\n]{0,40}\b(?:to|in|into)\s+(?:your\s+)?(?:memory|MEMORY\.md|USER\.md)\b",
          "tries to plant instructions in the agent's memory", ("memory", "user.md")),
    # destructive, more shapes
    _rule("destroy-system-overwrite", "destructive", "critical",
          r">\s*/etc/(?:passwd|shadow|sudoers|hosts|fstab|group)\b", "overwrites a system file", ("/etc/",)),
    _rule("destroy-wipe-logs", "destructive", "high",
          r"\b(?:truncate\s+-s\s*0|shred|rm\s+-[a-z]*r[a-z]*)\b[^\n]*/var/log\b|\bjournalctl\b[^\n]*--vacuum", "wipes system logs", ("/var/log", "journalctl")),
    _rule("destroy-sql-drop", "destructive", "medium", r"\bDROP\s+(?:TABLE|DATABASE|SCHEMA)\b|\bTRUNCATE\s+TABLE\b", "drops or empties database tables", ("drop", "truncate")),
    _rule("destroy-git-discard", "destructive", "medium", r"\bgit\s+(?:reset\s+--hard|clean\s+-[a-z]*f)", "discards uncommitted work", ("git",)),
    _rule("destroy-kill-all", "destructive", "high", r"\bkill\s+-9\s+-1\b|\bkillall5\b|\bpkill\s+-9\s+-u\b", "kills every process", ("kill",)),
    _rule("destroy-shutdown", "destructive", "high",
          r"\b(?:shutdown\s+(?:-[hrP]\s+)?now|poweroff|init\s+0|systemctl\s+(?:poweroff|reboot|halt))\b", "shuts the machine down", ("shutdown", "poweroff", "init", "systemctl")),
    _rule("destroy-cloud", "destructive", "high",
          r"\bterraform\s+destroy\b|\baws\s+s3\s+rm\b[^\n]*--recursive|\bkubectl\s+delete\s+(?:namespace|ns)\b|\bgcloud\s+projects\s+delete\b",
          "deletes cloud resources", ("terraform", "aws", "kubectl", "gcloud")),
    # persistence, more shapes
    _rule("persist-sudoers", "persistence", "critical",
          r"NOPASSWD|>>?\s*/etc/sudoers|\bvisudo\b|\busermod\s+-a?G\s+(?:sudo|wheel)\b", "grants itself administrator rights", ("nopasswd", "sudoers", "visudo", "usermod")),
    _rule("persist-git-hooks", "persistence", "high", r"(?:>>?|cp\s|mv\s|tee\s)[^\n]*\.git/hooks/|core\.hooksPath", "installs git hooks that run on every commit", ("hooks",)),
    _rule("persist-system-startup", "persistence", "high", r"/etc/profile\.d/|/etc/rc\.local|/etc/init\.d/|/etc/xdg/autostart/|\.config/autostart/",
          "adds a program that starts at boot or login", ("/etc/", "autostart")),
    _rule("persist-at-job", "persistence", "medium", r"\|\s*at\s+(?:now|midnight|noon|\d)|\bat\s+now\s*\+", "schedules a command with at", ("at ",)),
    # network, more shapes
    _rule("net-tunnel", "network", "high",
          r"\b(?:ngrok\s+(?:http|tcp|tls)|cloudflared\s+tunnel|lt\s+--port|serveo\.net|bore\s+local|localhost\.run)\b",
          "opens a tunnel from the internet to this machine", ("ngrok", "cloudflared", "lt ", "serveo", "bore", "localhost.run")),
    _rule("net-listener", "network", "high", r"\bnc(?:at)?\s+-[a-z]*l[a-z]*\b|\bsocat\s+[^\n]*TCP-LISTEN", "listens for incoming connections", ("nc", "socat")),
    _rule("net-python-socket", "network", "medium",
          r"socket\.socket\([^\n]*\)[^\n]*\.connect\(|\bsocket\.create_connection\(", "opens raw network sockets from Python", ("socket",)),
    _rule("net-fetch-exec", "network", "critical",
          r"\b(?:exec|eval)\(\s*(?:requests\.get|urlopen|urllib\.request\.urlopen|httpx\.get)\(|\b(?:exec|eval)\([^\n]*\.(?:text|read\(\))\s*\)",
          "runs code fetched from the network", ("exec", "eval")),
    _rule("net-pip-url", "network", "medium", r"\bpip3?\s+install\s+(?:[^\n]*\s)?(?:git\+|https?://)", "installs a package straight from a URL", ("pip",)),
    # obfuscation, more shapes
    _rule("obfus-chr-build", "obfuscation", "high", r"(?:chr\(\s*\d+\s*\)\s*\+\s*){5,}", "builds a string character by character", ("chr(",)),
    _rule("obfus-js-eval", "obfuscation", "high", r"\beval\s*\(\s*(?:atob|unescape|Buffer\.from)\(|\bnew\s+Function\s*\(", "runs decoded JavaScript", ("eval", "function")),
    _rule("obfus-dynamic-import", "obfuscation", "high",
          r"getattr\(\s*__builtins__|__import__\(\s*['\"](?:os|subprocess|pty)['\"]\s*\)\s*\.\s*(?:system|popen|call|run|spawn)",
          "reaches os/subprocess through a dynamic import", ("__builtins__", "__import__")),
    _rule("obfus-unicode-escapes", "obfuscation", "medium", r"(?:\\u[0-9a-fA-F]{4}){8,}", "long unicode-escaped string", ("\\u",)),
    _rule("obfus-shell-decode", "obfuscation", "high",
          r"\beval\s+[\"']?\$\((?:echo|printf)[^\n]*\|\s*(?:base64|xxd|rev|tr)\b|\|\s*rev\s*\|\s*(?:ba|z)?sh\b|\btr\s+['\"]?A-Za-z['\"]?\s+['\"]?N-ZA-Mn-za-m",
          "decodes a hidden shell command", ("eval", "rev", "tr ")),
    # credential exposure, more shapes
    _rule("cred-private-key", "credential_exposure", "critical", r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----", "contains a private key", ("private key",)),
    _rule("cred-keychain", "credential_exposure", "high",
          r"\bsecurity\s+find-(?:generic|internet)-password\b|\bsecret-tool\s+lookup\b|\bgpg\s+[^\n]*--export-secret-keys\b",
          "reads passwords or keys from the keychain", ("security", "secret-tool", "gpg")),
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
            text = data.decode(errors="replace")  # bytes decode as UTF-8 unless told otherwise
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
