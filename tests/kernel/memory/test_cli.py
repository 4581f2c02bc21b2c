"""``hermes memory status|show|off|on`` through the real command line."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from hermes.kernel import PluginHost
from hermes.kernel.cli import build_app


def run(*args: str):
    return CliRunner().invoke(build_app(PluginHost(load_plugins="")), list(args))


def write_entries(home: Path) -> None:
    (home / "memories").mkdir(parents=True)
    (home / "memories" / "MEMORY.md").write_text("Uses uv.\n§\nCI is GitHub Actions.\n")


def test_status_shows_providers_availability_and_usage(hermes_home: Path) -> None:
    write_entries(hermes_home)
    result = run("memory", "status")
    assert result.exit_code == 0, result.output
    assert "memory: on; external provider: none (builtin only)" in result.output
    assert "builtin" in result.output and "yes" in result.output
    data = json.loads(run("memory", "status", "--json").output)
    (builtin,) = data["providers"]
    assert data["enabled"] is True and builtin["files"]["memory"]["chars"] == len("Uses uv.\n§\nCI is GitHub Actions.")
    assert builtin["files"]["user"] == {"path": str(hermes_home / "memories" / "USER.md"), "entries": [], "chars": 0, "limit": 1375}


def test_show_prints_entries(hermes_home: Path) -> None:
    write_entries(hermes_home)
    result = run("memory", "show")
    assert result.exit_code == 0
    assert "== MEMORY.md (agent notes): 32/2,200 chars" in result.output
    assert "Uses uv.\n§\nCI is GitHub Actions.\n" in result.output and "(empty)" in result.output
    assert json.loads(run("memory", "show", "user", "--json").output)["user"]["entries"] == []
    bad = run("memory", "show", "notes")
    assert bad.exit_code == 1 and "unknown target 'notes'" in bad.output


def test_off_and_on(hermes_home: Path) -> None:
    assert "memory is off" in run("memory", "off").output
    assert "enabled: false" in (hermes_home / "config.yaml").read_text()
    assert "memory: off" in run("memory", "status").output
    assert json.loads(run("memory", "status", "--json").output)["providers"] == []
    assert run("memory", "on").output == "memory is on.\n"
    assert "memory: on" in run("memory", "status").output


def test_unknown_provider_is_one_clear_line(hermes, hermes_home: Path) -> None:
    refused = hermes("config", "set", "memory.provider", "nope")
    assert refused.returncode == 2 and "no hermes.memory_providers plugin named 'nope'" in refused.stderr
    hermes_home.mkdir(parents=True, exist_ok=True)
    (hermes_home / "config.yaml").write_text("memory:\n  provider: nope\n")  # written by hand, or uninstalled since
    result = hermes("memory", "status")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("error: no 'hermes.memory_providers' plugin named 'nope'; available: builtin")
