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


SETUP_PROVIDER = """
import json
from pathlib import Path

from hermes.kernel import MemoryProvider, active_home


class Vault(MemoryProvider):
    name = "vault"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        pass

    def get_config_schema(self):
        return [
            {"key": "token", "description": "Vault token", "secret": True, "required": True},
            {"key": "limit", "description": "Entries per recall", "type": "integer", "minimum": 1, "default": 5},
            {"key": "shared", "description": "Share across profiles", "type": "boolean", "default": "false"},
        ]

    def save_config(self, values):
        (active_home().path / "vault.json").write_text(json.dumps(values))

    def post_setup(self, hermes_home, values):
        (Path(hermes_home) / "vault-ready").write_text(str(sorted(values)))
"""


def test_setup_of_an_entry_point_provider_walks_its_schema(fake_dists, hermes_home: Path, monkeypatch) -> None:
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "hermes-vault")
    fake_dists.add("hermes-vault", {"hermes.memory_providers": {"vault": "hermes_vault:Vault"}}, {"hermes_vault": SETUP_PROVIDER})
    runner = CliRunner()
    app = build_app(PluginHost(load_plugins="hermes-vault"))
    # A missing required secret and an out-of-range number are asked again; nothing is written until all are valid.
    result = runner.invoke(app, ["memory", "setup", "vault"], input="\nvt-secret-1\n0\n7\nyes\n")
    assert result.exit_code == 0, result.output
    assert "token: it is required" in result.output and "limit: the minimum is 1" in result.output
    assert "VAULT_TOKEN=vt-secret-1" in (hermes_home / ".env").read_text()
    assert json.loads((hermes_home / "vault.json").read_text()) == {"limit": 7, "shared": True}
    assert (hermes_home / "vault-ready").read_text() == "['limit', 'shared']"
    assert "provider: vault" in (hermes_home / "config.yaml").read_text()
    # Run again without a new token: Enter keeps the secret already in .env.
    again = runner.invoke(app, ["memory", "setup", "vault", "--no-activate", "--set", "limit=3"], input="\nno\n")
    assert again.exit_code == 0, again.output
    assert "VAULT_TOKEN=vt-secret-1" in (hermes_home / ".env").read_text()
    assert json.loads((hermes_home / "vault.json").read_text()) == {"limit": 3, "shared": False}
    bad = runner.invoke(app, ["memory", "setup", "vault", "--set", "limit=many"])
    # (main() prints a HermesError as one `error:` line; under CliRunner it is the result's exception)
    assert bad.exit_code == 1 and "expected a whole number; nothing was saved" in str(bad.exception)
    unknown = runner.invoke(app, ["memory", "setup", "vault", "--set", "colour=red"])
    assert unknown.exit_code == 1 and "KEY one of token, limit, shared" in str(unknown.exception)
