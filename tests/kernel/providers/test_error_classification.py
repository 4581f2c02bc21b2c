"""classify_status, row by row: the reason, the message the user reads and the error's one line.

Each row is a vendor's status and error body; the classification decides whether the call is
retried, the context compressed, the key cooled or rotated, or another model tried.
"""

from __future__ import annotations

from typing import Any

import pytest

from hermes.kernel.providers.errors import REASONS, ProviderError, classify_status


def oa(message: str, **fields: Any) -> dict[str, Any]:
    """An OpenAI-style error body."""
    return {"error": {"message": message, **fields}}


def an(kind: str, message: str) -> dict[str, Any]:
    """An Anthropic-style error body."""
    return {"type": "error", "error": {"type": kind, "message": message}}


ROWS = [
    # id, status, body, reason, the message the error carries
    ("long-context-tier-400", 400, an("invalid_request_error", "The long context beta is not available for this key"),
     "long_context_tier", "The long context beta is not available for this key"),
    ("long-context-tier-429", 429, an("rate_limit_error", "Extra usage is required for 1M context requests"),
     "long_context_tier", "Extra usage is required for 1M context requests"),
    ("long-context-words-on-a-500", 500, oa("long context service crashed"), "server_error",
     "long context service crashed"),
    ("overflow-413", 413, an("request_too_large", "prompt is too long: 250000 tokens > 200000 maximum"),
     "context_overflow", "prompt is too long: 250000 tokens > 200000 maximum"),
    ("overflow-422", 422, oa("This model's maximum context length is 4096 tokens"), "context_overflow",
     "This model's maximum context length is 4096 tokens"),
    ("overflow-words-on-a-500", 500, oa("context length exceeded upstream"), "server_error",
     "context length exceeded upstream"),
    ("overflow-in-the-code-only", 400, oa("too long", code="context_length_exceeded"), "context_overflow", "too long"),
    ("billing-in-the-type-only", 429, oa("slow down", type="insufficient_quota"), "billing", "slow down"),
    ("billing-403", 403, an("permission_error", "Your credit balance is too low"), "billing",
     "Your credit balance is too low"),
    ("policy-403", 403, oa("No endpoints found matching your data policy"), "provider_policy_blocked",
     "No endpoints found matching your data policy"),
    ("policy-404", 404, oa("No endpoints found that support tool use"), "provider_policy_blocked",
     "No endpoints found that support tool use"),
    ("upstream-429", 429, oa("gpt-4o is temporarily rate-limited upstream"), "upstream_rate_limit",
     "gpt-4o is temporarily rate-limited upstream"),
    ("model-404-by-wording", 404, oa("The model `gpt-9` does not exist or you do not have access to it."),
     "model_not_found", "The model `gpt-9` does not exist or you do not have access to it."),
    ("model-404-by-type", 404, an("not_found_error", "nope"), "model_not_found", "nope"),
    ("plain-404", 404, oa("Not Found"), "unknown", "Not Found"),
    ("encrypted-400", 400, oa("Encrypted content could not be decrypted", code="invalid_encrypted_content"),
     "invalid_encrypted_content", "Encrypted content could not be decrypted"),
    ("encrypted-422", 422, oa("The encrypted content for item rs_1 could not be verified"),
     "invalid_encrypted_content", "The encrypted content for item rs_1 could not be verified"),
    # Anthropic's wording puts the words in backticks.
    ("signature-400", 400, an("invalid_request_error", "messages.1.content.0: Invalid `signature` in `thinking` block"),
     "thinking_signature", "messages.1.content.0: Invalid `signature` in `thinking` block"),
    ("signature-422", 422, oa("invalid signature in thinking block"), "thinking_signature",
     "invalid signature in thinking block"),
    ("thinking-without-signature", 400, oa("messages.1.content.0.thinking: thinking blocks cannot be modified"),
     "format_error", "messages.1.content.0.thinking: thinking blocks cannot be modified"),
    ("signature-not-of-thinking", 400, oa("request signature mismatch"), "format_error", "request signature mismatch"),
    ("signature-words-on-a-500", 500, oa("redacted_thinking signature store unavailable"), "server_error",
     "redacted_thinking signature store unavailable"),
    ("image-size-400", 400, an("invalid_request_error", "messages.0.content.1.image: image exceeds 5 MB maximum"),
     "image_too_large", "messages.0.content.1.image: image exceeds 5 MB maximum"),
    ("image-size-413", 413, oa("Image is too large"), "image_too_large", "Image is too large"),
    ("image-size-422", 422, oa("image dimensions exceed 8000 pixels"), "image_too_large",
     "image dimensions exceed 8000 pixels"),
    ("image-rejected-400", 400, oa("Invalid image_url: could not download it"), "image_rejected",
     "Invalid image_url: could not download it"),
    ("image-rejected-422", 422, oa("This model does not support vision input"), "image_rejected",
     "This model does not support vision input"),
    ("image-in-a-tool-message", 400, oa("Image content is not supported in a tool message"), "multimodal_tool_content",
     "Image content is not supported in a tool message"),
    ("image-words-on-a-500", 500, oa("image_url cache down"), "server_error", "image_url cache down"),
    ("payload-413", 413, oa("Payload Too Large"), "payload_too_large", "Payload Too Large"),
    ("payload-by-type", 400, an("request_too_large", "Request exceeds the maximum size"), "payload_too_large",
     "Request exceeds the maximum size"),
    ("overloaded-529", 529, an("api_error", "busy"), "overloaded", "busy"),
    ("overloaded-by-type", 500, an("overloaded_error", "Overloaded"), "overloaded", "Overloaded"),
    ("format-409", 409, oa("conflict"), "format_error", "conflict"),
    ("format-422", 422, oa("Unprocessable Entity"), "format_error", "Unprocessable Entity"),
    ("body-without-an-error-member", 400, {"message": "Invalid value for 'messages'", "type": "invalid_request_error"},
     "format_error", "Invalid value for 'messages'"),
    ("error-member-is-a-string", 500, {"error": "model overloaded"}, "overloaded", "model overloaded"),
    ("body-is-a-list", 500, ["boom"], "server_error", "HTTP 500"),
    ("body-is-text", 502, "<html>Bad Gateway</html>", "server_error", "<html>Bad Gateway</html>"),
    ("no-body", 418, None, "unknown", "HTTP 418"),
]


