"""classify_exception: the SDKs' own exceptions and transport failures, with the line the user reads.

The status errors are the real ``openai`` exception classes built the way the SDK builds them
(the inner error object as ``body``, the HTTP response with its headers); transport failures are
the real ``httpx`` and OS exceptions, chained as the SDK chains them.
"""

from __future__ import annotations

import json
import socket

import httpx2
import openai
import pydantic
import pytest

from hermes.kernel.providers.errors import ProviderError, classify_exception

DROPPED = "the connection was dropped before the response completed"
REQUEST = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


def status_error(cls: type[openai.APIStatusError], status: int, body: object, headers: dict[str, str] | None = None,
                 ) -> openai.APIStatusError:
    response = httpx2.Response(status, headers=headers or {}, request=REQUEST)
    return cls(f"Error code: {status} - {body}", response=response, body=body)


def chained(*chain: BaseException) -> BaseException:
    """``chain[0]`` raised from ``chain[1]``, raised from ``chain[2]``, ..."""
    for outer, inner in zip(chain, chain[1:]):
        outer.__cause__ = inner
    return chain[0]


def test_a_status_error_is_classified_by_its_status_body_and_headers() -> None:
    exc = status_error(openai.RateLimitError, 429, {"message": "slow down", "type": "requests"}, {"retry-after": "7"})
    error = classify_exception(exc, provider="openai")
    assert (error.reason, error.status, error.retry_after, error.message, error.provider) == (
        "rate_limit", 429, 7.0, "slow down", "openai")
    assert str(error) == "openai rate_limit (HTTP 429): slow down"


def test_the_body_decides_the_reason_not_the_sdk_class() -> None:
    exc = status_error(openai.RateLimitError, 429, {"message": "You exceeded your current quota",
                                                    "type": "insufficient_quota"})
    assert classify_exception(exc).reason == "billing"


def test_a_bad_request_is_a_status_error_too() -> None:
    exc = status_error(openai.BadRequestError, 400, {"message": "This model's maximum context length is 8192 tokens",
                                                     "code": "context_length_exceeded"})
    error = classify_exception(exc)
    assert (error.reason, error.status, error.context_limit) == ("context_overflow", 400, 8192)


def test_a_status_error_without_a_body_keeps_the_sdk_message() -> None:
    error = classify_exception(status_error(openai.InternalServerError, 502, ""), provider="openai")
    assert (error.reason, error.message) == ("server_error", "Error code: 502 - ")


def test_any_exception_with_a_status_code_is_a_status_error() -> None:
    class Gateway(Exception):
        status_code = 503

    error = classify_exception(Gateway("Service Unavailable from the proxy"), provider="proxy")
    assert (error.reason, error.message, error.status, error.retry_after) == (
        "overloaded", "Service Unavailable from the proxy", 503, None)
    assert str(error) == "proxy overloaded (HTTP 503): Service Unavailable from the proxy"


def pydantic_error() -> Exception:
    try:
        pydantic.TypeAdapter(int).validate_python("x")
    except pydantic.ValidationError as exc:
        return exc
    raise AssertionError("validated")


