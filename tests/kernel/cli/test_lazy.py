"""Built-in commands load lazily, yet help, dispatch and plugin commands behave as before."""

from __future__ import annotations

import subprocess
import sys

import typer
from typer.testing import CliRunner

from hermes.kernel import PluginHost, hookimpl
from hermes.kernel.cli import BUILTIN_COMMANDS, build_app


def test_static_help_matches_each_command() -> None:
    host = PluginHost(load_plugins="")
    group = typer.main.get_command(build_app(host))
    ctx = group.make_context("hermes", ["--help"], resilient_parsing=True)
    for name, spec in BUILTIN_COMMANDS.items():
        command = group.get_command(ctx, name)
        assert command is not None, name
        first_line = (command.help or "").strip().splitlines()[0]
        assert first_line == spec.help, f"{name}: update BUILTIN_COMMANDS to {first_line!r}"


def test_help_lists_builtins_and_plugin_commands_without_importing_them() -> None:
    probe = (
        "import sys\n"
        "from hermes.kernel.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('hermes.kernel.cli.') and m[18:] in "
        f"{sorted(spec.module[1:] for spec in BUILTIN_COMMANDS.values())!r}))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    for name in BUILTIN_COMMANDS:
        assert f"\n  {name} " in result.stdout
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_plugin_command_beside_lazy_ones() -> None:
    class Plugin:
        @hookimpl
        def register_commands(self, app):
            @app.command("hi")
            def hi() -> None:
                """Say hi."""
                typer.echo("hi!")

    host = PluginHost(load_plugins="")
    host.register(Plugin())
    app = build_app(host)
    runner = CliRunner()
    help_text = runner.invoke(app, ["--help"]).output
    assert "hi " in help_text and "Say hi." in help_text and "doctor" in help_text
    assert runner.invoke(app, ["hi"]).output == "hi!\n"
    assert runner.invoke(app, ["config", "path"]).exit_code == 0
    assert "No such command" in runner.invoke(app, ["nope"]).output