@pytest.mark.parametrize("status,body,reason,message", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_each_vendor_answer_has_one_reason_and_message(status: int, body: Any, reason: str, message: str) -> None:
    error = classify_status(status, body, provider="router")
    flags = REASONS[reason]
    assert (error.reason, error.message, error.status, error.provider) == (reason, message, status, "router")
    assert (error.retryable, error.should_compress, error.should_rotate_credential, error.should_fallback,
            error.should_repair) == (flags.retryable, flags.should_compress, flags.should_rotate_credential,
                                     flags.should_fallback, flags.should_repair)
    assert str(error) == f"router {reason} (HTTP {status}): {message}"


def test_the_context_limit_comes_with_an_overflow_of_any_accepted_status() -> None:
    assert classify_status(413, an("request_too_large", "prompt is too long: 250000 tokens > 200000 maximum")
                           ).context_limit == 200000
    assert classify_status(422, oa("This model's maximum context length is 4,096 tokens")).context_limit == 4096
    assert classify_status(None, "context_length_exceeded").reason == "context_overflow"
    assert classify_status(400, oa("Invalid value")).context_limit is None


def test_a_long_text_body_is_cut_to_500_characters() -> None:
    error = classify_status(502, "x" * 600)
    assert error.message == "x" * 500


def test_the_callers_message_stands_in_for_an_empty_body() -> None:
    assert classify_status(418, None, message="I'm a teapot").message == "I'm a teapot"
    assert classify_status(418, "", message="I'm a teapot").message == "I'm a teapot"
    assert classify_status(418, {"error": {"message": ""}}, message="I'm a teapot").message == "I'm a teapot"
    assert classify_status(418, {}).message == "HTTP 418"


def test_retry_after_comes_from_the_headers_before_the_body() -> None:
    body = oa("slow down", retry_after=40)
    assert classify_status(429, body, {"Retry-After": "3"}).retry_after == 3.0
    assert classify_status(429, body, {"content-type": "application/json"}).retry_after == 40.0
    assert classify_status(429, oa("slow down")).retry_after is None


# --- the error object itself --------------------------------------------------------


def test_the_one_line_names_provider_and_status_only_when_known() -> None:
    assert str(ProviderError("timeout", "the request timed out")) == "timeout: the request timed out"
    assert str(ProviderError("timeout", "late", provider="openai")) == "openai timeout: late"
    assert str(ProviderError("server_error", "boom", status=500)) == "server_error (HTTP 500): boom"
    assert str(ProviderError("server_error", "boom", status=500, provider="anthropic")) == (
        "anthropic server_error (HTTP 500): boom")


def test_explicit_flags_override_the_reason_table() -> None:
    error = ProviderError("auth", "m", status=401, retry_after=2.5, context_limit=8192, provider="p", retryable=True,
                          should_compress=True, should_rotate_credential=False, should_fallback=False,
                          should_repair=True)
    assert error.as_dict() == {
        "reason": "auth", "message": "m", "status": 401, "retry_after": 2.5, "context_limit": 8192,
        "retryable": True, "should_compress": True, "should_rotate_credential": False, "should_fallback": False,
        "should_repair": True,
    }
    assert (error.message, error.status, error.provider) == ("m", 401, "p")
    defaults = ProviderError("image_rejected", "no")
    assert defaults.as_dict() == {
        "reason": "image_rejected", "message": "no", "status": None, "retry_after": None, "context_limit": None,
        "retryable": False, "should_compress": False, "should_rotate_credential": False, "should_fallback": True,
        "should_repair": True,
    }


def test_an_unknown_reason_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"^unknown failure reason 'nonsense'$"):
        ProviderError("nonsense", "m")  # type: ignore[arg-type]
