"""redact_text: one row per secret format, plus text that must stay untouched."""

from __future__ import annotations

import logging

import pytest

from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel.redact import RedactingFilter, mask_secret, mask_secrets, redact_data, redact_text

A32 = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6"  # 32 alphanumerics, clearly fake
HEX32 = "0123456789abcdef0123456789abcdef"
HEX64 = HEX32 * 2

# (format, text containing the secret, the secret itself)
CASES: list[tuple[str, str, str]] = [
    ("openai", "key sk-" + A32 + "xyz used", "sk-" + A32 + "xyz"),
    ("openai project", "OPENAI key: sk-proj-" + A32 + "_-ab", "sk-proj-" + A32 + "_-ab"),
    ("openrouter", "sk-or-v1-" + HEX64, "sk-or-v1-" + HEX64),
    ("anthropic", "use sk-ant-api03-" + A32 + A32 + " now", "sk-ant-api03-" + A32 + A32),
    ("github classic", "ghp_" + A32 + "abcd", "ghp_" + A32 + "abcd"),
    ("github oauth", "token gho_" + A32 + "wxyz.", "gho_" + A32 + "wxyz"),
    ("github fine-grained", "github_pat_11ABCDEFG0" + A32 + "_" + A32, "github_pat_11ABCDEFG0" + A32 + "_" + A32),
    ("gitlab", "glpat-" + "Ab12Cd34Ef56Gh78Ij90", "glpat-Ab12Cd34Ef56Gh78Ij90"),
    ("slack bot", "xoxb-123456789012-1234567890123-" + A32[:24], "xoxb-123456789012-1234567890123-" + A32[:24]),
    ("slack user", "xoxp-1234567890-" + A32, "xoxp-1234567890-" + A32),
    ("slack webhook", "post to https://hooks.slack.com/services/T0000/B0000/" + A32[:24], "https://hooks.slack.com/services/T0000/B0000/" + A32[:24]),
    ("stripe secret", "sk_live_" + A32[:24], "sk_live_" + A32[:24]),
    ("stripe restricted", "rk_live_" + A32[:24], "rk_live_" + A32[:24]),
    ("aws access key", "AKIAIOSFODNN7EXAMPLE is the id", "AKIAIOSFODNN7EXAMPLE"),
    ("aws secret key", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("google api", "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
    ("google oauth", "ya29.a0AfH6SM" + A32, "ya29.a0AfH6SM" + A32),
    ("hugging face", "hf_" + A32 + "abcd", "hf_" + A32 + "abcd"),
    ("npm", "npm_" + A32 + "abcd", "npm_" + A32 + "abcd"),
    ("pypi", "pypi-AgEIcHlwaS5vcmc" + A32 + A32, "pypi-AgEIcHlwaS5vcmc" + A32 + A32),
    ("twilio", "SK" + HEX32, "SK" + HEX32),
    ("sendgrid", "SG." + "abcdefghij0123456789AB" + "." + A32 + "abcdefghijk", "SG.abcdefghij0123456789AB." + A32 + "abcdefghijk"),
    ("mailgun", "key-" + HEX32, "key-" + HEX32),
    ("digitalocean", "dop_v1_" + HEX64, "dop_v1_" + HEX64),
    ("discord bot", "MTAxMjM0NTY3ODkwMTIzNDU2Nw.GaBcDe." + A32, "MTAxMjM0NTY3ODkwMTIzNDU2Nw.GaBcDe." + A32),
    ("telegram bot", "bot 123456789:AA" + A32 + "z", "123456789:AA" + A32 + "z"),
    ("shopify", "shpat_" + HEX32, "shpat_" + HEX32),
    ("atlassian", "ATATT3xFfGF0" + A32 + A32, "ATATT3xFfGF0" + A32 + A32),
    ("azure storage", "DefaultEndpointsProtocol=https;AccountKey=" + A32 * 2 + "AbCd==;", A32 * 2 + "AbCd=="),
    ("azure client secret", "abc8Q~" + A32[:32], "abc8Q~" + A32[:32]),
    ("groq", "gsk_" + A32 + "abcdefghijklmnop", "gsk_" + A32 + "abcdefghijklmnop"),
    ("replicate", "r8_" + A32 + "abcde", "r8_" + A32 + "abcde"),
    ("perplexity", "pplx-" + A32 + "abcdefghijkl", "pplx-" + A32 + "abcdefghijkl"),
    ("xai", "xai-" + A32 + A32, "xai-" + A32 + A32),
    ("langsmith", "lsv2_pt_" + HEX32 + "_abc123", "lsv2_pt_" + HEX32 + "_abc123"),
    ("nvidia", "nvapi-" + A32 + "abcdefghij", "nvapi-" + A32 + "abcdefghij"),
    ("linear", "lin_api_" + A32 + "abcdefgh", "lin_api_" + A32 + "abcdefgh"),
    ("notion", "ntn_" + A32 + "abcdefghijklm", "ntn_" + A32 + "abcdefghijklm"),
    ("vault", "hvs." + A32, "hvs." + A32),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\nabc\n-----END RSA PRIVATE KEY-----",
     "MIIEpAIBAAKCAQEA7"),
    ("openssh private key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
     "b3BlbnNzaC1rZXktdjEAAAAA"),
    ("bearer", "Authorization: Bearer abcdef0123456789ABCDEFxyz", "abcdef0123456789ABCDEFxyz"),
    ("url password", "postgres://admin:s3cr3tP4ss@db.example.com:5432/app", "s3cr3tP4ss"),
    ("generic env", "export DATABASE_PASSWORD='correct-horse-battery'", "correct-horse-battery"),
    ("generic json", '{"client_secret": "Zq9xW8vU7tS6rR5q"}', "Zq9xW8vU7tS6rR5q"),
    ("generic yaml", "api_key: my-very-private-value", "my-very-private-value"),
]


@pytest.mark.parametrize(("name", "text", "secret"), CASES, ids=[c[0] for c in CASES])
def test_secret_is_redacted(name: str, text: str, secret: str) -> None:
    out = redact_text(text)
    assert secret not in out, out
    assert out != text


def test_table_covers_thirty_vendors() -> None:
    assert len(CASES) >= 40


NEGATIVES = [
    "The quick brown fox jumps over the lazy dog. Remember to pass the token to the function.",
    "commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39\nAuthor: Dev <dev@example.com>\n\n    Fix risk-assessment-framework-for-all-users",
    "session 550e8400-e29b-41d4-a716-446655440000 resumed",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "max_tokens=4096 and token_count: 1234567890",
    "password = os.environ",
    "api_key: Optional[str] = None",
    "secret_key: SecretStr = Field(...)",
    "API_KEY=${OPENAI_API_KEY}",
    "see https://example.com/path?q=1 and git@github.com:owner/repo.git",
    "the desk-lamp-controller-module-name is long",
    "Use `pip install sk-learn-helpers` (not a key).",
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_ordinary_text_is_untouched(text: str) -> None:
    assert redact_text(text) == text


def test_surrounding_text_survives() -> None:
    out = redact_text("before sk-" + A32 + " after")
    assert out == "before [REDACTED:openai-key] after"
    assert redact_text("") == ""


def test_is_idempotent() -> None:
    text = "\n".join(c[1] for c in CASES)
    once = redact_text(text)
    assert redact_text(once) == once


def test_large_text_keeps_everything_but_the_secret() -> None:
    # Speed is measured in bench/, not asserted here; this checks a 1 MB input comes back whole.
    filler = "ordinary log line with some words and numbers 12345 " * 20000
    out = redact_text(filler + "sk-" + A32)
    assert A32 not in out and out.startswith(filler) and out.endswith("[REDACTED:openai-key]")


def test_logging_filter_redacts_message_args_and_traceback(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("hermes.test_redact")
    filt = RedactingFilter()
    logger.addFilter(filt)
    try:
        with caplog.at_level(logging.INFO, logger="hermes.test_redact"):
            logger.info("calling with %s", "sk-" + A32)
            try:
                raise ValueError("bad key ghp_" + A32 + "abcd")
            except ValueError:
                logger.exception("failed")
    finally:
        logger.removeFilter(filt)
    assert A32 not in caplog.text
    assert "calling with [REDACTED:openai-key]" in caplog.text
    assert "ValueError" in caplog.text


def test_filter_on_a_handler_sees_child_loggers() -> None:
    import io

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    parent = logging.getLogger("hermes_redact_parent")
    parent.addHandler(handler)
    parent.setLevel(logging.INFO)
    try:
        logging.getLogger("hermes_redact_parent.child").info("key=%s", "sk-" + A32)
    finally:
        parent.removeHandler(handler)
    assert A32 not in stream.getvalue() and "key=" in stream.getvalue()


def test_existing_masks_kept() -> None:
    assert mask_secret("short") == "****"
    assert mask_secrets({"api_key": "x" * 20, "model": "m"}) == {"api_key": "xxxx...xxxx", "model": "m"}


def test_redact_data_skips_images() -> None:
    image = "data:image/png;base64," + "sk-" + A32
    data = {
        "content": [
            {"type": "text", "text": "key sk-" + A32},
            {"type": "image_url", "image_url": {"url": image}},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "ghp_" + A32 + "abcd"}},
        ],
        "n": 3,
    }
    out = redact_data(data)
    assert A32 not in out["content"][0]["text"]
    assert out["content"][1]["image_url"]["url"] == image
    assert out["content"][2]["source"]["data"] == "ghp_" + A32 + "abcd"
    assert out["n"] == 3 and data["content"][0]["text"].endswith(A32)  # the input is not changed


def test_session_exports_are_redacted(tmp_path) -> None:
    import json

    store = SQLiteSessionStore(tmp_path / "state.db")
    sid = store.create_session(title="leaky")
    store.append_messages(sid, [
        {"role": "user", "content": "my key is sk-" + A32},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": json.dumps({"command": "export GITHUB_TOKEN=ghp_" + A32 + "abcd"})}},
        ]},
    ])
    for fmt in ("jsonl", "markdown"):
        text = store.export(sid, fmt)
        assert A32 not in text, fmt
        assert "my key is [REDACTED:openai-key]" in text
    lines = [json.loads(line) for line in store.export(sid, "jsonl").splitlines()]
    assert lines[1]["content"] == "my key is [REDACTED:openai-key]"


