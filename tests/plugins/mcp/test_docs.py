"""docs/mcp.md covers every ``mcp`` config key and every ``hermes mcp`` command."""

from __future__ import annotations

from pathlib import Path

from hermes.kernel.cli.mcp_cmd import app
from hermes.kernel.config import DEFAULTS

DOC = (Path(__file__).resolve().parents[3] / "docs" / "mcp.md").read_text(encoding="utf-8")
SERVER_KEYS = ("command", "args", "env", "cwd", "url", "headers", "transport", "enabled", "timeout",
               "connect_timeout", "include", "exclude", "parallel_safe")  # fmt: skip


def test_every_config_key_is_documented() -> None:
    section = DEFAULTS["mcp"]
    keys = [k for k in section if k not in ("servers", "sampling")] + [f"sampling.{k}" for k in section["sampling"]]
    for key in keys:
        assert key.split(".")[-1] + ":" in DOC, f"docs/mcp.md does not document mcp.{key}"
    for key in SERVER_KEYS:
        assert f"`{key}`" in DOC, f"docs/mcp.md does not document the server key {key}"


def test_every_command_is_documented() -> None:
    for command in app.registered_commands:
        assert f"hermes mcp {command.name}" in DOC, f"docs/mcp.md does not show `hermes mcp {command.name}`"
