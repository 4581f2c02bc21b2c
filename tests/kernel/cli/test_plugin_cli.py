"""``hermes plugin list|enable|disable`` and ``hermes doctor`` over fake distributions."""

from __future__ import annotations

import json

import pytest
import yaml

HELLO = """
import typer
from hermes.kernel import hookimpl

@hookimpl
def register_commands(app):
    @app.command("wave")
    def wave():
        '''Wave at the user.'''
        typer.echo("~wave~")
"""


@pytest.fixture
def wave_plugin(fake_dists):
    fake_dists.add(
        "hermes-wave",
        {"hermes.plugins": {"wave": "hermes_wave"}, "hermes.tools": {"waver": "hermes_wave:TOOL"}},
        {"hermes_wave": HELLO + "\nTOOL = None\n"},
        version="0.3.0",
    )
    return {"HERMES_LOAD_PLUGINS": "hermes-wave"}


def test_list_shows_group_name_distribution_version(hermes, wave_plugin) -> None:
    rows = json.loads(hermes("plugin", "list", "--json", env=wave_plugin).stdout)
    assert [(r["group"], r["name"], r["distribution"], r["version"], r["enabled"]) for r in rows] == [
        ("hermes.plugins", "wave", "hermes-wave", "0.3.0", True),
        ("hermes.tools", "waver", "hermes-wave", "0.3.0", True),
    ]
    table = hermes("plugin", "list", env=wave_plugin).stdout
    assert "hermes-wave" in table and "0.3.0" in table


def test_load_plugins_env_hides_third_party(hermes, wave_plugin) -> None:
    assert json.loads(hermes("plugin", "list", "--json").stdout) == []
    assert "wave" not in hermes("--help").stdout
    assert "wave" in hermes("--help", env=wave_plugin).stdout


def test_disable_enable_round_trip(hermes, wave_plugin, hermes_home) -> None:
    assert hermes("wave", env=wave_plugin).stdout == "~wave~\n"
    result = hermes("plugin", "disable", "wave", env=wave_plugin)
    assert result.returncode == 0 and "next time" in result.stdout
    assert yaml.safe_load((hermes_home / "config.yaml").read_text())["plugins"]["disabled"] == ["wave"]
    assert hermes("wave", env=wave_plugin).returncode != 0
    rows = json.loads(hermes("plugin", "list", "--json", env=wave_plugin).stdout)
    assert {r["name"]: r["enabled"] for r in rows} == {"wave": False, "waver": True}
    assert "already disabled" in hermes("plugin", "disable", "wave", env=wave_plugin).stdout
    assert hermes("plugin", "enable", "wave", env=wave_plugin).returncode == 0
    assert hermes("wave", env=wave_plugin).stdout == "~wave~\n"
    # A distribution name disables everything it ships.
    hermes("plugin", "disable", "hermes-wave", env=wave_plugin)
    rows = json.loads(hermes("plugin", "list", "--json", env=wave_plugin).stdout)
    assert not any(r["enabled"] for r in rows)


def test_unknown_plugin_name_is_one_clear_line(hermes, wave_plugin) -> None:
    for command in ("enable", "disable", "remove"):
        result = hermes("plugin", command, "nosuch", env=wave_plugin)
        assert result.returncode == 1
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith("error: no installed plugin named 'nosuch'; known: ")
        assert line.endswith("(see `hermes plugin list --all`)")
        assert {"hermes-wave", "wave", "waver"} <= set(line.split("known: ")[1].split(" (")[0].split(", "))


def test_broken_plugin_shows_in_list_and_doctor_and_does_not_stop_hermes(hermes, fake_dists) -> None:
    fake_dists.add("hermes-broken", {"hermes.plugins": {"broken": "hermes_broken"}}, {"hermes_broken": "raise RuntimeError('kaput')\n"})
    fake_dists.add("hermes-badtool", {"hermes.tools": {"bad": "hermes_badtool:T"}}, {"hermes_badtool": "import nope_nope\n"})
    env = {"HERMES_LOAD_PLUGINS": "hermes-broken,hermes-badtool", "OPENAI_API_KEY": "sk-test"}
    assert hermes("config", "path", env=env).returncode == 0  # still runs
    rows = {r["name"]: r for r in json.loads(hermes("plugin", "list", "--json", env=env).stdout)}
    assert rows["broken"]["error"] == "RuntimeError: kaput"
    assert rows["bad"]["error"] == "ModuleNotFoundError: No module named 'nope_nope'"
    doctor = hermes("doctor", env=env)
    assert doctor.returncode == 1
    assert "problem: plugin hermes.plugins:broken: RuntimeError: kaput" in doctor.stdout
    assert "2 problem(s) found" in doctor.stdout
    report = json.loads(hermes("doctor", "--json", env=env).stdout)
    assert report["ok"] is False and {p["name"] for p in report["plugins"] if p["error"]} == {"broken", "bad"}


def test_doctor_reports_home_profile_and_config(hermes, hermes_home) -> None:
    result = hermes("doctor", env={"OPENAI_API_KEY": "sk-test"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert str(hermes_home) in result.stdout and "profile default" in result.stdout
    assert "not created yet" in result.stdout and "everything looks fine" in result.stdout
    hermes_home.mkdir(exist_ok=True)
    (hermes_home / "config.yaml").write_text("agent: [\n")
    broken = hermes("doctor", "--json")
    assert broken.returncode == 1
    report = json.loads(broken.stdout)
    assert "config.yaml line" in report["config_error"] and report["ok"] is False


def test_secrets_in_plugin_errors_are_redacted_in_logs(hermes, fake_dists) -> None:
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2
    fake_dists.add("hermes-leaky", {"hermes.plugins": {"leaky": "hermes_leaky"}},
                   {"hermes_leaky": f"raise RuntimeError('could not auth with {secret}')\n"})
    result = hermes("config", "path", env={"HERMES_LOAD_PLUGINS": "hermes-leaky"})
    assert result.returncode == 0
    assert "could not load hermes.plugins plugin 'leaky'" in result.stderr
    assert secret not in result.stderr and "with [REDACTED:openai-key]" in result.stderr
