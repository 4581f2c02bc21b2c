"""Secrets of 8 to 11 characters are redacted: every rule whose shortest secret lies there is pinned at it.

A planted bug raised such a minimum (``{8,}`` to ``{12,}``) and no test noticed, because every
secret in test_redact.py was longer. Each row here is a secret the docstring of ``redact_text``
promises to hide, at 8, 9, 10 and 11 characters.
"""

from __future__ import annotations

import pytest

from hermes.kernel.redact import redact_text, redact_tool_results
from hermes.kernel.tool_registry import ToolResult

VALUES = ["k7Qw2xLp", "k7Qw2xLpa", "k7Qw2xLpab", "k7Qw2xLpabc"]  # 8, 9, 10, 11 characters, each with a digit

# NAME=value with a secret-looking name, in the syntaxes the docstring names.
ASSIGNMENTS = [
    "API_KEY={v}",
    "export DB_PASSWORD='{v}'",
    'OPENAI_API_KEY="{v}"',
    '{{"client_secret": "{v}"}}',
    "token: {v}",
    "password = {v}",
    "AWS_SECRET_ACCESS_KEY={v}",
    "github_token={v}",
    "session_key: '{v}'",
]


@pytest.mark.parametrize("value", VALUES, ids=[f"{len(v)}-chars" for v in VALUES])
@pytest.mark.parametrize("form", ASSIGNMENTS)
def test_a_short_value_of_a_secret_name_is_redacted(form: str, value: str) -> None:
    text = form.format(v=value)
    out = redact_text(text)
    assert value not in out and "[REDACTED:secret]" in out, out


@pytest.mark.parametrize("value", VALUES, ids=[f"{len(v)}-chars" for v in VALUES])
def test_short_passwords_and_bearer_tokens_are_redacted(value: str) -> None:
    for text in (f"postgres://app:{value}@db:5432/app", f"Authorization: Bearer {value}", f"Token {value}"):
        assert value not in redact_text(text), text


@pytest.mark.parametrize("length", [8, 9, 10, 11])
def test_token_formats_at_their_shortest(length: int) -> None:
    segment = "a1" * 6
    jwt = f"eyJ{segment[:length]}.eyJ{segment[:length]}.{segment[:length]}"  # each part's minimum is 8
    slack = "xoxb-" + "9" * length  # the body's minimum is 10
    telegram = "1" * min(length, 10) + ":AA" + "b" * 33  # a bot id of 8 to 10 digits
    for token, kind in ((jwt, "jwt"), (slack, "slack-token"), (telegram, "telegram-token")):
        if kind == "slack-token" and length < 10:
            continue
        assert redact_text(f"see {token} here") == f"see [REDACTED:{kind}] here", token


def test_prose_after_bearer_or_token_stays() -> None:
    for text in ("Bearer authentication is used", "Token expired", "the bearer of bad news", "API_KEY=${API_KEY}"):
        assert redact_text(text) == text


def test_short_secrets_in_tool_output_never_reach_the_model() -> None:
    result = ToolResult("call", "terminal", "exit code: 0\nAPI_KEY=k7Qw2xLp\nDB_PASSWORD=hunter22\n")
    redact_tool_results([result])
    assert "k7Qw2xLp" not in result.content and "hunter22" not in result.content
