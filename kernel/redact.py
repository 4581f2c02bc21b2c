"""Masking and redaction of secrets for anything that leaves the process or the turn.

Two tools live here:

* ``mask_secret`` / ``mask_secrets`` hide values whose *key* says they are secret
  (config display, credential listings).
* ``redact_text`` finds secrets inside free text by their *shape* (vendor key formats,
  ``KEY=value`` with a secret-looking name, bearer tokens, private-key blocks, URLs
  with passwords) and masks them; ``RedactingFilter`` applies it to log records.

``redact_text`` must never see base64 image data: callers strip images first (a regex
pass over a megabyte of base64 costs seconds and finds nothing useful).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "RedactingFilter",
    "VENDOR_PATTERNS",
    "is_secret_key",
    "mask_secret",
    "mask_secrets",
    "MARKER_RE",
    "marker",
    "redact_data",
    "redact_snippet",
    "redact_text",
    "redact_tool_results",
    "tool_output_redaction",
]

_SECRET_KEY_RE = re.compile(r"(api[_-]?key|token|secret|password|passwd|credential|auth)", re.I)


def is_secret_key(key: str) -> bool:
    """True for names that hold credentials (``OPENAI_API_KEY``, ``model.api_key``)."""
    return bool(_SECRET_KEY_RE.search(key))


def mask_secret(value: str) -> str:
    """Keep at most the first and last four characters: ``sk-p...9xQz``.

    Short values are hidden whole, so a mask never reveals most of a key.
    """
    if len(value) < 16:
        return "****"
    return f"{value[:4]}...{value[-4:]}"


# Sections whose every value is a secret, whatever the name below them (``credentials.openai``).
_SECRET_SECTIONS = ("credentials",)
# Mappings whose every value may be a credential whatever its name (an MCP server's
# ``env`` and ``headers``); a bare ``${NAME}`` reference is not a secret and stays.
_SECRET_MAPPINGS = ("env", "headers")
_REFERENCE_RE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")


def mask_secrets(data: Any, key: str = "", *, _secret: bool = False) -> Any:
    """A copy of ``data`` for display: secrets masked, whatever their shape.

    Every string under a secret-looking key, inside ``credentials`` or inside an ``env`` or
    ``headers`` mapping is masked (a bare ``${NAME}`` reference stays); every other string
    goes through :func:`redact_text`, so a password inside ``model.base_url`` or a key pasted
    under an innocent name is hidden too. ``key`` is the dotted path of ``data``.
    """
    leaf = key.rsplit(".", 1)[-1]
    secret = _secret or key.split(".", 1)[0] in _SECRET_SECTIONS
    if isinstance(data, Mapping):
        inside = secret or leaf in _SECRET_MAPPINGS
        return {k: mask_secrets(v, f"{key}.{k}" if key else str(k), _secret=inside) for k, v in data.items()}
    if isinstance(data, list):
        return [mask_secrets(v, key, _secret=secret) for v in data]
    if isinstance(data, str) and data:
        if secret and _REFERENCE_RE.fullmatch(data):
            return data
        if secret or is_secret_key(leaf):
            return mask_secret(data)
        return redact_text(data)
    return data


# --------------------------------------------------------------------------- the pattern table
# kind -> pattern of the whole token. The kind is what the marker says (``[REDACTED:openai-key]``),
# so a model reading a redacted file still knows *what* was there and can ask for it.
# Prefixes are distinctive enough that a match is a secret; bare hex/base64 without a prefix is
# left to the NAME=value rule (git hashes and UUIDs must survive).
VENDOR_PATTERNS: dict[str, str] = {
    "anthropic-key": r"sk-ant-[A-Za-z0-9]{2,8}-[A-Za-z0-9_-]{20,}",
    "openai-key": r"sk-(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_-]{20,}",
    "github-token": r"gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}",
    "gitlab-token": r"gl(?:pat|dt|rt|ptt|cbt)-[A-Za-z0-9_-]{20,}",
    "slack-token": r"xox[abposr]-[A-Za-z0-9-]{10,}",
    "slack-webhook": r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}",
    "stripe-key": r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,}",
    "aws-access-key": r"(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}",
    "google-key": r"AIza[0-9A-Za-z_-]{35}|ya29\.[0-9A-Za-z_-]{20,}|GOCSPX-[A-Za-z0-9_-]{20,}",
    "huggingface-token": r"hf_[A-Za-z0-9]{30,}",
    "npm-token": r"npm_[A-Za-z0-9]{36}",
    "pypi-token": r"pypi-[A-Za-z0-9_-]{50,}",
    "twilio-key": r"SK[0-9a-fA-F]{32}",
    "sendgrid-key": r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{20,64}",
    "mailgun-key": r"key-[0-9a-f]{32}",
    "digitalocean-token": r"do[opr]_v1_[a-f0-9]{64}",
    "discord-token": r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}",
    "discord-webhook": r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{30,}",
    "telegram-token": r"\d{8,10}:AA[A-Za-z0-9_-]{33}",
    "shopify-token": r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
    "atlassian-token": r"ATATT3[A-Za-z0-9_=-]{50,}",
    "azure-key": r"AccountKey=[A-Za-z0-9+/]{40,}={0,2}|[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}",
    "groq-key": r"gsk_[A-Za-z0-9]{40,}",
    "replicate-token": r"r8_[A-Za-z0-9]{30,}",
    "perplexity-key": r"pplx-[A-Za-z0-9]{40,}",
    "xai-key": r"xai-[A-Za-z0-9]{50,}",
    "langsmith-key": r"lsv2_(?:pt|sk)_[A-Za-z0-9_]{30,}",
    "nvidia-key": r"nvapi-[A-Za-z0-9_-]{40,}",
    "cerebras-key": r"csk-[A-Za-z0-9]{40,}",
    "tavily-key": r"tvly-[A-Za-z0-9_-]{20,}",
    "linear-key": r"lin_(?:api|oauth)_[A-Za-z0-9]{32,}",
    "notion-token": r"(?:secret_|ntn_)[A-Za-z0-9]{40,}",
    "databricks-token": r"dapi[a-f0-9]{32}(?:-\d)?",
    "square-token": r"sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43}",
    "sentry-token": r"sntry[su]_[A-Za-z0-9+/=_-]{40,}",
    "grafana-token": r"gl(?:sa|c)_[A-Za-z0-9+/=_-]{32,}",
    "postman-key": r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}",
    "vault-token": r"hv[sb]\.[A-Za-z0-9_-]{24,}",
    "newrelic-key": r"NRAK-[A-Z0-9]{27}",
    "pulumi-token": r"pul-[a-f0-9]{40}",
    "doppler-token": r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}",
    "age-key": r"AGE-SECRET-KEY-1[A-Z0-9]{58}",
    "jwt": r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
}

# Tokens must not start or end in the middle of a word ("risk-..." is not "sk-..."). One
# alternation without groups keeps the scan fast; the kind is worked out for matches only.
_VENDOR_RE = re.compile(
    r"(?<![A-Za-z0-9_])(?:" + "|".join(f"(?:{p})" for p in VENDOR_PATTERNS.values()) + r")(?![A-Za-z0-9_])"
)

# A PEM block; a read cut off before its END line is redacted to the end of the text.
_PRIVATE_KEY_RE = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----.*?(?:-----END \1-----|\Z)", re.S
)

# 16 characters or more, or 8 or more with a digit: short real tokens (``Bearer abcd1234``) are secrets
# too, while prose ("Bearer authentication", "Token expired") keeps its words.
_BEARER_RE = re.compile(
    r"(\b(?:Bearer|Token|Basic)\s+)([A-Za-z0-9._~+/=-]{16,}|(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{8,15}(?![A-Za-z0-9._~+/=-]))",
    re.I,
)

# scheme://user:password@host — keep scheme, user and host.
_URL_PASSWORD_RE = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@'\"]+:)([^\s@/'\"]+)(@)")

_SECRET_NAME = (
    r"[A-Za-z0-9_.-]*(?:api[_-]?key|apikey|secret|token|password|passwd|pwd|credentials?"
    r"|access[_-]?key|private[_-]?key|auth[_-]?key|session[_-]?key|signing[_-]?key)[A-Za-z0-9_.-]*"
)
# NAME=value, NAME: value, "name": "value", export NAME='value'.
_KEY_VALUE_RE = re.compile(
    rf"""(?P<lead>(?P<q1>["']?)\b{_SECRET_NAME}(?P=q1)\s*[:=]\s*(?P<q2>["']?))(?P<value>[^\s"',;]{{8,}})""",
    re.I,
)

# Values that are code or placeholders, not secrets: env references, numbers, dotted names
# (``os.environ``), calls, already-redacted values.
_PLACEHOLDER_RE = re.compile(
    r"^(?:\*+|\[REDACTED:[\w-]+\]\S*|\$\{?[A-Za-z_]\w*\}?|<[^>]*>|\d+|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+"
    r"|[A-Za-z_][\w.]*[\[(].*|.*\.\.\..*|None|null|true|false|True|False"
    r"|[A-Z][a-z]+(?:[A-Z][a-z]+)+)$"  # last: type names
)


def marker(kind: str) -> str:
    """The text that stands in for a redacted secret of ``kind``."""
    return f"[REDACTED:{kind}]"


MARKER_RE = re.compile(r"\[REDACTED:[a-z0-9-]+\]")


def _vendor(match: re.Match[str]) -> str:
    token = match.group(0)
    # Per match, through re's own cache: compiling every vendor's pattern up front cost each start.
    kind = next((kind for kind, pattern in VENDOR_PATTERNS.items() if re.fullmatch(pattern, token)), "secret")
    return marker(kind)


def _key_value(match: re.Match[str]) -> str:
    value = match["value"]
    if _PLACEHOLDER_RE.match(value):  # numbers, env references, already redacted: not secrets
        return match.group(0)
    return match["lead"] + marker("secret")


def redact_text(text: str) -> str:
    """``text`` with every secret it recognises replaced by ``[REDACTED:kind]``; the rest unchanged.

    This is the one redaction function: tool results, displays, exports, logs and summaries
    all go through it. It covers the vendor formats in ``VENDOR_PATTERNS`` (OpenAI, Anthropic,
    GitHub, GitLab, Slack, Stripe, AWS, Google, Hugging Face, npm, PyPI, ...), JWTs, PEM
    private-key blocks, ``Bearer``/``Token``/``Basic`` credentials (16 characters or more, or 8
    or more with a digit), URLs with a password (any length), and ``NAME=value`` pairs whose
    name looks secret (values of 8 characters or more). It is idempotent. Callers strip base64 images first:
    never run this over image data.
    """
    if not text:
        return text
    if "PRIVATE KEY" in text:
        text = _PRIVATE_KEY_RE.sub(marker("private-key"), text)
    text = _VENDOR_RE.sub(_vendor, text)
    if "://" in text:
        text = _URL_PASSWORD_RE.sub(lambda m: m[1] + marker("password") + m[3], text)
    text = _BEARER_RE.sub(lambda m: m[1] + marker("token"), text)
    return _KEY_VALUE_RE.sub(_key_value, text)


def redact_snippet(snippet: str, mark: str = "**") -> str:
    """A search snippet with secrets redacted, even where a highlight ``mark`` splits one.

    The highlights are kept unless the snippet holds a secret; then they go, because a
    mark inside a key would otherwise hide the key's shape from :func:`redact_text`.
    """
    plain = snippet.replace(mark, "")
    redacted = redact_text(plain)
    return redact_text(snippet) if redacted == plain else redacted


def _is_image_data(value: str) -> bool:
    return value.startswith("data:") and ";base64," in value[:100]


def redact_data(data: Any) -> Any:
    """A copy of JSON-like ``data`` with :func:`redact_text` applied to every string.

    Image payloads are passed through untouched and unscanned: ``data:...;base64,`` URLs and
    the ``data`` of ``{"type": "base64", ...}`` sources (Anthropic image blocks).
    """
    if isinstance(data, str):
        return data if _is_image_data(data) else redact_text(data)
    if isinstance(data, Mapping):
        is_base64_source = data.get("type") == "base64"
        return {
            k: (v if is_base64_source and k == "data" else redact_data(v)) for k, v in data.items()
        }
    if isinstance(data, (list, tuple)):
        return [redact_data(v) for v in data]
    return data


def tool_output_redaction(config: Any) -> bool:
    """``security.redact_tool_output`` (on unless a config turns it off)."""
    if config is None or not hasattr(config, "get"):
        return True
    return config.get("security.redact_tool_output", True) is not False


def redact_tool_results(results: Iterable[Any], config: Any = None) -> None:
    """Redact the ``content`` of each tool result in place, before it is stored, saved or sent.

    Off only when ``security.redact_tool_output`` is false. Runs before the result budget, so
    outputs saved to ``results/`` are redacted too.
    """
    if not tool_output_redaction(config):
        return
    for result in results:
        if isinstance(result.content, str) and result.content:
            result.content = redact_text(result.content)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts the formatted message and any traceback of each record.

    It never drops a record. Install it on the *handlers*: a filter on a logger sees only
    records logged on that exact logger, not those propagated from its children
    (``hermes.kernel.host`` and friends), while a handler filter sees them all.
    """

    _formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string is the logging module's to report
            return True
        record.msg = redact_text(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact_text(record.exc_text)
        if record.stack_info:
            record.stack_info = redact_text(record.stack_info)
        return True
