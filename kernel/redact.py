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
from collections.abc import Mapping
from typing import Any

__all__ = [
    "RedactingFilter",
    "VENDOR_PATTERNS",
    "is_secret_key",
    "mask_secret",
    "mask_secrets",
    "redact_data",
    "redact_text",
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


def mask_secrets(data: Any, key: str = "") -> Any:
    """A copy of ``data`` with every string under a secret-looking key masked.

    Everything below such a key stays masked (``credentials.openai: [sk-...]``).
    """
    if isinstance(data, Mapping):
        inherited = is_secret_key(key)
        return {k: mask_secrets(v, key if inherited else str(k)) for k, v in data.items()}
    if isinstance(data, list):
        return [mask_secrets(v, key) for v in data]
    if isinstance(data, str) and data and is_secret_key(key):
        return mask_secret(data)
    return data


# --------------------------------------------------------------------------- vendor formats
# name -> pattern of the whole token. Prefixes are distinctive enough that a match is a
# secret; bare hex/base64 without a prefix is left to the KEY=value rule (git hashes and
# UUIDs must survive).
VENDOR_PATTERNS: dict[str, str] = {
    "anthropic": r"sk-ant-[A-Za-z0-9]{2,8}-[A-Za-z0-9_-]{20,}",
    "openai": r"sk-(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_-]{20,}",
    "github": r"gh[pousr]_[A-Za-z0-9]{30,}",
    "github_pat": r"github_pat_[A-Za-z0-9_]{22,}",
    "gitlab": r"gl(?:pat|dt|rt|ptt|cbt)-[A-Za-z0-9_-]{20,}",
    "slack": r"xox[abposr]-[A-Za-z0-9-]{10,}",
    "slack_webhook": r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}",
    "stripe": r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",
    "stripe_webhook": r"whsec_[A-Za-z0-9]{24,}",
    "aws_access_key": r"(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}",
    "google_api": r"AIza[0-9A-Za-z_-]{35}",
    "google_oauth": r"ya29\.[0-9A-Za-z_-]{20,}",
    "google_client_secret": r"GOCSPX-[A-Za-z0-9_-]{20,}",
    "huggingface": r"hf_[A-Za-z0-9]{30,}",
    "npm": r"npm_[A-Za-z0-9]{36}",
    "pypi": r"pypi-[A-Za-z0-9_-]{50,}",
    "twilio": r"SK[0-9a-fA-F]{32}",
    "sendgrid": r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{20,64}",
    "mailgun": r"key-[0-9a-f]{32}",
    "digitalocean": r"do[opr]_v1_[a-f0-9]{64}",
    "discord": r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}",
    "discord_webhook": r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{30,}",
    "telegram": r"\d{8,10}:AA[A-Za-z0-9_-]{33}",
    "shopify": r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
    "atlassian": r"ATATT3[A-Za-z0-9_=-]{50,}",
    "azure_storage": r"AccountKey=[A-Za-z0-9+/]{40,}={0,2}",
    "azure_client_secret": r"[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}",
    "groq": r"gsk_[A-Za-z0-9]{40,}",
    "replicate": r"r8_[A-Za-z0-9]{30,}",
    "perplexity": r"pplx-[A-Za-z0-9]{40,}",
    "xai": r"xai-[A-Za-z0-9]{50,}",
    "langsmith": r"lsv2_(?:pt|sk)_[A-Za-z0-9_]{30,}",
    "nvidia": r"nvapi-[A-Za-z0-9_-]{40,}",
    "cerebras": r"csk-[A-Za-z0-9]{40,}",
    "tavily": r"tvly-[A-Za-z0-9_-]{20,}",
    "linear": r"lin_(?:api|oauth)_[A-Za-z0-9]{32,}",
    "notion": r"(?:secret_|ntn_)[A-Za-z0-9]{40,}",
    "databricks": r"dapi[a-f0-9]{32}(?:-\d)?",
    "square": r"sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43}",
    "sentry": r"sntry[su]_[A-Za-z0-9+/=_-]{40,}",
    "grafana": r"gl(?:sa|c)_[A-Za-z0-9+/=_-]{32,}",
    "postman": r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}",
    "vault": r"hv[sb]\.[A-Za-z0-9_-]{24,}",
    "new_relic": r"NRAK-[A-Z0-9]{27}",
    "pulumi": r"pul-[a-f0-9]{40}",
    "doppler": r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}",
    "age": r"AGE-SECRET-KEY-1[A-Z0-9]{58}",
    "jwt": r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
}

# Tokens must not start or end in the middle of a word ("risk-..." is not "sk-...").
_VENDOR_RE = re.compile(
    r"(?<![A-Za-z0-9_])(?:" + "|".join(f"(?:{p})" for p in VENDOR_PATTERNS.values()) + r")(?![A-Za-z0-9_])"
)

_PRIVATE_KEY_RE = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----.*?-----END \1-----", re.S
)

_BEARER_RE = re.compile(r"(\b(?:Bearer|Token|Basic)\s+)([A-Za-z0-9._~+/=-]{16,})", re.I)

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
# (``os.environ``), calls, already-masked values.
_PLACEHOLDER_RE = re.compile(
    r"^(?:\*+|\$\{?[A-Za-z_]\w*\}?|<[^>]*>|\d+|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Za-z_][\w.]*[\[(].*"
    r"|.*\.\.\..*|None|null|true|false|True|False|[A-Z][a-z]+(?:[A-Z][a-z]+)+)$"  # last: type names
)


def _hide(value: str) -> str:
    """Long vendor tokens keep four characters each side (which key leaked); short ones vanish."""
    if len(value) < 20:
        return "****"
    return f"{value[:4]}...{value[-4:]}"


def _key_value(match: re.Match[str]) -> str:
    value = match["value"]
    if _PLACEHOLDER_RE.match(value):  # numbers, env references, already masked: not secrets
        return match.group(0)
    return match["lead"] + "****"


def redact_text(text: str) -> str:
    """``text`` with every secret it recognises masked; everything else byte-for-byte unchanged.

    Covers the vendor formats in ``VENDOR_PATTERNS`` (OpenAI, Anthropic, GitHub, GitLab, Slack,
    Stripe, AWS, Google, Hugging Face, npm, PyPI, Twilio, SendGrid, ...), JWTs, PEM private-key
    blocks, ``Bearer``/``Basic`` tokens, URLs with a password, and ``NAME=value`` pairs whose
    name looks secret. Callers strip base64 images first: never run this over image data.
    """
    if not text:
        return text
    if "PRIVATE KEY" in text:
        text = _PRIVATE_KEY_RE.sub(lambda m: f"-----BEGIN {m[1]}----- [REDACTED] -----END {m[1]}-----", text)
    text = _VENDOR_RE.sub(lambda m: _hide(m.group(0)), text)
    if "://" in text:
        text = _URL_PASSWORD_RE.sub(lambda m: f"{m[1]}****{m[3]}", text)
    text = _BEARER_RE.sub(lambda m: m[1] + _hide(m[2]), text)
    return _KEY_VALUE_RE.sub(_key_value, text)


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
