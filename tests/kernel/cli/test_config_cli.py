"""``hermes config`` through the real command line."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import yaml


def test_set_get_show_path(hermes, hermes_home: Path) -> None:
    result = hermes("config", "set", "agent.max_iterations", "40")
    assert result.returncode == 0, result.stderr
    assert "agent.max_iterations = 40" in result.stdout
    assert hermes("config", "get", "agent.max_iterations").stdout == "40\n"
    assert hermes("config", "get", "agent.max_iterations", "--json").stdout == "40\n"
    assert yaml.safe_load((hermes_home / "config.yaml").read_text()) == {"config_version": 1, "agent": {"max_iterations": 40}}
    assert stat.S_IMODE(os.stat(hermes_home / "config.yaml").st_mode) == 0o600
    assert hermes("config", "path").stdout.strip() == str(hermes_home / "config.yaml")
    shown = json.loads(hermes("config", "show", "--json").stdout)
    assert shown["agent"]["max_iterations"] == 40 and shown["context"]["engine"] == "compressor"
    hermes("config", "set", "toolsets", "[files, terminal]")
    assert hermes("config", "get", "toolsets").stdout == "- files\n- terminal\n"


def test_environment_and_flags_layer_over_the_file(hermes) -> None:
    hermes("config", "set", "model.name", "from-file")
    assert hermes("config", "get", "model.name", env={"HERMES_MODEL__NAME": "from-env"}).stdout == "from-env\n"


def test_secrets_go_to_dotenv_and_are_masked(hermes, hermes_home: Path) -> None:
    secret = "sk-test-0123456789abcdefXYZ"
    result = hermes("config", "set", "OPENAI_API_KEY", secret)
    assert result.returncode == 0 and secret not in result.stdout
    env_file = hermes_home / ".env"
    assert env_file.read_text() == f"OPENAI_API_KEY={secret}\n"
    assert stat.S_IMODE(os.stat(env_file).st_mode) == 0o600
    got = hermes("config", "get", "OPENAI_API_KEY", env={"OPENAI_API_KEY": ""})
    assert got.stdout.strip() == "****"  # the (empty) real environment wins over .env
    got = hermes("config", "get", "OPENAI_API_KEY")
    assert secret not in got.stdout and got.stdout.strip() == "sk-t...fXYZ"
    assert hermes("config", "set", "credentials.openai", f"[{secret}]").returncode == 0
    shown = hermes("config", "show")
    assert secret not in shown.stdout and "sk-t...fXYZ" in shown.stdout


def test_malformed_config_is_one_line_exit_2(hermes, hermes_home: Path) -> None:
    hermes_home.mkdir(parents=True)
    (hermes_home / "config.yaml").write_text("model:\n  provider: [oops\n")
    result = hermes("config", "show")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and "config.yaml line " in lines[0]
    assert "Traceback" not in result.stderr


def test_unknown_key_and_bad_key(hermes) -> None:
    result = hermes("config", "get", "nope.nothing")
    assert result.returncode != 0 and "no config key 'nope.nothing'" in result.stderr
    result = hermes("config", "set", "a..b", "1")
    assert result.returncode != 0 and "invalid config key" in result.stderr
    assert "Traceback" not in result.stderr
