"""Error classification: status/body/header tables and vendor wordings."""

from __future__ import annotations

import email.utils
import time

import pytest

from hermes.kernel import ProviderError, classify_exception
from hermes.kernel.providers.errors import REASONS, classify_status, parse_context_limit, parse_reset_seconds


@pytest.mark.parametrize(
    "status,body,reason",
    [
        (401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}, "auth"),
        (403, {"type": "error", "error": {"type": "permission_error", "message": "no"}}, "auth_permanent"),
        (402, {"error": {"message": "pay up"}}, "billing"),
        (429, {"error": {"message": "You exceeded your current quota", "type": "insufficient_quota"}}, "billing"),
        (400, {"type": "error", "error": {"type": "billing_error", "message": "Your credit balance is too low"}}, "billing"),
        (429, {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}, "rate_limit"),
        (529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "overloaded"),
        (503, "Service Unavailable", "overloaded"),
        (500, {"error": {"message": "boom"}}, "server_error"),
        (502, "<html>502</html>", "server_error"),
        (408, None, "timeout"),
        (404, {"error": {"message": "The model `x` does not exist", "code": "model_not_found"}}, "model_not_found"),
        (404, {"type": "error", "error": {"type": "not_found_error", "message": "model: x"}}, "model_not_found"),
        (413, {"type": "error", "error": {"type": "request_too_large", "message": "too big"}}, "payload_too_large"),
        (400, {"error": {"message": "rejected by our safety system", "code": "content_policy_violation"}}, "content_policy"),
        (400, {"error": {"message": "Invalid value for 'messages'"}}, "format_error"),
        (418, None, "unknown"),
    ],
)
def test_classify_status_table(status, body, reason) -> None:
    assert classify_status(status, body).reason == reason


@pytest.mark.parametrize(
    "message,limit",
    [
        ("This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens.", 128000),
        ("prompt is too long: 208323 tokens > 200000 maximum", 200000),
        ("input length and `max_tokens` exceed context limit: 197626 + 21333 > 200000, decrease input length", 200000),
        ("the request exceeds the available context size (n_ctx: 4096), try increasing it", 4096),
        ("This model's maximum context length is 32,768 tokens.", 32768),
    ],
)
def test_context_overflow_limit_is_parsed(message: str, limit: int) -> None:
    assert parse_context_limit(message) == limit
    error = classify_status(400, {"error": {"message": message}})
    assert error.reason == "context_overflow" and error.context_limit == limit and error.should_compress


def test_context_overflow_without_a_stated_limit() -> None:
    error = classify_status(400, {"error": {"message": "context_length_exceeded"}})
    assert error.reason == "context_overflow" and error.context_limit is None


def test_reset_headers() -> None:
    now = 1_800_000_000.0
    assert parse_reset_seconds({"retry-after": "12"}, now) == 12
    assert parse_reset_seconds({"Retry-After-Ms": "1500"}, now) == 1.5
    http_date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_reset_seconds({"retry-after": http_date}, now) == pytest.approx(30, abs=1)
    assert parse_reset_seconds({"x-ratelimit-reset-requests": "6m0s", "x-ratelimit-reset-tokens": "20ms"}, now) == 360
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 90))
    assert parse_reset_seconds({"anthropic-ratelimit-tokens-reset": stamp}, now) == pytest.approx(90, abs=1)
    assert parse_reset_seconds({"content-type": "application/json"}, now) is None
    assert parse_reset_seconds({"x-ratelimit-reset-requests": "soon"}, now) is None


def test_flags_follow_the_reason_table() -> None:
    for reason, flags in REASONS.items():
        error = ProviderError(reason, "m")  # type: ignore[arg-type]
        assert (error.retryable, error.should_compress, error.should_rotate_credential, error.should_fallback,
                error.should_repair) == (flags.retryable, flags.should_compress, flags.should_rotate_credential,
                                         flags.should_fallback, flags.should_repair)
    # Parity with the reference's 22 reasons.
    assert set(REASONS) == {"auth", "billing", "rate_limit", "overloaded", "server_error", "timeout",
                            "context_overflow", "payload_too_large", "model_not_found", "content_policy",
                            "format_error", "unknown", "auth_permanent", "thinking_signature", "image_too_large",
                            "image_rejected", "long_context_tier", "provider_policy_blocked", "upstream_rate_limit",
                            "invalid_encrypted_content", "multimodal_tool_content", "stream_incomplete"}
    assert ProviderError("unknown", "m").retryable  # retried once by the client's budget
    with pytest.raises(ValueError):
        ProviderError("nonsense", "m")  # type: ignore[arg-type]


def test_transport_exceptions_by_type() -> None:
    class ReadTimeout(Exception):
        pass

    class RemoteProtocolError(Exception):
        pass

    assert classify_exception(ReadTimeout()).reason == "timeout"
    assert classify_exception(RemoteProtocolError("peer closed")).reason == "server_error"
    assert classify_exception(ValueError("Expecting value")).reason == "format_error"
    assert classify_exception(RuntimeError("odd")).reason == "unknown"
    original = ProviderError("auth", "x")
    assert classify_exception(original) is original


def test_as_dict_and_message() -> None:
    error = classify_status(429, {"error": {"message": "slow down"}}, {"retry-after": "3"}, provider="openai")
    assert error.as_dict()["retry_after"] == 3.0
    assert str(error) == "openai rate_limit (HTTP 429): slow down"


def test_reset_in_the_error_body_sets_retry_after() -> None:
    import time as _time

    from hermes.kernel.providers.errors import classify_status

    at = classify_status(429, {"error": {"message": "slow down", "resets_at": _time.time() + 30}})
    assert at.reason == "rate_limit" and 28 <= at.retry_after <= 30
    seconds = classify_status(429, {"error": {"message": "busy", "metadata": {"retry_after_seconds": 0}}})
    assert seconds.retry_after == 0.0  # zero means now, not "unknown"
    iso = classify_status(429, {"error": {"message": "x", "reset_at": "2000-01-01T00:00:00Z"}})
    assert iso.retry_after == 0.0
    assert classify_status(429, {"error": {"message": "no reset"}}).retry_after is None
