"""Front-ends come from the ``hermes.commands`` entry-point group: built-in ones and third parties' alike."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from hermes.kernel import PluginHost, PluginLoadError, PluginNotFoundError
from hermes.kernel.cli import BUILTIN_COMMANDS, build_app
from hermes.kernel.host import COMMANDS_GROUP

ROOT = Path(__file__).resolve().parents[3]

GREETER = '''
import typer

app = typer.Typer(help="Greet from a front-end plugin.")


@app.command()
def greet(name: str = "world") -> None:
    """Greet from a front-end plugin."""
    typer.echo(f"hello {name} from greeter")
'''


def _help_rows(output: str) -> dict[str, str]:
    """The Commands section of ``--help``: name -> help (wrapped lines joined)."""
    rows: dict[str, str] = {}
    last = ""
    for line in output.split("Commands:\n", 1)[1].splitlines():
        if line.startswith("  ") and not line.startswith("   "):
            last, _, text = line.strip().partition(" ")
            rows[last] = text.strip()
        elif line.strip():
            rows[last] += " " + line.strip()
    return rows


def test_serve_and_import_register_as_a_third_party_would() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["entry-points"][COMMANDS_GROUP] == {
        "serve": "hermes.plugins.serve.cli:app",
        "import": "hermes.compat.hermes.import_cmd:app",
    }
    assert not {"serve", "import"} & set(BUILTIN_COMMANDS)  # the kernel's table names no front-end
    assert all(spec.module.startswith(".") for spec in BUILTIN_COMMANDS.values())  # nor the compat layer


def test_help_lists_front_ends_with_their_own_help_lines(hermes) -> None:
    result = hermes("--help")
    assert result.returncode == 0 and result.stderr == ""
    rows = _help_rows(result.stdout)
    assert rows["serve"] == "Serve the agent over an OpenAI-compatible API with a dashboard (needs the serve extra)."
    assert rows["import"] == "Import history from another agent's home (Hermes Agent's state.db)."
    assert list(rows)[: len(BUILTIN_COMMANDS)] == list(BUILTIN_COMMANDS)


def test_a_disabled_front_end_is_hidden_and_cannot_run(hermes, hermes_home: Path) -> None:
    hermes_home.mkdir(parents=True)
    (hermes_home / "config.yaml").write_text("plugins:\n  disabled: [serve]\n", encoding="utf-8")
    rows = _help_rows(hermes("--help").stdout)
    assert "serve" not in rows and "import" in rows
    result = hermes("serve", "key", "list")
    assert result.returncode == 2 and "No such command 'serve'" in result.stderr


def test_a_third_party_front_end_goes_through_the_same_door(fake_dists, hermes) -> None:
    fake_dists.add("hermes-greeter", {COMMANDS_GROUP: {"greeter": "greeter_cli:app"}}, {"greeter_cli": GREETER})
    assert "greeter" not in _help_rows(hermes("--help").stdout)  # HERMES_LOAD_PLUGINS="" keeps it out
    allowed = {"HERMES_LOAD_PLUGINS": "hermes-greeter"}
    assert _help_rows(hermes("--help", env=allowed).stdout)["greeter"] == "Greet from a front-end plugin."
    ran = hermes("greeter", "--name", "Ada", env=allowed)
    assert (ran.returncode, ran.stdout) == (0, "hello Ada from greeter\n")


def test_a_broken_front_end_is_one_line_and_breaks_nothing_else(fake_dists, hermes) -> None:
    fake_dists.add("hermes-broken", {COMMANDS_GROUP: {"broken": "broken_cli:app", "odd": "odd_cli:app"}},
                   {"broken_cli": "raise RuntimeError('boom at import')\n", "odd_cli": "app = 42\n"})  # fmt: skip
    env = {"HERMES_LOAD_PLUGINS": "hermes-broken"}
    listed = hermes("--help", env=env)
    assert listed.returncode == 0
    rows = _help_rows(listed.stdout)
    assert "broken" not in rows and "odd" not in rows and {"serve", "chat", "doctor"} <= set(rows)
    assert listed.stderr.splitlines() == [
        "hermes: WARNING: 'hermes.commands' plugin 'broken' failed to load: RuntimeError: boom at import (from hermes-broken)",
        "hermes: WARNING: 'hermes.commands' plugin 'odd' failed to load: its object is of type int, not a typer.Typer or a function (from hermes-broken)",
    ]
    ran = hermes("broken", env=env)
    assert ran.returncode == 1 and "Traceback" not in ran.stderr
    assert ran.stderr.splitlines() == [
        "error: 'hermes.commands' plugin 'broken' failed to load: RuntimeError: boom at import (from hermes-broken)"
    ]
    assert hermes("config", "path", env=env).returncode == 0


def test_a_front_end_named_like_a_built_in_is_ignored(fake_dists, caplog: pytest.LogCaptureFixture) -> None:
    fake_dists.add("hermes-shadow", {COMMANDS_GROUP: {"chat": "shadow_cli:app"}}, {"shadow_cli": GREETER})
    app = build_app(PluginHost(load_plugins="hermes-shadow"))
    listed = CliRunner().invoke(app, ["--help"])
    assert _help_rows(listed.output)["chat"] == BUILTIN_COMMANDS["chat"].help
    assert "hermes.commands plugin 'chat' is ignored: a built-in command has that name" in caplog.text
    result = CliRunner().invoke(app, ["chat", "--help"])
    assert result.exit_code == 0 and "Greet from a front-end plugin." not in result.output
    assert "Chat with the agent" in result.output


def test_host_load_imports_one_entry_point_and_records_a_failure(fake_dists) -> None:
    fake_dists.add("hermes-greeter", {COMMANDS_GROUP: {"greeter": "greeter_cli:app", "gone": "no_such_module:app"}},
                   {"greeter_cli": GREETER})  # fmt: skip
    host = PluginHost(load_plugins="hermes-greeter")
    assert isinstance(host.load(COMMANDS_GROUP, "greeter"), typer.Typer)
    with pytest.raises(PluginLoadError, match=r"'gone' failed to load: ModuleNotFoundError: .*no_such_module.* \(from hermes-greeter\)"):
        host.load(COMMANDS_GROUP, "gone")
    assert host.load_failures[(COMMANDS_GROUP, "gone")].startswith("ModuleNotFoundError")
    with pytest.raises(PluginNotFoundError, match="nope"):
        host.load(COMMANDS_GROUP, "nope")
    assert PluginHost(load_plugins="", disabled=["greeter"]).available(COMMANDS_GROUP) == ["import", "serve"]
