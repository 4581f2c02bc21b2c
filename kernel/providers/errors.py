"""One classified reason for every provider failure, with what to do about it.

Classification works on what every SDK exposes (HTTP status, error body,
headers, exception type), so the same table serves the ``openai`` and
``anthropic`` SDKs and OpenAI-compatible servers. Flags say whether to retry
the same call, compress the context, rotate the credential or fall back to
another model.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from typing import Any

from ..failures import REASONS, ClassifiedError, FailureReason, ProviderError

__all__ = [
    "REASONS",
    "ClassifiedError",
    "FailureReason",
    "ProviderError",
    "classify_exception",
    "classify_status",
    "parse_context_limit",
    "parse_reset_seconds",
]


# --- message parsing ------------------------------------------------------------

_CONTEXT_PATTERNS = [
    # OpenAI / vLLM: "This model's maximum context length is 128000 tokens. However, ..."
    re.compile(r"maximum context length is (\d[\d,]*) tokens", re.I),
    # Anthropic: "prompt is too long: 208323 tokens > 200000 maximum"
    re.compile(r"prompt is too long: \d[\d,]* tokens > (\d[\d,]*) maximum", re.I),
    # Anthropic: "input length and `max_tokens` exceed context limit: 197626 + 21333 > 200000"
    re.compile(r"exceed context limit: \d+ \+ \d+ > (\d[\d,]*)", re.I),
    # llama.cpp: "the request exceeds the available context size (n_ctx: 4096)"
    re.compile(r"n_ctx\W+(\d+)", re.I),
    re.compile(r"context (?:window|length|limit) (?:is|of) (\d[\d,]*)", re.I),
]
_CONTEXT_HINTS = (
    "context_length_exceeded",
    "maximum context length",
    "prompt is too long",
    "exceed context limit",
    "context window",
    "exceeds the available context",
    "context length",
    "too many tokens",
)
_BILLING_HINTS = ("insufficient_quota", "billing", "credit balance", "payment", "quota")
_CONTENT_HINTS = ("content_policy", "content policy", "content filter", "content_filter", "safety system")
_SIGNATURE_HINTS = ("invalid signature", "signature in thinking", "thinking block", "thinking.signature",
                    "redacted_thinking")
_ENCRYPTED_HINTS = ("invalid_encrypted_content", "encrypted content", "encrypted_content")
_IMAGE_SIZE_HINTS = ("image exceeds", "image is too large", "image too large", "image size", "image dimensions")
_IMAGE_HINTS = ("image", "vision", "multimodal", "image_url")
_TOOL_CONTENT_HINTS = ("tool_result", "tool message", "role 'tool'", "tool content", "tool_call_id")
_LONG_CONTEXT_HINTS = ("long context", "long-context", "extra usage", "context-1m", "1m context")
_POLICY_HINTS = ("data policy", "no endpoints found", "guardrail", "provider routing", "no allowed providers")
_UPSTREAM_HINTS = ("upstream", "provider returned error", "temporarily rate-limited upstream", "rate-limited upstream")
_MODEL_HINTS = ("model_not_found", "does not exist", "unknown model", "no such model", "model:")


def parse_context_limit(message: str) -> int | None:
    """The context window a vendor's overflow message states, if it states one."""
    for pattern in _CONTEXT_PATTERNS:
        match = pattern.search(message)
        if match:
            return int(match.group(1).replace(",", ""))
    return None


_DURATION_RE = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


def _parse_duration(text: str) -> float | None:
    # OpenAI's x-ratelimit-reset-*: "1s", "6m0s", "20ms", "1h2m3.5s".
    parts = _DURATION_RE.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text.replace(" ", ""):
        return None
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    return sum(float(n) * scale[u] for n, u in parts)


