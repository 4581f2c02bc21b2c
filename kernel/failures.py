"""The failures that steer recovery: one reason per failure and the flags for it.

``ProviderError`` lives below both the model providers and the credential pool,
so the pool can raise and read it without knowing any provider. Classifying an
SDK's exceptions into these reasons stays with the providers (``providers.errors``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .errors import HermesError

__all__ = ["REASONS", "ClassifiedError", "FailureReason", "ProviderError"]

FailureReason = Literal[
    "auth",
    "billing",
    "rate_limit",
    "overloaded",
    "server_error",
    "timeout",
    "context_overflow",
    "payload_too_large",
    "model_not_found",
    "content_policy",
    "format_error",
    "unknown",
    "auth_permanent",
    "thinking_signature",
    "image_too_large",
    "image_rejected",
    "long_context_tier",
    "provider_policy_blocked",
    "upstream_rate_limit",
    "invalid_encrypted_content",
    "multimodal_tool_content",
    "stream_incomplete",
]


@dataclass(frozen=True)
class _Flags:
    retryable: bool = False
    should_compress: bool = False
    should_rotate_credential: bool = False
    should_fallback: bool = False
    #: The request itself must change before a retry can work (see ``hermes.kernel.agent.repairs``).
    should_repair: bool = False


REASONS: dict[str, _Flags] = {
    "auth": _Flags(should_rotate_credential=True, should_fallback=True),
    "billing": _Flags(should_rotate_credential=True, should_fallback=True),
    "rate_limit": _Flags(retryable=True, should_rotate_credential=True, should_fallback=True),
    "overloaded": _Flags(retryable=True, should_fallback=True),
    "server_error": _Flags(retryable=True, should_fallback=True),
    "timeout": _Flags(retryable=True, should_fallback=True),
    "context_overflow": _Flags(should_compress=True),
    "payload_too_large": _Flags(should_compress=True),
    "model_not_found": _Flags(should_fallback=True),
    "content_policy": _Flags(),
    "format_error": _Flags(),
    # Retried once: an unclassified failure is often transient, twice rarely is.
    "unknown": _Flags(retryable=True),
    # A key without permission for this model or endpoint: no retry, no cooldown can fix it.
    "auth_permanent": _Flags(should_fallback=True),
    # A thinking block's signature no longer verifies (another model or key signed it): strip and retry.
    "thinking_signature": _Flags(should_repair=True),
    "image_too_large": _Flags(should_repair=True),
    "image_rejected": _Flags(should_repair=True, should_fallback=True),
    # A window tier (Anthropic's 1M context) this key may not use: step down and compress.
    "long_context_tier": _Flags(should_compress=True),
    # An aggregator's routing policy refused every upstream (OpenRouter data policy): another provider may not.
    "provider_policy_blocked": _Flags(should_fallback=True),
    # The aggregator's upstream is rate limited, not this key: wait and retry, never cool the key.
    "upstream_rate_limit": _Flags(retryable=True, should_fallback=True),
    # Encrypted reasoning from another session or model: drop it and retry.
    "invalid_encrypted_content": _Flags(should_repair=True),
    # Images or parts inside tool results that this endpoint refuses: flatten to text and retry.
    "multimodal_tool_content": _Flags(should_repair=True),
    # The stream ended without a finish reason: retried before any text, continued after.
    "stream_incomplete": _Flags(retryable=True, should_fallback=True),
}


class ProviderError(HermesError):
    """A provider failure with one reason and the flags that steer recovery.

    ``retry_after`` is the wait in seconds the provider asked for (``retry-after``
    or a rate-limit reset header); ``context_limit`` the model's window when the
    error message states it. Messages never contain credentials.
    """

    def __init__(
        self,
        reason: FailureReason,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        context_limit: int | None = None,
        provider: str | None = None,
        retryable: bool | None = None,
        should_compress: bool | None = None,
        should_rotate_credential: bool | None = None,
        should_fallback: bool | None = None,
        should_repair: bool | None = None,
    ) -> None:
        if reason not in REASONS:
            raise ValueError(f"unknown failure reason {reason!r}")
        flags = REASONS[reason]
        self.reason: FailureReason = reason
        self.message = message
        self.status = status
        self.retry_after = retry_after
        self.context_limit = context_limit
        self.provider = provider
        self.retryable = flags.retryable if retryable is None else retryable
        self.should_compress = flags.should_compress if should_compress is None else should_compress
        self.should_rotate_credential = (
            flags.should_rotate_credential if should_rotate_credential is None else should_rotate_credential
        )
        self.should_fallback = flags.should_fallback if should_fallback is None else should_fallback
        self.should_repair = flags.should_repair if should_repair is None else should_repair
        where = f"{provider} " if provider else ""
        code = f" (HTTP {status})" if status else ""
        super().__init__(f"{where}{reason}{code}: {message}")

    def as_dict(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "message": self.message,
            "status": self.status,
            "retry_after": self.retry_after,
            "context_limit": self.context_limit,
            "retryable": self.retryable,
            "should_compress": self.should_compress,
            "should_rotate_credential": self.should_rotate_credential,
            "should_fallback": self.should_fallback,
            "should_repair": self.should_repair,
        }


#: The name the issue uses; one class.
ClassifiedError = ProviderError