def test_markers_name_the_kind_and_are_idempotent() -> None:
    text = (
        "OPENAI_API_KEY=sk-" + A32 + "\nGH=ghp_" + A32 + "abcd\npostgres://u:pw123456@h/db\n"
        "Authorization: Bearer abcdef0123456789ABCDEFxyz\npassword: correct-horse-battery\n"
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n"  # a read cut off before the END line
    )
    out = redact_text(text)
    for kind in ("openai-key", "github-token", "password", "token", "secret", "private-key"):
        assert f"[REDACTED:{kind}]" in out, (kind, out)
    assert "MIIEpAIBAAKCAQEA7" not in out and redact_text(out) == out


def test_tool_results_are_redacted_in_place_unless_switched_off() -> None:
    from hermes.kernel import Config, ToolResult
    from hermes.kernel.redact import redact_tool_results

    results = [ToolResult("c1", "read_file", "KEY=sk-" + A32), ToolResult("c2", "terminal", "plain")]
    redact_tool_results(results)
    assert [r.content for r in results] == ["KEY=[REDACTED:openai-key]", "plain"]
    kept = [ToolResult("c1", "read_file", "KEY=sk-" + A32)]
    redact_tool_results(kept, Config({"security": {"redact_tool_output": False}}))
    assert kept[0].content.endswith(A32)


