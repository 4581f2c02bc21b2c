"""How long to wait before the next call: reset headers and error bodies, to the second.

The wait becomes the key's cooldown and the retry's sleep, so each wording is pinned exactly.
"""

from __future__ import annotations

import email.utils
import time

import pytest

from hermes.kernel.providers.errors import _body_reset_seconds, parse_reset_seconds

NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    "value,seconds",
    [("1s", 1.0), ("20ms", 0.02), ("6m0s", 360.0), ("1h2m3.5s", 3723.5), ("2h", 7200.0), ("1m 30s", 90.0),
     ("2.5", 2.5), ("1s or so", None), ("soon", None)],
)
def test_openai_reset_durations(value: str, seconds: float | None) -> None:
    assert parse_reset_seconds({"x-ratelimit-reset-requests": value}, NOW) == seconds


def test_retry_after_wins_and_is_never_negative() -> None:
    assert parse_reset_seconds({"retry-after": "0"}, NOW) == 0.0
    assert parse_reset_seconds({"retry-after": "-5"}, NOW) == 0.0
    assert parse_reset_seconds({"retry-after-ms": "250", "retry-after": "9"}, NOW) == 0.25
    assert parse_reset_seconds({"retry-after-ms": "soon", "retry-after": "9"}, NOW) == 9.0
    assert parse_reset_seconds({"retry-after": "9", "x-ratelimit-reset-tokens": "60s"}, NOW) == 9.0
    # An unreadable retry-after leaves the reset headers to decide.
    assert parse_reset_seconds({"retry-after": "later", "x-ratelimit-reset-tokens": "60s"}, NOW) == 60.0


def test_an_http_date_counts_from_the_real_clock_by_default() -> None:
    http_date = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 20 <= parse_reset_seconds({"retry-after": http_date}) <= 30  # slack for a loaded machine


def test_the_longest_reset_counts_and_other_headers_are_skipped() -> None:
    headers = {"content-type": "application/json", "x-quota-reset": email.utils.formatdate(NOW + 600, usegmt=True),
               "anthropic-ratelimit-requests-remaining": "0",
               "x-ratelimit-reset-requests": "5s", "x-ratelimit-reset-tokens": "20s"}
    assert parse_reset_seconds(headers, NOW) == 20.0
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(NOW + 90))
    assert parse_reset_seconds({"Anthropic-Ratelimit-Tokens-Reset": stamp, "x-request-id": "r1"}, NOW) == 90.0
    assert parse_reset_seconds({"x-quota-reset": email.utils.formatdate(NOW + 600, usegmt=True)}, NOW) is None
    assert parse_reset_seconds({}, NOW) is None and parse_reset_seconds(None, NOW) is None


def test_a_reset_in_the_past_is_now() -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(NOW - 90))
    assert parse_reset_seconds({"anthropic-ratelimit-tokens-reset": stamp}, NOW) == 0.0
    assert parse_reset_seconds({"anthropic-ratelimit-tokens-reset": "not a time"}, NOW) is None


@pytest.mark.parametrize(
    "body,seconds",
    [
        ({"retry_after": 5}, 5.0),  # a body without an "error" member
        ({"error": {"message": "x", "resets_in_seconds": 12.5}}, 12.5),
        ({"error": {"message": "x", "retry_after": -3}}, 0.0),
        ({"error": {"message": "x", "retry_after": True}}, None),  # a flag, not a number
        ({"error": {"message": "x", "metadata": {"reset_after": 8}}}, 8.0),
        ({"error": {"message": "x", "resets_at": NOW + 30}}, 30.0),
        ({"error": {"message": "x", "reset_at": (NOW + 30) * 1000}}, 30.0),  # milliseconds
        ({"error": {"message": "x", "reset_time": 1000}}, 0.0),  # in the past
        ({"error": {"message": "x", "reset_at": "2027-01-15T08:00:30Z"}}, 30.0),
        ({"error": {"message": "x", "reset_at": "never"}}, None),
        ({"error": "slow down"}, None),
        ("slow down", None),
    ],
)
def test_resets_in_the_error_body(body: object, seconds: float | None) -> None:
    assert _body_reset_seconds(body, NOW) == seconds


def test_epoch_milliseconds_start_above_10_to_the_12() -> None:
    # 10**12 read as seconds is the year 33658; one more is read as milliseconds (2001, in the past).
    assert _body_reset_seconds({"resets_at": 1e12}, NOW) == 1e12 - NOW
    assert _body_reset_seconds({"resets_at": 1e12 + 1}, NOW) == 0.0
