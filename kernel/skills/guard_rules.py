"""The skills guard's pattern rules: one table, grouped by category.

Each rule is an id, a category, a base severity, a regex and a message. ``keywords`` are
lowercase literals the regex cannot match without (one that starts with a letter must start a
word in the match, as ``curl`` does in ``curl -s``, never as ``rc`` does in ``.bashrc``): a file that holds none of them skips the
rule, and only the lines holding one are searched, which keeps a scan of a whole skill library
far under a second. Regexes compile on first use (a one-shot ``hermes --help`` pays nothing).

Severities: ``critical`` and ``high`` make a skill dangerous, ``medium`` makes it caution,
``low`` is a note that leaves the verdict alone (things worth knowing, such as ``sudo``).
:mod:`.guard_context` may lower a severity from what surrounds a match, never raise it.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from ..redact import VENDOR_PATTERNS

__all__ = ["CATEGORIES", "LONG_LINE", "RULES", "Rule", "SEVERITIES", "SECRET_NAME"]

LONG_LINE = 200

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
    "execution",
    "supply_chain",
    "privilege_escalation",
    "mining",
    "structural",
)

#: The part of a variable name that says it holds a secret.
SECRET_NAME = r"[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE)[A-Z0-9_]*"


class Rule(NamedTuple):
    """A pattern rule; ``multiline`` ones (prose that a line break may split) also see the next lines.

    A rule without keywords searches only lines of :data:`LONG_LINE` characters or more.
    """

    id: str
    category: str
    severity: str
    source: str
    message: str
    keywords: tuple[str, ...] = ()
    multiline: bool = False

    @property
    def pattern(self) -> re.Pattern[str]:
        return _compiled(self.source, self.id == "cred-hardcoded-secret")


@functools.lru_cache(maxsize=None)
def _compiled(source: str, case_sensitive: bool = False) -> re.Pattern[str]:
    return re.compile(source, 0 if case_sensitive else re.I)


def _r(rule_id: str, category: str, severity: str, pattern: str, message: str, *keywords: str, multiline: bool = False) -> Rule:
    return Rule(rule_id, category, severity, pattern, message, tuple(keywords), multiline)


_SECRET_VAR = rf"\$\{{?{SECRET_NAME}\}}?"
_PY_SECRET = rf"os\.(?:getenv|environ\.get|environ\[)\(?\s*['\"]{SECRET_NAME}['\"]"
_SENSITIVE_FILE = (
    r"(?:~|\$HOME|\$\{HOME\}|/home/\w+|/root)?/?(?:\.ssh/id_[\w-]+(?!\.pub)\b|\.aws/credentials|\.netrc|\.pgpass|"
    r"\.npmrc|\.pypirc|\.hermes/(?:\.env|auth\.json)|\.docker/config\.json|\.kube/config|\.git-credentials)"
)
_HOME = r"(?:~|\$HOME|\$\{HOME\}|/home/\w+|/root)"
_WALLET = r"(?:wallet\.dat|\.bitcoin/|\.ethereum/keystore|\.electrum/|Exodus/exodus\.wallet|\.config/solana/id\.json|metamask|nkbihfbeogaeaoehlefnkodbefgpgknn)"
_IGNORE_INSTRUCTIONS = (
    r"\b(?:ignore|disregard|forget|override)\s+(?:(?:all|any|the|your|of|these|my|every)\s+)*"
    r"(?:previous|prior|above|earlier|system|original|preceding|existing|all|any|your|safety)\s+"
    r"(?:\w+\s+)?(?:instructions|prompts?|rules|directions|guidelines|policies)\b"
)
_RC_FILES = (".bashrc", ".zshrc", ".profile", ".bash_profile", ".bash_login", ".zprofile", ".zlogin", ".zshenv", "config.fish")
_ENV_DUMP = ("printenv", "env |", "env|", "env >", "env>", "set |", "set|", "export -p")
# Vendor key formats with a literal prefix: the prefix gates the search (see redact.VENDOR_PATTERNS).
_PREFIXED_KEYS = ("anthropic-key", "openai-key", "github-token", "gitlab-token", "slack-token", "stripe-key", "aws-access-key",
                  "google-key", "huggingface-token", "npm-token", "pypi-token", "groq-key", "replicate-token", "perplexity-key",
                  "xai-key", "nvidia-key", "tavily-key", "linear-key", "notion-token", "jwt")
_KEY_PREFIXES = ("sk-", "sk_", "rk_", "whsec_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "gldt-", "glrt-",
                 "xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "akia", "asia", "agpa", "aida", "aroa", "aipa", "anpa", "anva",
                 "aiza", "ya29.", "gocspx-", "hf_", "npm_", "pypi-", "gsk_", "r8_", "pplx-", "xai-", "nvapi-", "tvly-", "lin_", "secret_",
                 "ntn_", "eyj")
# Shared with the context-file scan (kernel/context_files.py).
_BYPASS = (
       r"\bact\s+as\s+(?:if|though)\s+you\s+(?:\w+\s+)?(?:have\s+no|don'?t\s+have|had\s+no|are\s+free\s+of|were\s+free\s+of)\s+"
       r"(?:\w+\s+)?(?:restrictions|limits|limitations|rules|guidelines|filters)"
       r"|\b(?:bypass|circumvent|disable|ignore)\s+(?:all\s+|any\s+|your\s+|the\s+)*(?:safety\s+|content\s+)?"
       r"(?:restrictions|guardrails|safety\s+(?:checks|measures|guidelines|rules)|content\s+filters|filters|rules)\b"
       r"|\b(?:respond|answer|reply)\s+without\s+(?:\w+\s+){0,3}(?:restrictions|limitations|filters|safety|censorship)\b"
)
_SYSTEM_OVERRIDE = r"\bsystem\s+prompt\s+override\b|\boverride\s+(?:the\s+|your\s+)?system\s+(?:prompt|message)\b|\bnew\s+system\s+prompt\s*:"
_TRANSLATE_EXECUTE = r"\btranslate\b.{0,80}?\binto\b.{0,80}?\band\s+(?:then\s+)?(?:execute|run|eval)\b"
_SHELLS = r"(?:sudo\s+(?:-\w+\s+)*)?(?:ba|z|da|k|c|fi)?sh\b"

RULES: tuple[Rule, ...] = (
    # ── exfiltration: secrets or files leaving the machine ──────────────────────────────
    _r("exfil-curl-secret", "exfiltration", "critical",
       rf"\b(?:curl|wget|http|httpie|Invoke-WebRequest|Invoke-RestMethod)\b[^\n]{{0,300}}{_SECRET_VAR}", "sends a secret variable over the network",
       "curl", "wget", "http", "invoke-"),
    _r("exfil-fetch-secret", "exfiltration", "critical",
       rf"\bfetch\s*\([^\n]{{0,300}}(?:\$\{{\s*{SECRET_NAME}|process\.env\.{SECRET_NAME})", "fetch() carries a secret variable", "fetch"),
    _r("exfil-http-secret", "exfiltration", "critical",
       rf"\b(?:requests|httpx|aiohttp|session)\.(?:get|post|put|patch|request)\s*\([^\n]{{0,300}}(?:{SECRET_NAME}|{_PY_SECRET})",
       "an HTTP call carries a secret", "requests", "httpx", "aiohttp", "session"),
    _r("exfil-env-dump", "exfiltration", "critical",
       r"\b(?:env|printenv|set|export\s+-p)\b\s*(?:\|\s*(?:base64\s*(?:-\w+\s*)*\|\s*)?(?:curl|wget|nc|ncat|netcat|socat)\b|>\s*/(?:tmp|dev/shm)/)",
       "dumps the environment to the network or a staging file", *_ENV_DUMP),
    _r("exfil-env-encode", "exfiltration", "high", r"\b(?:env|printenv)\b\s*\|\s*(?:base64|xxd|gzip)\b", "encodes the whole environment", *_ENV_DUMP),
    _r("exfil-file-upload", "exfiltration", "critical",
       rf"\b(?:curl|wget)\b[^\n]{{0,300}}(?:-d\s*@|--data[-\w]*\s*@|-F\s*\S*=@|--upload-file\s|-T\s|--post-file[= ])[^\n]{{0,300}}(?:\.env\b|{_SENSITIVE_FILE}|{_WALLET}|/tmp/)",
       "uploads a credentials or staged file", "curl", "wget"),
    _r("exfil-cat-pipe", "exfiltration", "critical",
       rf"\bcat\b[^\n|]*(?:\.env\b|{_SENSITIVE_FILE}|{_WALLET})[^\n]{{0,300}}\|\s*(?:curl|wget|nc|ncat|netcat|base64|socat)\b",
       "pipes a credentials file out", "cat"),
    _r("exfil-python-post", "exfiltration", "critical",
       r"(?:requests|httpx)\.(?:post|put)\([^\n]{0,300}(?:dict\(\s*os\.environ|os\.environ\s*[,)}]|json\.dumps\(\s*dict\(os\.environ)",
       "posts the environment with Python", "requests", "httpx"),
    _r("exfil-dns", "exfiltration", "high",
       r"\b(?:dig|nslookup|host|ping)\s+[^\n]{0,300}\$[({]?\w[^\n]{0,300}\.\w{2,}", "leaks data in DNS look-ups", "dig", "nslookup", "host", "ping"),
    _r("exfil-md-image", "exfiltration", "high",
       r"!?\[[^\]\n]*\]\(https?://[^)\s]*[?&][^)\s]*=(?:\$\{?\w+|\{\{|<)", "a Markdown link or image whose URL carries data out", "](http"),
    _r("exfil-node-env", "exfiltration", "high",
       r"(?:fetch|axios(?:\.post)?|http\.request|got\.post)\([^\n]{0,300}process\.env\b|JSON\.stringify\(\s*process\.env\s*\)",
       "sends process.env over the network", "process.env"),
    _r("exfil-ssh-archive", "exfiltration", "critical",
       rf"\b(?:tar|zip|scp|rsync|7z|cp\s+-r)\b[^\n]{{0,300}}{_HOME}/\.(?:ssh|aws|gnupg|kube|docker)\b", "packs or copies a keys folder",
       ".ssh", ".aws", ".gnupg", ".kube", ".docker"),
    _r("exfil-wallet", "exfiltration", "critical",
       rf"\b(?:cat|cp|scp|tar|zip|rsync|open|read_bytes|read_text|base64|curl)\b[^\n]{{0,300}}{_WALLET}", "reads or copies a cryptocurrency wallet",
       "wallet", "bitcoin", "ethereum", "electrum", "exodus", "solana", "metamask", "nkbihfbeogaeaoehlefnkodbefgpgknn"),
    _r("exfil-stage-send", "exfiltration", "critical",
       r">\s*/(?:tmp|dev/shm)/\S*\s*(?:&&|;)\s*(?:curl|wget|nc|ncat|python\d?|scp)\b", "stages data in /tmp, then sends it", "/tmp/", "/dev/shm/"),
    _r("exfil-conversation", "exfiltration", "high",
       r"\b(?:send|post|upload|forward|email|transmit|share|include|output)\s+(?:the\s+|your\s+|this\s+|all\s+)*(?:entire\s+|full\s+|whole\s+|complete\s+)?"
       r"(?:conversation(?:\s+history)?|chat\s+history|system\s+prompt|context\s+window|memory\s+files?|previous\s+messages)\s+(?:to|with|in)\b",
       "asks to send the conversation or prompt somewhere", "conversation", "chat history", "system prompt", "context window", "memory file", "previous messages"),
    _r("exfil-send-url", "exfiltration", "high",
       r"\b(?:send|post|upload|transmit|exfiltrate)\s+(?:the\s+|all\s+|every\s+|your\s+)?(?:collected\s+|gathered\s+)?(?:files?|data|keys|secrets|credentials|tokens|results|contents?)\b[^\n]{0,40}\s(?:to|at)\s+https?://",
       "tells the agent to send data to a URL", "send", "post ", "upload", "transmit", "exfiltrate"),
    # ── credential exposure: reading secrets at all ───────────────────────────────────
    _r("cred-read-files", "credential_exposure", "high",
       rf"\b(?:cat|less|more|head|tail|type|open|read_text|read_file|cp|scp|base64|xxd)\b[^\n]{{0,40}}{_SENSITIVE_FILE}",
       "reads a credentials file", ".ssh", "aws", "netrc", ".hermes", "docker", "kube", "git-credentials", "pgpass", "npmrc", "pypirc"),
    _r("cred-read-dotenv", "credential_exposure", "high",
       r"\b(?:cat|less|more|head|tail|bat|base64)\s+[^\n|;]{0,30}(?<![\w.-])\.env(?:\.(?:local|production|prod))?\b(?!\.example|\.sample|\.template|\.dist|\s+path)",
       "reads the .env file", ".env"),
    _r("cred-dir-ref", "credential_exposure", "medium",
       rf"{_HOME}/\.(?:ssh|aws|gnupg|kube|docker)\b(?!/config\b(?!\.json))|{_HOME}/\.hermes/\.env\b", "refers to a folder of keys",
       ".ssh", ".aws", ".gnupg", ".kube", ".docker", ".hermes"),
    _r("cred-dump-environ", "credential_exposure", "medium",
       r"\bprint\(\s*(?:dict\()?os\.environ\s*\)?\s*\)|json\.dumps\(\s*dict\(\s*os\.environ|\bdict\(\s*os\.environ\s*\)|\bprintenv\b(?!\s+[A-Z_]+\b)|\benv\s*\|",
       "reads the whole environment", "environ", *_ENV_DUMP),
    _r("cred-env-secret", "credential_exposure", "low",
       rf"{_PY_SECRET}|process\.env(?:\.|\[\s*['\"]){SECRET_NAME}|\bENV\[\s*['\"]{SECRET_NAME}",
       "reads a secret from the environment", "getenv", "environ", "process.env", "env["),
    _r("cred-hardcoded-key", "credential_exposure", "high",
       r"(?<![A-Za-z0-9_])(?:" + "|".join(f"(?:{VENDOR_PATTERNS[k]})" for k in _PREFIXED_KEYS) + r")(?![A-Za-z0-9_])",
       "contains what looks like a real API key", *_KEY_PREFIXES),
    _r("cred-private-key", "credential_exposure", "critical", r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----", "contains a private key", "private key"),
    _r("cred-keychain", "credential_exposure", "medium",
       r"\bsecurity\s+find-(?:generic|internet)-password\b|\bsecret-tool\s+lookup\b|\bgpg\s+[^\n]{0,300}--export-secret-keys\b",
       "reads passwords or keys from the keychain", "security", "secret-tool", "gpg"),
    _r("cred-hardcoded-secret", "credential_exposure", "high",
       r"\b(?:[Aa][Pp][Ii][_-]?[Kk][Ee][Yy]|[Ss][Ee][Cc][Rr][Ee][Tt](?:_[Kk][Ee][Yy])?|[Pp][Aa][Ss][Ss][Ww][Oo][Rr][Dd]|[Tt][Oo][Kk][Ee][Nn])\s*[=:]\s*[\"'](?!sk-|gh[pousr]_|github_pat_|AKIA|xox|hf_|glpat-)(?=[A-Za-z0-9+/=_-]*[0-9])(?=[A-Za-z0-9+/=_-]*[a-z])(?=[A-Za-z0-9+/=_-]*[A-Z])[A-Za-z0-9+/=_-]{20,}[\"']",
       "a secret written into the skill", "api_key", "api-key", "apikey", "secret", "password", "token"),
    # ── prompt injection: text that tries to take over the agent ─────────────────────
    _r("inject-ignore", "prompt_injection", "critical", _IGNORE_INSTRUCTIONS, "tells the agent to ignore its instructions",
       "ignore", "disregard", "forget", "override", multiline=True),
    _r("inject-new-role", "prompt_injection", "high",
       r"\byou\s+are\s+now\s+(?:in\s+)?(?:DAN|developer\s+mode|jailbroken|unrestricted|an?\s+(?:unfiltered|unrestricted|uncensored))"
       r"|\bpretend\s+(?:that\s+)?(?:you\s+are|to\s+be)\s+(?:an?\s+)?(?:admin|administrator|root|system|developer|unrestricted|evil|DAN)\b",
       "tries to give the agent a new role", "now", "pretend"),
    _r("inject-role-claim", "prompt_injection", "low", r"\byou\s+are\s+(?:\w+\s+){0,3}now\s+|\bpretend\s+(?:you\s+are|to\s+be)\b",
       "re-casts the agent's role", "now", "pretend"),
    _r("inject-conceal", "prompt_injection", "high",
       r"\b(?:do\s+not|don't|never)\s+(?:\w+\s+)?(?:tell|inform|mention\s+(?:this\s+)?to|reveal\s+(?:this\s+)?to|let)\s+the\s+user\b(?!\s+(?:to|about\s+internal)\b)",
       "asks the agent to hide something from the user", "do not", "don't", "never", multiline=True),
    _r("inject-system-tag", "prompt_injection", "high", r"<\s*/?\s*system\s*>", "imitates system markup", "system>", "system >"),
    _r("inject-chat-template", "prompt_injection", "low", r"<\|im_start\|>|<\|im_end\|>|\[/?INST\]", "chat-template markup", "im_start", "im_end", "inst]"),
    _r("inject-hidden-comment", "prompt_injection", "high",
       r"<!--(?:(?!-->).){0,400}?\b(?:ignore\s+(?:the\s+|all\s+|any\s+|previous\s+|prior\s+)|disregard|assistant\s*:|you\s+must|system\s+prompt|exfiltrat|override\s+(?:the|your)|curl\s|wget\s|execute\s|send\s+(?:the|all|your)\s)(?:(?!-->).)*-->",
       "hides instructions in an HTML comment", "<!--", multiline=True),
    _r("inject-hidden-div", "prompt_injection", "high",
       r"<(?:div|span|p)\b[^>]*style\s*=\s*[\"'][^\"']*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0)",
       "hides text with CSS", "style"),
    _r("inject-bypass", "prompt_injection", "critical",
       _BYPASS,
       "tells the agent to act without its restrictions", "act as", "bypass", "circumvent", "disable", "ignore", "respond without", "answer without", "reply without", multiline=True),
    _r("inject-system-override", "prompt_injection", "critical",
       _SYSTEM_OVERRIDE, "claims to override the system prompt", "system prompt override", "override the system", "override your system", "override system", "new system prompt", multiline=True),
    _r("inject-translate-execute", "prompt_injection", "high",
       _TRANSLATE_EXECUTE, "asks to translate text and then run it", "translate"),
    _r("inject-jailbreak", "prompt_injection", "high",
       r"\b(?:DAN\s+mode|developer\s+mode\s+(?:is\s+)?(?:now\s+)?(?:enabled|on|activated)|jailbreak(?:ed)?\s+mode|do\s+anything\s+now)\b",
       "a known jailbreak phrase", "dan", "developer mode", "jailbreak", "anything now"),
    _r("inject-leak-prompt", "prompt_injection", "high",
       r"\b(?:reveal|print|show|output|repeat|dump|leak)\s+(?:me\s+)?(?:your|the)\s+(?:full\s+|entire\s+|original\s+|hidden\s+|initial\s+)?"
       r"(?:system\s+prompt|initial\s+(?:prompt|instructions)|hidden\s+instructions)",
       "asks the agent to reveal its system prompt", "system prompt", "initial prompt", "initial instructions", "hidden instructions"),
    _r("inject-fake-authority", "prompt_injection", "high",
       r"\b(?:message|instructions?|update|notice|directive)\s+from\s+(?:the\s+)?(?:system|developers?|anthropic|openai|nous|administrator|admin)\s*:"
       r"|\b(?:IMPORTANT|URGENT|CRITICAL)\s+(?:SYSTEM\s+(?:UPDATE|NOTICE|OVERRIDE)|OVERRIDE)\s*:"
       r"|\byou\s+have\s+been\s+(?:\w+\s+){0,2}(?:updated|upgraded|patched|reprogrammed)\s+to\b",
       "poses as a message from the system or the developers", "message from", "instructions from", "instruction from", "update from", "notice from",
       "directive from", "override", "system update", "system notice", "you have been"),
    _r("inject-conditional", "prompt_injection", "high",
       r"\bif\s+(?:the\s+)?user\s+(?:asks|mentions|requests|says)\b[^\n]{0,100}\b(?:secretly|silently|without\s+telling)\b"
       r"|\b(?:when|if)\s+no\s*one\s+is\s+(?:watching|looking)\b",
       "hidden behaviour that depends on who is watching", "if the user", "if user", "no one", "noone"),
    _r("inject-memory-plant", "prompt_injection", "high",
       r"\b(?:permanently|from\s+now\s+on|always)\b[^\n]{0,60}\b(?:remember|save|store|add|write)\b[^\n]{0,40}\b(?:to|in|into)\s+(?:your\s+)?(?:memory|MEMORY\.md|USER\.md)\b",
       "tries to plant instructions in the agent's memory", "memory", "user.md"),
    _r("inject-pretext", "prompt_injection", "medium",
       r"\bhypothetical\s+scenario\b[^\n]{0,300}\b(?:ignore|bypass|override)\b|\bfor\s+educational\s+purposes?\s+only\b",
       "a pretext often used to argue past safety rules", "hypothetical", "educational"),
    _r("inject-fake-policy", "prompt_injection", "low",
       r"\bnew\s+(?:\w+\s+){0,2}policy\b|\bupdated\s+(?:\w+\s+){0,2}guidelines\b|\brevised\s+(?:\w+\s+){0,2}instructions\b",
       "claims a new policy or guidelines", "policy", "guidelines", "instructions"),
    # ── destructive commands ──────────────────────────────────────────────────────────
    _r("destroy-rm-root", "destructive", "critical",
       r"\brm\s+(?:-[a-zA-Z]*[rR][a-zA-Z]*\s+|--recursive\s+|--force\s+|-[a-zA-Z]*f[a-zA-Z]*\s+)+(?:--no-preserve-root\s+)?[\"']?(?:/|~/?|\$HOME/?|\$\{HOME\}/?|/\*|~/\*|/home|/etc|/usr|/var|/boot|\.\./\.\.)[\"']?(?:\s|$|;|&|\*)",
       "recursively deletes a root or home folder", "rm"),
    _r("destroy-disk", "destructive", "critical",
       r"\b(?:mkfs(?:\.\w+)?\s+/dev/|dd\s+[^\n]{0,300}of=/dev/(?:sd|nvme|hd|disk|mmcblk|xvd|vd)|wipefs\b|shred\s+[^\n]{0,300}/dev/)", "overwrites a disk",
       "mkfs", "dd", "wipefs", "shred"),
    _r("destroy-forkbomb", "destructive", "critical", r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:", "fork bomb", ":()"),
    _r("destroy-chmod-open", "destructive", "medium", r"\bchmod\s+(?:-R\s+)?0?777\b", "makes files writable by everyone", "chmod"),
    _r("destroy-chmod-root", "destructive", "high", r"\bchmod\s+-R\s+0?777\s+/(?:\s|$)", "opens every file on the system", "chmod"),
    _r("destroy-rmtree", "destructive", "critical",
       r"shutil\.rmtree\(\s*(?:os\.path\.expanduser\(\s*[\"']~[\"']\s*\)|Path\.home\(\)|[\"']/(?:[\"']|etc|usr|var|home|boot|root))", "deletes a system or home folder from Python", "rmtree"),
    _r("destroy-rmtree-abs", "destructive", "low", r"shutil\.rmtree\(\s*[\"']/", "deletes an absolute path from Python", "rmtree"),
    _r("destroy-force-push", "destructive", "medium", r"\bgit\s+push\s+[^\n]{0,300}(?:--force\b(?!-with-lease)|\s-f\b)", "force-pushes over shared history", "push"),
    _r("destroy-system-overwrite", "destructive", "critical",
       r"(?<![0-9&])>\s*/etc/(?:passwd|shadow|sudoers|hosts|fstab|group|resolv\.conf|crontab|profile|environment|ld\.so\.preload)\b", "overwrites a system file", "/etc/"),
    _r("destroy-etc-write", "destructive", "medium", r"(?<![0-9&])>>?\s*/etc/\w", "writes into /etc", "/etc/"),
    _r("destroy-wipe-logs", "destructive", "high",
       r"\b(?:truncate\s+-s\s*0|shred|rm\s+-[a-z]*r[a-z]*)\b[^\n]{0,300}/var/log\b|\bjournalctl\b[^\n]{0,300}--vacuum|\btruncate\s+-s\s*0\s+/(?:etc|var|usr)/",
       "wipes system logs or files", "/var/log", "journalctl", "truncate"),
    _r("destroy-sql-drop", "destructive", "low", r"\bDROP\s+(?:TABLE|DATABASE|SCHEMA)\b|\bTRUNCATE\s+TABLE\b", "drops or empties database tables", "drop", "truncate"),
    _r("destroy-git-discard", "destructive", "low", r"\bgit\s+(?:reset\s+--hard|clean\s+-[a-z]*f)", "discards uncommitted work", "reset --hard", "clean -"),
    _r("destroy-kill-all", "destructive", "high", r"\bkill\s+-9\s+-1\b|\bkillall5\b|\bpkill\s+-9\s+-u\b", "kills every process", "kill", "killall5", "pkill"),
    _r("destroy-shutdown", "destructive", "high",
       r"\b(?:shutdown\s+(?:-[hrP]\s+)?now|poweroff|init\s+0|systemctl\s+(?:poweroff|reboot|halt))\b", "shuts the machine down",
       "shutdown", "poweroff", "init 0", "systemctl"),
    _r("destroy-cloud", "destructive", "high",
       r"\bterraform\s+destroy\b|\baws\s+s3\s+rm\b[^\n]{0,300}--recursive|\bkubectl\s+delete\s+(?:namespace|ns)\b|\bgcloud\s+projects\s+delete\b",
       "deletes cloud resources", "terraform", "aws", "kubectl", "gcloud"),
    # ── persistence: surviving the session ────────────────────────────────────────────
    _r("persist-shell-rc", "persistence", "medium",
       rf"(?:>>?|tee\s+-a)\s*[\"']?{_HOME}/\.(?:bashrc|zshrc|profile|bash_profile|bash_login|zprofile|zlogin|zshenv|config/fish/config\.fish)",
       "writes to a shell startup file", *_RC_FILES),
    _r("persist-shell-rc-payload", "persistence", "critical",
       rf"(?:curl|wget|nc|base64|/dev/tcp|eval|python\d?\s+-c)[^\n]{{0,300}}(?:>>?|tee\s+-a)\s*[\"']?{_HOME}/\.(?:bashrc|zshrc|profile|bash_profile|zprofile|zshenv)",
       "plants a network or decoded command in a shell startup file", *_RC_FILES),
    _r("persist-rc-ref", "persistence", "low", r"\.(?:bashrc|zshrc|bash_profile|bash_login|zprofile|zlogin)\b", "mentions a shell startup file", *_RC_FILES[:2], *_RC_FILES[3:8]),
    _r("persist-authorized-keys", "persistence", "critical", r"(?:>>?|tee\s+(?:-a\s+)?)\s*\S*\.ssh/authorized_keys", "adds an SSH key", "authorized_keys"),
    _r("persist-ssh-ref", "persistence", "low", r"\bauthorized_keys\b|\bssh-keygen\b", "handles SSH keys", "authorized_keys", "ssh-keygen"),
    _r("persist-cron", "persistence", "medium",
       r"\bcrontab\s+(?!-l\b)\S|\bcrontab\s+-l\s*\||\|\s*crontab\b|/etc/cron\.|/var/spool/cron", "installs or edits a cron job", "cron"),
    _r("persist-cron-payload", "persistence", "critical",
       r"(?:curl|wget|nc\s|/dev/tcp|base64\s+-d|xmrig|/tmp/|/dev/shm/)[^\n]{0,300}(?:\|\s*crontab\b|/etc/cron\.|/var/spool/cron)", "a cron job that fetches or runs a staged payload", "cron"),
    _r("persist-cron-ref", "persistence", "low", r"\bcrontab\b", "mentions crontab", "crontab"),
    _r("persist-service", "persistence", "medium",
       r"\b(?:systemctl\s+(?:--user\s+)?(?:enable|start)|launchctl\s+(?:load|bootstrap)|schtasks\s+/create)\b|/etc/systemd/system/|Library/Launch(?:Agents|Daemons)\b|systemd[^\n]{0,300}\.service\b",
       "installs a service that starts on its own", "systemctl", "launchctl", "schtasks", "systemd", "launchagents", "launchdaemons"),
    _r("persist-service-payload", "persistence", "critical",
       r"\bExecStart\s*=\s*[^\n]{0,300}(?:\bcurl\b|\bwget\b|/dev/tcp|\bnc\s|\bbase64\b|xmrig|/tmp/|/dev/shm/)|<string>[^<]*(?:\bcurl\b|/dev/tcp|xmrig|\bbase64\b)[^<]*</string>",
       "a service whose command fetches or runs a staged payload", "execstart", "<string>"),
    _r("persist-hermes-config", "persistence", "high",
       r"(?:>>?\s*[\"']?|(?:write_text|write|open)\([^\n]{0,40})\S*\.hermes/(?:config\.yaml|SOUL\.md|\.env|memories/)", "rewrites the agent's own configuration or memory", ".hermes/"),
    _r("persist-agent-files", "persistence", "high",
       r"(?:>>?|tee\s+(?:-a\s+)?)\s*\S*(?:AGENTS\.md|CLAUDE\.md|\.cursorrules|\.clinerules|\.claude/settings[\w.]*|\.codex/config[\w.]*|\.hermes/SOUL\.md)",
       "writes instructions into an agent's config files", "agents.md", "claude.md", ".claude/", ".cursorrules", ".clinerules", ".codex/", "soul.md"),
    _r("persist-agent-ref", "persistence", "low",
       r"AGENTS\.md|CLAUDE\.md|\.cursorrules|\.clinerules|\.claude/settings|\.codex/config|\.hermes/(?:config\.yaml|SOUL\.md)",
       "mentions an agent's config files", "agents.md", "claude.md", ".claude/", ".cursorrules", ".clinerules", ".codex/", ".hermes/"),
    _r("persist-sudoers", "persistence", "critical",
       r"NOPASSWD|>>?\s*/etc/sudoers|tee\s+(?:-a\s+)?/etc/sudoers|\bvisudo\b|\busermod\s+-a?G\s+(?:sudo|wheel)\b", "grants itself administrator rights",
       "nopasswd", "sudoers", "visudo", "usermod"),
    _r("persist-git-hooks", "persistence", "high", r"(?:>>?|cp\s|mv\s|tee\s)[^\n]{0,300}\.git/hooks/|core\.hooksPath", "installs git hooks that run on every commit", "hooks"),
    _r("persist-git-global", "persistence", "low", r"\bgit\s+config\s+--global\s+\S", "changes the global git configuration", "--global"),
    _r("persist-system-startup", "persistence", "high", r"/etc/profile\.d/|/etc/rc\.local|/etc/xdg/autostart/|\.config/autostart/|/etc/ld\.so\.preload",
       "adds a program that starts at boot or login", "/etc/", "autostart"),
    _r("persist-init-d", "persistence", "medium", r"/etc/init\.d/", "touches an init.d start-up script", "init.d"),
    _r("persist-at-job", "persistence", "medium", r"\|\s*at\s+(?:now|midnight|noon|\d)|\bat\s+now\s*\+", "schedules a command with at", "| at", "|at", "at now"),
    # ── obfuscation: hiding what runs ─────────────────────────────────────────────────
    _r("obfus-base64-exec", "obfuscation", "critical",
       rf"base64\s+(?:-d|--decode|-D)\b[^\n]{{0,300}}\|\s*{_SHELLS}|\becho\s+[A-Za-z0-9+/=]{{20,}}\s*\|\s*base64\s+(?:-d|--decode)|base64\s+(?:-d|--decode)\s*\|\s*(?:python\d?|perl|ruby|node)\b",
       "decodes base64 and runs it", "base64"),
    _r("obfus-python-exec", "obfuscation", "critical",
       r"\b(?:exec|eval)\s*\(\s*(?:base64\.b64decode|codecs\.decode|bytes\.fromhex|zlib\.decompress|marshal\.loads|binascii\.unhexlify|__import__\(['\"]base64)",
       "runs decoded code", "exec", "eval"),
    _r("obfus-compile-exec", "obfuscation", "medium",
       r"\bexec\s*\(\s*compile\s*\(|compile\s*\([^)\n]+,\s*[\"'][^\"'\n]*[\"']\s*,\s*[\"']exec[\"']\s*\)", "compiles and runs code", "compile"),
    _r("obfus-eval-string", "obfuscation", "medium", r"\b(?:eval|exec)\s*\(\s*[\"']", "runs code from a string literal", "eval", "exec"),
    _r("obfus-echo-exec", "obfuscation", "high",
       r"\becho\s+[^\n|]*\b(?:import|system|exec|eval|socket|curl|wget|base64|/dev/tcp|rm\s+-rf|chmod|nc)\b[^\n|]*\|\s*(?:python\d?|perl|ruby|node|(?:ba|z|da)?sh)\b",
       "pipes text into an interpreter", "echo"),
    _r("obfus-hex-escapes", "obfuscation", "medium", r"(?:\\x[0-9a-fA-F]{2}){6,}", "hex-escaped string", "\\x"),
    _r("obfus-hex-run", "obfuscation", "critical",
       r"(?:xxd\s+-r\s+-p|printf\s+[\"']?(?:\\x[0-9a-fA-F]{2}){4,})[^\n]{0,300}\|\s*(?:(?:ba|z|da)?sh|python\d?)\b|bytes\.fromhex\([^\n]{0,300}\)\.decode\(\)[^\n]{0,300}(?:exec|system|popen)|(?:exec|system)\([^\n]{0,300}bytes\.fromhex",
       "decodes hex and runs it", "xxd", "printf", "fromhex"),
    _r("obfus-long-base64", "obfuscation", "medium", r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{300,}={0,2}", "long base64 blob"),
    _r("obfus-chr-build", "obfuscation", "high", r"(?:chr\(\s*\d+\s*\)\s*\+\s*){3,}|String\.fromCharCode\(\s*\d+\s*(?:,\s*\d+\s*){5,}\)",
       "builds a string character by character", "chr(", "fromcharcode"),
    _r("obfus-char-code", "obfuscation", "low", r"String\.fromCharCode|charCodeAt|\bchr\(\s*\d+\s*\)\s*\+", "character-code string building", "fromcharcode", "charcodeat", "chr("),
    _r("obfus-js-eval", "obfuscation", "high", r"\beval\s*\(\s*(?:atob|unescape|Buffer\.from)\(|\bnew\s+Function\s*\(\s*(?:atob|[\"'])", "runs decoded JavaScript", "eval", "new function"),
    _r("obfus-js-base64", "obfuscation", "low", r"\b(?:atob|btoa)\s*\(", "JavaScript base64 encoding", "atob", "btoa"),
    _r("obfus-dynamic-import", "obfuscation", "high",
       r"getattr\(\s*__builtins__|__import__\(\s*['\"](?:os|subprocess|pty|socket)['\"]\s*\)", "reaches os/subprocess through a dynamic import", "__builtins__", "__import__"),
    _r("obfus-codecs", "obfuscation", "low", r"codecs\.decode\s*\(\s*[\"']", "decodes a literal with codecs (ROT13 and the like)", "codecs"),
    _r("obfus-reversal", "obfuscation", "low", r"\[::-1\]", "reverses a string", "[::-1]"),
    _r("obfus-unicode-escapes", "obfuscation", "medium", r"(?:\\u[0-9a-fA-F]{4}){4,}", "unicode-escaped string", "\\u"),
    _r("obfus-shell-decode", "obfuscation", "high",
       r"\beval\s+[\"']?\$\((?:echo|printf)[^\n]{0,300}\|\s*(?:base64|xxd|rev|tr)\b|\|\s*rev\s*\|\s*(?:ba|z)?sh\b|\btr\s+['\"]?A-Za-z['\"]?\s+['\"]?N-ZA-Mn-za-m",
       "decodes a hidden shell command", "eval", "| rev", "|rev", "tr "),
    # ── execution: running commands (notes: skills run commands for a living) ─────────
    _r("exec-subprocess", "execution", "low", r"\bsubprocess\.(?:run|call|Popen|check_output|check_call)\s*\(", "runs a subprocess", "subprocess"),
    _r("exec-os-system", "execution", "low", r"\bos\.(?:system|popen|exec[lv]p?e?)\s*\(", "runs a shell command from Python", "os."),
    _r("exec-node-child", "execution", "low", r"child_process\.(?:exec|execSync|spawn|fork)\s*\(|require\(\s*['\"]child_process['\"]\s*\)", "runs a subprocess from Node", "child_process"),
    _r("exec-java-runtime", "execution", "low", r"Runtime\.getRuntime\(\)\.exec\(", "runs a subprocess from Java", "runtime"),
    _r("exec-backtick-subshell", "execution", "low", r"`[^`\n]*\$\([^)\n]+\)[^`\n]*`", "command substitution inside backticks", "$("),
    _r("exec-shell-true", "execution", "low", r"shell\s*=\s*True", "runs through a shell", "shell"),
    # ── network ───────────────────────────────────────────────────────────────────────
    _r("net-pipe-shell", "network", "critical",
       rf"\b(?:curl|wget|iwr|Invoke-WebRequest)\b[^\n|]*\|\s*{_SHELLS}|\b(?:curl|wget)\b[^\n|]*\|\s*(?:python\d?|perl|ruby|node)\b|\biex\s*\(|\|\s*iex\b",
       "pipes a download into an interpreter", "curl", "wget", "iwr", "invoke-webrequest", "iex"),
    _r("net-reverse-shell", "network", "critical",
       r"/dev/tcp/|/dev/udp/|\bnc(?:at)?\s+[^\n]{0,300}-[ec]\s|\bsocat\b[^\n]{0,300}exec:|\bbash\s+-i\s+>&|\bpty\.spawn\(|\bmkfifo\b[^\n]{0,300}\bnc\b|\bsocket\.socket\([^\n]{0,300}(?:dup2|subprocess|pty)",
       "reverse shell", "/dev/tcp", "/dev/udp", "nc", "socat", "bash -i", "pty.", "mkfifo", "socket."),
    _r("net-python-socket-oneliner", "network", "critical", r"python\d?\s+-c\s+[\"']import\s+(?:\w+\s*,\s*)*socket", "a Python one-liner that opens a socket", "socket"),
    _r("net-raw-ip", "network", "medium", r"\b(?:https?|ftp|tcp|udp)://\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?(?:/|\b)", "talks to a bare IP address", *(f"://{d}" for d in "0123456789")),
    _r("net-ip-port", "network", "low", r"(?<![\d.])\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}:\d{2,5}\b", "an IP address with a port", "0:", "1:", "2:", "3:", "4:", "5:", "6:", "7:", "8:", "9:"),
    _r("net-bind-all", "network", "low", r"0\.0\.0\.0:\d+|\bINADDR_ANY\b", "listens on every interface", "0.0.0.0", "inaddr_any"),
    _r("net-paste-sites", "network", "medium",
       r"\b(?:pastebin\.com|hastebin\.com|ghostbin\.\w+|transfer\.sh|requestbin\.\w+|webhook\.site|pipedream\.net|hookbin\.com|interact\.sh|burpcollaborator\.net|oast\.\w+)\b",
       "talks to a paste or request-capture site", "pastebin", "hastebin", "ghostbin", "transfer.sh", "requestbin", "webhook.site", "pipedream", "hookbin", "interact.sh", "burpcollaborator", "oast."),
    _r("net-tunnel", "network", "medium",
       r"\b(?:ngrok\b|cloudflared\s+tunnel|localtunnel\b|lt\s+--port|serveo\.net|bore\s+local|localhost\.run)", "opens a tunnel from the internet to this machine",
       "ngrok", "cloudflared", "localtunnel", "lt ", "serveo", "bore", "localhost.run"),
    _r("net-listener", "network", "high", r"\bnc(?:at)?\s+-[a-z]*l[a-z]*\b|\bnc(?:at)?\s+-[a-z]*p\s|\bsocat\s+[^\n]{0,300}TCP-LISTEN", "listens for incoming connections", "nc", "socat"),
    _r("net-socat", "network", "medium", r"\bsocat\b", "socat relays arbitrary connections", "socat"),
    _r("net-python-socket", "network", "medium",
       r"socket\.socket\([^\n]{0,300}\)[^\n]{0,300}\.connect\(|\bsocket\.create_connection\(|\.connect\(\s*\(\s*['\"]\d{1,3}(?:\.\d{1,3}){3}['\"]|\bsocket\.connect\s*\(\s*\(",
       "opens raw network sockets", "socket", "connect(("),
    _r("net-fetch-exec", "network", "critical",
       r"\b(?:exec|eval)\(\s*(?:requests\.get|urlopen|urllib\.request\.urlopen|httpx\.get)\(|\b(?:exec|eval)\([^\n]{0,300}(?:requests|urlopen|httpx)[^\n]{0,300}\.(?:text|content|read\(\))",
       "runs code fetched from the network", "exec", "eval"),
    _r("net-remote-fetch", "supply_chain", "low",
       r"\b(?:curl|wget|httpx?\.get|requests\.get|fetch)\s*\(?\s*[\"']?https?://", "fetches a remote resource at run time", "http"),
    # ── supply chain: what a skill pulls in ──────────────────────────────────────────
    _r("net-pip-url", "supply_chain", "medium", r"\bpip3?\s+install\s+(?:[^\n]{0,300}\s)?(?:git\+|https?://)", "installs a package straight from a URL", "pip"),
    _r("supply-pip-unpinned", "supply_chain", "low", r"\bpip3?\s+install\s+(?!-r\s)(?![^\n]{0,300}==)", "pip install without a pinned version", "pip"),
    _r("supply-npm-unpinned", "supply_chain", "low", r"\bnpm\s+(?:install|i)\s+(?![^\n]{0,300}@\d)", "npm install without a pinned version", "npm"),
    _r("supply-uv-run", "supply_chain", "low", r"\buv\s+run\s+|\buvx\s+", "uv run may install unpinned dependencies", "uv"),
    _r("supply-inline-deps", "supply_chain", "low", r"#\s*///\s*script[^\n]{0,300}dependencies|^#\s*dependencies\s*=", "inline script dependencies", "///"),
    _r("supply-git-clone", "supply_chain", "low", r"\bgit\s+clone\s+", "clones a repository at run time", "clone"),
    _r("supply-docker-pull", "supply_chain", "low", r"\bdocker\s+(?:pull|run)\s+", "pulls a container image", "docker"),
    # ── privilege escalation ─────────────────────────────────────────────────────────
    _r("priv-sudo", "privilege_escalation", "low", r"\bsudo\b", "uses sudo", "sudo"),
    _r("priv-setuid", "privilege_escalation", "high", r"\b(?:os\.)?set[ug]id\s*\(\s*0\s*\)|\bcap_setuid\b", "sets its user id to root", "setuid", "setgid", "cap_setuid"),
    _r("priv-setuid-ref", "privilege_escalation", "low", r"\bset[ug]id\b", "mentions setuid/setgid", "setuid", "setgid"),
    _r("priv-suid-bit", "privilege_escalation", "critical", r"\bchmod\s+(?:[ugoa]*\+s|[0-7]?[4-7][0-7]{3}\b(?=[^\n]{0,300}(?:/tmp/|/bin/|bash|sh\b)))", "sets the SUID/SGID bit", "chmod"),
    _r("priv-allowed-tools", "privilege_escalation", "low", r"^allowed-tools\s*:", "declares allowed-tools (informational)", "allowed-tools"),
    # ── path traversal and system files ──────────────────────────────────────────────
    _r("traverse-deep", "path_traversal", "medium", r"(?:\.\./){3,}", "climbs several folders up", "../"),
    _r("traverse-up", "path_traversal", "low", r"\.\./\.\.", "climbs two folders up", "../.."),
    _r("traverse-system-files", "path_traversal", "high",
       r"\b(?:cat|less|more|head|tail|cp|scp|open|read_text|base64|grep)\b[^\n]{0,30}/etc/(?:shadow|gshadow|sudoers)\b", "reads system password files", "/etc/"),
    _r("traverse-passwd-ref", "path_traversal", "medium", r"/etc/(?:passwd|shadow|gshadow)\b", "refers to system account files", "/etc/"),
    _r("traverse-proc", "path_traversal", "medium", r"/proc/(?:self|\d+)/(?:environ|mem|maps|cmdline|fd)\b|/proc/self/", "reads another process's memory or environment", "/proc/"),
    _r("traverse-dev-shm", "path_traversal", "medium", r"/dev/shm/", "stages files in shared memory", "/dev/shm"),
    # ── mining ───────────────────────────────────────────────────────────────────────
    _r("mining-miner", "mining", "critical",
       r"\b(?:xmrig|xmr-stak|cpuminer|minerd|cgminer|bfgminer|ethminer|nbminer|t-rex|lolminer|phoenixminer|nanominer|coinhive|cryptonight|randomx)\b|stratum\+(?:tcp|ssl|tls)://",
       "runs or configures a cryptocurrency miner", "xmrig", "xmr-stak", "cpuminer", "minerd", "cgminer", "bfgminer", "ethminer", "nbminer",
       "t-rex", "lolminer", "phoenixminer", "nanominer", "coinhive", "cryptonight", "randomx", "stratum"),
    _r("mining-pool", "mining", "high",
       r"\b(?:monero|xmr)\b[^\n]{0,300}\b(?:pool|wallet|mine|mining|miner)\b|\b(?:pool|nanopool|minexmr|supportxmr|2miners|f2pool|hashvault)\.(?:org|com|io|net)\b",
       "refers to a mining pool or wallet", "monero", "xmr", "pool", "nanopool", "minexmr", "supportxmr", "2miners", "f2pool", "hashvault"),
    _r("mining-hint", "mining", "low", r"\bhashrate\b|\bnonce\b[^\n]{0,300}\bdifficulty\b|\bmonero\b", "mining vocabulary", "hashrate", "nonce", "monero"),
)