def _parse_instant(text: str, now: float) -> float | None:
    # Anthropic's anthropic-ratelimit-*-reset is RFC 3339; retry-after may be an HTTP date.
    import email.utils  # both imports only when a reset header needs parsing
    from datetime import datetime

    try:
        stamp = datetime.fromisoformat(text).timestamp()  # Python 3.11 reads a trailing "Z" itself
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        if parsed is None:
            return None
        stamp = parsed.timestamp()
    return max(0.0, stamp - now)


def parse_reset_seconds(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds until the provider says to try again, from the response headers.

    ``retry-after-ms`` and ``retry-after`` win; otherwise the longest of the
    rate-limit reset headers (``x-ratelimit-reset-*``, ``anthropic-ratelimit-*-reset``),
    since every exhausted limit must have reset before a call can succeed.
    """
    if not headers:
        return None
    lower = {str(k).lower(): str(v).strip() for k, v in headers.items()}
    now = time.time() if now is None else now
    if "retry-after-ms" in lower:
        try:
            return float(lower["retry-after-ms"]) / 1000
        except ValueError:
            pass
    if "retry-after" in lower:
        value = lower["retry-after"]
        try:
            return max(0.0, float(value))
        except ValueError:
            instant = _parse_instant(value, now)
            if instant is not None:
                return instant
    resets = []
    for name, value in lower.items():
        if name.startswith("x-ratelimit-reset"):
            seconds = _parse_duration(value)
            if seconds is None:
                try:
                    seconds = float(value)
                except ValueError:
                    seconds = None
        elif name.startswith("anthropic-ratelimit-") and name.endswith("-reset"):
            seconds = _parse_instant(value, now)
        else:
            continue
        if seconds is not None:
            resets.append(seconds)
    return max(resets) if resets else None


_BODY_RESET_KEYS = ("retry_after", "retry_after_seconds", "resets_in_seconds", "reset_after", "reset_seconds")
_BODY_RESET_AT_KEYS = ("resets_at", "reset_at", "reset_time")


def _body_reset_seconds(body: Any, now: float | None = None) -> float | None:
    """A reset some servers put in the error body: seconds, or an instant (epoch or ISO 8601)."""
    inner = body.get("error", body) if isinstance(body, Mapping) else None
    if not isinstance(inner, Mapping):
        return None
    now = time.time() if now is None else now
    for scope in (inner, inner.get("metadata") if isinstance(inner.get("metadata"), Mapping) else {}):
        for key in _BODY_RESET_KEYS:
            value = scope.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return max(0.0, float(value))
        for key in _BODY_RESET_AT_KEYS:
            value = scope.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                stamp = float(value) / (1000 if value > 1e12 else 1)  # milliseconds or seconds
                return max(0.0, stamp - now)
            if isinstance(value, str):
                instant = _parse_instant(value, now)
                if instant is not None:
                    return instant
    return None


# --- classification -------------------------------------------------------------


def _error_text(body: Any, fallback: str) -> tuple[str, str]:
    """(message, code-and-type words) from an OpenAI or Anthropic error body."""
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            message = str(inner.get("message") or fallback)
            kinds = " ".join(str(inner.get(k) or "") for k in ("type", "code"))
            return message, kinds
        if isinstance(inner, str):
            return inner, ""
    if isinstance(body, str) and body:
        return body[:500], ""
    return fallback, ""


def classify_status(
    status: int | None,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
    *,
    message: str = "",
    provider: str | None = None,
) -> ProviderError:
    """Classify an HTTP error response by status, error body and headers."""
    text, kinds = _error_text(body, message or f"HTTP {status}")
    words = f"{text} {kinds}".lower().replace("`", "")
    retry_after = parse_reset_seconds(headers)
    if retry_after is None:
        retry_after = _body_reset_seconds(body)

    def make(reason: FailureReason, **extra: Any) -> ProviderError:
        return ProviderError(
            reason, text, status=status, retry_after=retry_after, provider=provider, **extra
        )

    if status in (400, 429) and any(h in words for h in _LONG_CONTEXT_HINTS):
        return make("long_context_tier")
    if any(hint in words for hint in _CONTEXT_HINTS) and status in (400, 413, 422, None):
        return make("context_overflow", context_limit=parse_context_limit(text))
    if status == 401:
        return make("auth")
    if status == 402 or (status in (400, 403, 429) and any(h in words for h in _BILLING_HINTS)):
        return make("billing")
    if status == 403 and any(h in words for h in _POLICY_HINTS):
        return make("provider_policy_blocked")
    if status == 403:
        return make("auth_permanent")
    if status == 429 and any(h in words for h in _UPSTREAM_HINTS):
        return make("upstream_rate_limit")
    if status == 429:
        return make("rate_limit")
    if status == 404 and any(h in words for h in _POLICY_HINTS):
        return make("provider_policy_blocked")
    if status == 404:
        if any(hint in words for hint in _MODEL_HINTS) or "not_found" in words:
            return make("model_not_found")
        return make("unknown")
    if status in (400, 422) and any(h in words for h in _ENCRYPTED_HINTS):
        return make("invalid_encrypted_content")
    if status in (400, 422) and "signature" in words and any(h in words for h in _SIGNATURE_HINTS):
        return make("thinking_signature")
    if status in (400, 413, 422) and any(h in words for h in _IMAGE_SIZE_HINTS):
        return make("image_too_large")
    if status in (400, 422) and any(h in words for h in _IMAGE_HINTS):
        if any(h in words for h in _TOOL_CONTENT_HINTS):
            return make("multimodal_tool_content")
        return make("image_rejected")
    if status == 413 or "request_too_large" in words:
        return make("payload_too_large")
    if any(hint in words for hint in _CONTENT_HINTS):
        return make("content_policy")
    if status in (503, 529) or "overloaded" in words:
        return make("overloaded")
    if status == 408:
        return make("timeout")
    if status is not None and status >= 500:
        return make("server_error")
    if status in (400, 409, 422):
        return make("format_error")
    return make("unknown")


def _exception_chain(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:  # a cause may point back: stop at the first repeat
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def classify_exception(exc: BaseException, provider: str | None = None) -> ProviderError:
    """Classify any exception raised while talking to a model API.

    Works by duck typing on the SDK exception (``status_code``, ``body``,
    ``response.headers``) and by exception type names for transport failures,
    so no SDK has to be imported here.
    """
    if isinstance(exc, ProviderError):
        return exc
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and status >= 400:  # the SDKs' response-validation errors carry a 200
        response = getattr(exc, "response", None)
        headers = dict(getattr(response, "headers", None) or {})
        body = getattr(exc, "body", None)
        # str() of an SDK error is its message ("Error code: 429 - {...}"), the fallback for a body without one.
        return classify_status(status, body, headers, message=str(exc), provider=provider)
    names = " ".join(type(e).__name__ for e in _exception_chain(exc)).lower()
    if "timeout" in names:
        return ProviderError("timeout", "the request timed out", provider=provider)
    if isinstance(exc, (json.JSONDecodeError, ValueError)) or "validation" in names or "decode" in names:
        return ProviderError(
            "format_error", "the response could not be parsed", provider=provider, retryable=True
        )
    if any(k in names for k in ("connecterror", "connectionrefused", "gaierror")):  # ConnectTimeout: a timeout, above
        # Nothing was sent: the address is wrong, the server is down or the network is.
        cause = str(_exception_chain(exc)[-1]).strip()[:120] or "connection refused"
        return ProviderError(
            "server_error", f"could not connect to the model API ({cause}); check model.base_url and the network",
            provider=provider,
        )
    if any(k in names for k in ("connection", "protocol", "readerror", "closed", "network")):
        return ProviderError(
            "server_error", "the connection was dropped before the response completed", provider=provider
        )
    return ProviderError("unknown", f"{type(exc).__name__}: {str(exc)[:200]}", provider=provider)
