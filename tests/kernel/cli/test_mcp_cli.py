"""``hermes mcp``: the real command line in a subprocess, against the demo MCP server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from tests.plugins.mcp.servers import DEMO, pids

pytestmark = pytest.mark.slow


def servers(home: Path) -> dict:
    return (yaml.safe_load((home / "config.yaml").read_text()) or {}).get("mcp", {}).get("servers", {})


def test_add_list_tools_test_disable_enable_remove(hermes, hermes_home: Path, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    added = hermes("mcp", "add", "demo", "--env", f"DEMO_MARK_DIR={marks}", "--", sys.executable, str(DEMO), "stdio")
    assert added.returncode == 0, added.stderr
    assert servers(hermes_home)["demo"] == {
        "command": sys.executable, "args": [str(DEMO), "stdio"], "env": {"DEMO_MARK_DIR": str(marks)},
    }  # fmt: skip
    assert (hermes_home / "config.yaml").stat().st_mode & 0o077 == 0

    listed = hermes("mcp", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert (row["name"], row["status"], row["tools"], row["resources"], row["prompts"]) == ("demo", "ready", 10, True, 1)

    tools = hermes("mcp", "tools", "demo", "--json")
    names = [t["name"] for t in json.loads(tools.stdout)]
    assert "mcp_demo_echo" in names and len(names) == 10

    tested = hermes("mcp", "test", "demo")
    assert tested.returncode == 0, tested.stderr
    assert tested.stdout.startswith("demo: connected in ") and "10 tools" in tested.stdout and "ping" in tested.stdout
    assert all(not Path(f"/proc/{pid}").exists() for pid in pids(marks))  # every probe stopped its server

    assert hermes("mcp", "disable", "demo").returncode == 0
    started = len(pids(marks))
    (row,) = json.loads(hermes("mcp", "list", "--json").stdout)
    assert row["status"] == "disabled" and len(pids(marks)) == started  # a disabled server is not started
    assert hermes("mcp", "enable", "demo").returncode == 0
    assert servers(hermes_home)["demo"]["enabled"] is True

    removed = hermes("mcp", "remove", "demo")
    assert removed.returncode == 0 and servers(hermes_home) == {}
    empty = hermes("mcp", "list")
    assert empty.returncode == 0 and "no MCP servers configured" in empty.stdout


def test_remote_server_headers_are_masked_and_references_kept(hermes, hermes_home: Path) -> None:
    secret = "literal-secret-0123456789abcdef"
    added = hermes("mcp", "add", "gh", "--url", "http://127.0.0.1:9/mcp", "--header", "Authorization=${GH_TOKEN}",
                   "--header", f"X-Key={secret}")  # fmt: skip
    assert added.returncode == 0, added.stderr
    listed = hermes("mcp", "list", "--json")
    assert secret not in listed.stdout + listed.stderr
    (row,) = json.loads(listed.stdout)
    assert row["config"]["headers"] == {"Authorization": "${GH_TOKEN}", "X-Key": "lite...cdef"}
    assert row["status"] == "failed" and "GH_TOKEN" in row["error"] and "hermes config set GH_TOKEN" in row["error"]
    tested = hermes("mcp", "test", "gh")
    assert tested.returncode == 1 and secret not in tested.stdout + tested.stderr
    assert tested.stderr.strip().splitlines()[-1].startswith("error: MCP server 'gh' failed: ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["mcp", "add", "x"], "give either a command after --"),
        (["mcp", "add", "bad name", "--", "ls"], "invalid server name"),
        (["mcp", "add", "x", "--url", "http://h/mcp", "--env", "A=1"], "--env is for stdio servers"),
        (["mcp", "add", "x", "--url", "http://h/mcp", "--header", "novalue"], "is not KEY=VALUE"),
        (["mcp", "add", "x", "--url", "http://h/mcp", "--transport", "ws"], "--transport is http or sse"),
        (["mcp", "remove", "nope"], "no MCP server named 'nope'"),
        (["mcp", "disable", "nope"], "no MCP server named 'nope'"),
        (["mcp", "test", "nope"], "no MCP server named 'nope'"),
    ],
)
def test_mistakes_are_one_line_and_change_nothing(hermes, hermes_home: Path, args: list[str], message: str) -> None:
    result = hermes(*args)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]
    assert not (hermes_home / "config.yaml").exists() or servers(hermes_home) == {}


def test_a_second_add_of_the_same_name_needs_force(hermes, hermes_home: Path) -> None:
    assert hermes("mcp", "add", "x", "--", "one").returncode == 0
    again = hermes("mcp", "add", "x", "--", "two")
    assert again.returncode == 1 and "exists" in again.stderr and servers(hermes_home)["x"]["command"] == "one"
    assert hermes("mcp", "add", "x", "--force", "--", "two").returncode == 0
    assert servers(hermes_home)["x"]["command"] == "two"


def test_a_server_that_cannot_start_fails_its_test_with_the_reason(hermes, hermes_home: Path, tmp_path: Path) -> None:
    assert hermes("mcp", "add", "gone", "--", str(tmp_path / "missing-binary")).returncode == 0
    tested = hermes("mcp", "test", "gone")
    assert tested.returncode == 1
    assert tested.stderr.strip() == f"error: MCP server 'gone' failed: command not found: {tmp_path / 'missing-binary'}"
    listed = hermes("mcp", "list")
    assert listed.returncode == 0 and "failed" in listed.stdout


def test_config_show_masks_mcp_env_and_header_values(hermes, hermes_home: Path) -> None:
    secret = "plain-value-0123456789abcdef"
    assert hermes("mcp", "add", "s", "--env", f"DATABASE={secret}", "--env", "REF=${MY_REF}", "--", "srv").returncode == 0
    assert hermes("mcp", "add", "r", "--url", "http://h/mcp", "--header", f"X-Custom={secret}").returncode == 0
    shown = hermes("config", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    assert secret not in shown.stdout
    servers = json.loads(shown.stdout)["mcp"]["servers"]
    assert servers["s"]["env"] == {"DATABASE": "plai...cdef", "REF": "${MY_REF}"}
    assert servers["r"]["headers"] == {"X-Custom": "plai...cdef"}