def test_snippets_split_by_highlights_are_still_redacted() -> None:
    from hermes.kernel.redact import redact_snippet

    assert A32 not in redact_snippet("key **sk**-" + A32 + " here")
    assert redact_snippet("the **word** here") == "the **word** here"  # highlights kept when nothing is secret


def test_config_display_masks_credentials_and_url_passwords() -> None:
    data = {
        "credentials": {"openai": ["sk-" + A32], "github": {"label": "work", "token": "ghp_" + A32 + "abcd"}},
        "model": {"base_url": "https://me:s3cr3tP4ss@llm.internal/v1", "name": "gpt"},
        "credential_pool_strategies": {"openai": "fill_first"},
        "notes": "pasted sk-" + A32,
    }
    shown = mask_secrets(data)
    assert A32 not in str(shown) and "s3cr3tP4ss" not in str(shown)
    assert shown["credentials"]["github"]["label"] == "****"  # everything under credentials
    assert shown["model"] == {"base_url": "https://me:[REDACTED:password]@llm.internal/v1", "name": "gpt"}
    assert shown["credential_pool_strategies"] == {"openai": "fill_first"}
    assert mask_secrets(["sk-" + A32], "credentials.openai") == ["sk-a..." + A32[-4:]]


def test_state_db_files_are_private(tmp_path) -> None:
    import os
    import stat

    old = tmp_path / "old.db"
    old.write_bytes(b"")
    os.chmod(old, 0o644)
    for path in (tmp_path / "new.db", old):
        store = SQLiteSessionStore(path)
        store.append_messages(store.create_session(), [{"role": "user", "content": "hi"}])
        for file in tmp_path.glob(path.name + "*"):
            if file.suffix != ".lock":
                assert stat.S_IMODE(file.stat().st_mode) == 0o600, file
        store.close()


def test_chat_display_never_writes_a_secret_split_across_stream_chunks() -> None:
    import io

    from hermes.kernel.agent import AgentEvent
    from hermes.kernel.cli._display import ChatDisplay

    out, err = io.StringIO(), io.StringIO()
    display = ChatDisplay(stream_text=True, out=out, err=err)
    secret = "sk-" + A32
    for chunk in ["Your key is ", secret[:6], secret[6:20], secret[20:], " and", " more text\nnext line"]:
        display(AgentEvent("text", chunk))
    display(AgentEvent("tool_start", "terminal", {"arguments": '{"command": "echo ' + secret + '"}'}))
    display(AgentEvent("status", "warning: " + secret))
    display.finish()
    assert A32 not in out.getvalue() + err.getvalue()
    assert "Your key is [REDACTED:openai-key] and more text\nnext line" in out.getvalue()
    assert display.showed("Your key is " + secret)