TRANSPORT = [
    # id, exception, reason, message
    ("read-timeout", httpx2.ReadTimeout("timed out"), "timeout", "the request timed out"),
    ("connect-timeout", httpx2.ConnectTimeout("timed out"), "timeout", "the request timed out"),
    ("timeout-in-the-cause", chained(openai.APITimeoutError(request=REQUEST), httpx2.ReadTimeout("x")), "timeout",
     "the request timed out"),
    # A 200 whose body does not fit the SDK's schema (strict response validation).
    ("validation", openai.APIResponseValidationError(httpx2.Response(200, request=REQUEST), None), "format_error",
     "the response could not be parsed"),
    ("validation-in-the-cause", chained(RuntimeError("bad reply"), pydantic_error()), "format_error",
     "the response could not be parsed"),
    ("decode-in-the-cause", chained(RuntimeError("bad stream"), json.JSONDecodeError("Expecting value", "x", 0)),
     "format_error", "the response could not be parsed"),
    ("value-error", ValueError("Expecting value"), "format_error", "the response could not be parsed"),
    ("connect-error", chained(openai.APIConnectionError(request=REQUEST), httpx2.ConnectError("[Errno 111] refused")),
     "server_error", "could not connect to the model API ([Errno 111] refused); check model.base_url and the network"),
    ("connection-refused", ConnectionRefusedError("[Errno 111] Connection refused"), "server_error",
     "could not connect to the model API ([Errno 111] Connection refused); check model.base_url and the network"),
    ("dns", socket.gaierror("[Errno -2] Name or service not known"), "server_error",
     "could not connect to the model API ([Errno -2] Name or service not known); check model.base_url and the network"),
    # The innermost cause says why, not the SDK's wrapper.
    ("innermost-cause", chained(openai.APIConnectionError(request=REQUEST), httpx2.ConnectError("wrapper"),
                                OSError("[Errno 101] Network is unreachable")), "server_error",
     "could not connect to the model API ([Errno 101] Network is unreachable); check model.base_url and the network"),
    ("a-cause-without-words", chained(openai.APIConnectionError(request=REQUEST), httpx2.ConnectError("  ")),
     "server_error", "could not connect to the model API (connection refused); check model.base_url and the network"),
    ("connection-reset", ConnectionResetError("reset by peer"), "server_error",
     "the connection was dropped before the response completed"),
    ("protocol", httpx2.RemoteProtocolError("peer closed"), "server_error",
     "the connection was dropped before the response completed"),
    ("read-error", httpx2.ReadError("eof"), "server_error", DROPPED),
    ("stream-closed", httpx2.StreamClosed(), "server_error", DROPPED),
    ("network", httpx2.NetworkError("down"), "server_error", DROPPED),
    ("other", RuntimeError("odd"), "unknown", "RuntimeError: odd"),
]


@pytest.mark.parametrize("exc,reason,message", [r[1:] for r in TRANSPORT], ids=[r[0] for r in TRANSPORT])
def test_transport_failures_have_a_reason_and_a_line_that_says_what_to_do(exc: BaseException, reason: str,
                                                                           message: str) -> None:
    error = classify_exception(exc, provider="openai")
    assert (error.reason, error.message, error.provider, error.status) == (reason, message, "openai", None)
    assert str(error) == f"openai {reason}: {message}"


def test_flags_of_transport_failures() -> None:
    # An unparsable response is retried although format_error alone is not.
    parsed = classify_exception(ValueError("x"))
    assert (parsed.retryable, parsed.should_fallback) == (True, False)
    refused = classify_exception(ConnectionRefusedError("refused"))
    assert (refused.retryable, refused.should_fallback) == (True, True)


def test_long_causes_and_texts_are_cut() -> None:
    refused = classify_exception(ConnectionRefusedError("r" * 300))
    assert refused.message == f"could not connect to the model API ({'r' * 120}); check model.base_url and the network"
    other = classify_exception(RuntimeError("o" * 300))
    assert other.message == "RuntimeError: " + "o" * 200


def test_a_cause_chain_that_points_back_ends() -> None:
    outer, inner = RuntimeError("outer"), ConnectionResetError("inner")
    outer.__cause__, inner.__context__ = inner, outer
    error = classify_exception(outer)
    assert (error.reason, error.message) == ("server_error", "the connection was dropped before the response completed")


def test_the_implicit_context_counts_when_there_is_no_cause() -> None:
    outer = RuntimeError("while handling")
    outer.__context__ = httpx2.ReadError("eof")
    assert classify_exception(outer).reason == "server_error"
    explicit = RuntimeError("raised from")
    explicit.__cause__ = httpx2.ReadError("eof")
    assert classify_exception(explicit).reason == "server_error"


def test_a_classified_error_passes_through_unchanged() -> None:
    original = ProviderError("auth", "x")
    assert classify_exception(original, provider="other") is original
