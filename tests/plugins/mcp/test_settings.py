"""``mcp.servers`` parsing, ``${NAME}`` references and masking."""

from __future__ import annotations

import pytest

from hermes.kernel import ConfigError
from hermes.plugins.mcp.settings import GlobalSettings, expand, mask_spec, parse_servers


def test_stdio_and_remote_servers_parse_with_defaults_from_the_section() -> None:
    specs, problems = parse_servers({
        "timeout": 30,
        "servers": {
            "fs": {"command": "npx", "args": ["-y", "server-fs", "."], "env": {"A": "1"}, "exclude": ["rm"]},
            "gh": {"url": "https://example.test/mcp", "headers": {"Authorization": "Bearer ${GH}"}, "timeout": 5},
            "old": {"url": "https://example.test/sse", "transport": "sse", "enabled": False, "parallel_safe": True},
        },
    })  # fmt: skip
    assert problems == []
    fs, gh, old = specs
    assert (fs.transport, fs.command, fs.args, fs.timeout) == ("stdio", "npx", ("-y", "server-fs", "."), 30.0)
    assert fs.wants("read") and not fs.wants("rm")
    assert (gh.transport, gh.timeout, gh.connect_timeout) == ("http", 5.0, 30.0)
    assert (old.transport, old.enabled, old.parallel_safe) == ("sse", False, True)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({}, "needs `command`"),
        ({"transport": "http"}, "needs `url`"),
        ({"command": "x", "transport": "ws"}, "transport must be one of"),
        ({"command": "x", "timeout": -1}, "timeout must be a number"),
        ({"command": "x", "env": ["A=1"]}, "env must be a mapping"),
        ("npx server", "must be a mapping"),
    ],
)
def test_a_bad_server_is_one_line_and_the_others_still_load(raw: object, message: str) -> None:
    specs, problems = parse_servers({"servers": {"bad": raw, "good": {"command": "x"}}})
    assert [s.name for s in specs] == ["good"]
    assert len(problems) == 1 and problems[0].startswith("mcp.servers.bad") and message in problems[0]


def test_include_limits_tools_and_names_are_checked() -> None:
    specs, problems = parse_servers({"servers": {"a": {"command": "x", "include": ["one"]}, "b c": {"command": "x"}}})
    assert specs[0].wants("one") and not specs[0].wants("two")
    assert "server name" in problems[0]


def test_references_resolve_from_the_lookup_and_a_missing_one_names_the_fix() -> None:
    assert expand("Bearer ${TOKEN}", {"TOKEN": "abc"}, "w") == "Bearer abc"
    with pytest.raises(ConfigError, match=r"w refers to \$\{NOPE\}.*hermes config set NOPE"):
        expand("${NOPE}", {}, "w")


def test_env_and_header_values_are_masked_references_shown() -> None:
    (spec,), _ = parse_servers({"servers": {"s": {
        "url": "https://x.test", "headers": {"Authorization": "${GH_TOKEN}", "X-Key": "literal-secret-0123456789"},
    }}})  # fmt: skip
    shown = mask_spec(spec)
    assert shown["headers"] == {"Authorization": "${GH_TOKEN}", "X-Key": "lite...6789"}
    assert "literal-secret-0123456789" not in repr(shown)


def test_global_settings_validate_sampling() -> None:
    settings = GlobalSettings.from_config({"sampling": {"enabled": True, "max_tokens_cap": 50}})
    assert settings.sampling_enabled and settings.sampling_max_tokens_cap == 50
    with pytest.raises(ConfigError, match="mcp.sampling.requests_per_minute"):
        GlobalSettings.from_config({"sampling": {"requests_per_minute": -1}})
