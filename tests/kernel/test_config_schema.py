"""The typed config schema, versions and migrations, through the real command line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from hermes.kernel import ConfigError
from hermes.kernel.config import DEFAULTS
from hermes.kernel.config_migrations import MIGRATIONS, migrate_data
from hermes.kernel.config_schema import CONFIG_VERSION, SCHEMA, ConfigSchema

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "config"


def _leaves(data: dict, prefix: str = "") -> list[str]:
    out = []
    for key, value in data.items():
        if isinstance(value, dict) and value:
            out += _leaves(value, f"{prefix}{key}.")
        else:
            out.append(f"{prefix}{key}")
    return out


def test_every_key_has_a_type_an_allowed_set_and_one_line() -> None:
    schema = ConfigSchema.build()
    for key in _leaves(DEFAULTS):
        spec = schema.find(key)
        assert spec is not None, f"{key} has no schema entry"
        assert spec.description and "\n" not in spec.description and spec.description.endswith(".")
        assert spec.allowed()
        assert spec.check(spec.default) == spec.default, f"{key}: its default is not allowed"
    for spec in SCHEMA:
        if spec.type in ("int", "float"):
            assert spec.min is not None or spec.max is not None, f"{spec.key} needs a range"
            with pytest.raises(ConfigError, match=spec.key.replace("*", r"\*")):
                spec.check("banana")


def test_docs_config_md_is_generated_from_the_schema(hermes) -> None:
    result = hermes("config", "schema", "--markdown")
    assert result.returncode == 0, result.stderr
    assert (ROOT / "docs" / "config.md").read_text(encoding="utf-8") == result.stdout, (
        "docs/config.md is stale: run `hermes config schema --markdown > docs/config.md`"
    )
    rows = json.loads(hermes("config", "schema", "--json").stdout)
    assert {r["key"] for r in rows} >= {s.key for s in SCHEMA}
    assert next(r for r in rows if r["key"] == "agent.max_iterations")["min"] == 1


BAD_SETS = [
    (("agent.max_iterations", "abc"), "agent.max_iterations: 'abc' is not allowed; use a whole number"),
    (("compression.threshold", "banana"), "compression.threshold: 'banana' is not allowed; use a number from 0.05 to 1"),
    (("agent.max_iterations", "0"), "agent.max_iterations: 0 is not allowed"),
    (("toolsets", "text_stats"), "toolsets: no hermes.tools plugin named 'text_stats'"),
    (("model", "5"), "model is a section, not a value"),
    (("agent.max_iterationz", "3"), "unknown config key 'agent.max_iterationz' (did you mean agent.max_iterations?)"),
    (("context.engine", "compresor"), "no hermes.context_engines plugin named 'compresor'; did you mean compressor?"),
    (("model.provider", "opnai"), "did you mean openai?"),
    (("memory.provider", "nope"), "no hermes.memory_providers plugin named 'nope'"),
    (("credential_pool_strategies.openai", "fill_frst"), "did you mean fill_first?"),
    (("memory.enabled", "maybe"), "memory.enabled: 'maybe' is not allowed; use true or false"),
]


@pytest.mark.parametrize(("args", "message"), BAD_SETS, ids=[" ".join(a) for a, _ in BAD_SETS])
def test_config_set_refuses_bad_values_and_writes_nothing(hermes, hermes_home: Path, args, message) -> None:
    assert hermes("config", "set", "agent.max_iterations", "40").returncode == 0
    before = (hermes_home / "config.yaml").read_bytes()
    result = hermes("config", "set", *args)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr and "Traceback" not in result.stderr
    assert (hermes_home / "config.yaml").read_bytes() == before
    chat = hermes("config", "get", "agent.max_iterations")
    assert chat.returncode == 0 and chat.stdout == "40\n"


def test_config_set_converts_lists_and_text(hermes, hermes_home: Path) -> None:
    assert hermes("config", "set", "toolsets", "files,terminal").returncode == 0
    assert hermes("config", "set", "skills.disabled", "[a, b]").returncode == 0
    assert hermes("config", "set", "model.name", "5").returncode == 0
    data = yaml.safe_load((hermes_home / "config.yaml").read_text())
    assert data["toolsets"] == ["files", "terminal"] and data["skills"]["disabled"] == ["a", "b"]
    assert data["model"]["name"] == "5" and data["config_version"] == CONFIG_VERSION
    result = hermes("config", "set", "model", "{provider: anthropic, name: claude}")
    assert result.returncode == 0, result.stderr
    assert hermes("config", "get", "model.provider").stdout == "anthropic\n"
    forced = hermes("config", "set", "pricing", "{models: {}}", "--force")
    assert forced.returncode == 0, forced.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("config_version: 1\nagent:\n  max_iterations: abc\n", "config.yaml: agent.max_iterations: 'abc' is not allowed"),
        ("config_version: 1\nmodel: 5\n", "config.yaml: model is a section"),
        ("config_version: 1\ncompression:\n  threshold: banana\n", "compression.threshold"),
        ("config_version: 9\n", "config_version 9 is newer than this hermes-kernel understands"),
    ],
)
def test_loading_a_bad_file_is_one_line_naming_file_and_key(hermes, hermes_home: Path, text: str, message: str) -> None:
    hermes_home.mkdir(parents=True)
    (hermes_home / "config.yaml").write_text(text)
    for args in (("chat", "-q", "hi"), ("config", "show"), ("config", "get", "model.name")):
        result = hermes(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr.count("\n") == 1 and message in result.stderr, (args, result.stderr)
    doctor = hermes("doctor")
    assert doctor.returncode == 1 and message in doctor.stdout


def test_environment_values_are_checked_too(hermes) -> None:
    result = hermes("config", "show", env={"HERMES_AGENT__MAX_ITERATIONS": "abc"})
    assert result.returncode == 2
    assert "environment HERMES_AGENT__MAX_ITERATIONS: agent.max_iterations: 'abc'" in result.stderr


def test_a_v0_file_is_migrated_on_load_with_a_dated_backup(hermes, hermes_home: Path) -> None:
    hermes_home.mkdir(parents=True)
    original = (FIXTURES / "v0.yaml").read_text()
    shutil.copy(FIXTURES / "v0.yaml", hermes_home / "config.yaml")
    result = hermes("config", "get", "toolsets", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == ["files", "terminal"]
    data = yaml.safe_load((hermes_home / "config.yaml").read_text())
    assert data["config_version"] == CONFIG_VERSION and data["plugins"]["disabled"] == ["some-plugin"]
    assert data["agent"]["max_iterations"] == 40 and data["model"]["name"] == "gpt-4o-mini"
    backups = list(hermes_home.glob("config.yaml.v0-*.bak"))
    assert len(backups) == 1 and backups[0].read_text() == original
    again = hermes("config", "migrate")
    assert again.returncode == 0 and "at version 1 already" in again.stdout
    assert len(list(hermes_home.glob("config.yaml.v0-*.bak"))) == 1


def test_config_migrate_explicitly(hermes, hermes_home: Path) -> None:
    hermes_home.mkdir(parents=True)
    shutil.copy(FIXTURES / "v0.yaml", hermes_home / "config.yaml")
    result = hermes("config", "migrate", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["from_version"] == 0 and report["version"] == CONFIG_VERSION
    assert Path(report["backup"]).read_text() == (FIXTURES / "v0.yaml").read_text()


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("v*.yaml")), ids=lambda p: p.stem)
def test_every_earlier_version_migrates_to_a_valid_config(fixture: Path) -> None:
    data = yaml.safe_load(fixture.read_text())
    upgraded, start = migrate_data(data)
    assert start == int(fixture.stem[1:]) and upgraded["config_version"] == CONFIG_VERSION
    ConfigSchema.build().validate(upgraded, strict=True)
    assert len(MIGRATIONS) == CONFIG_VERSION
    assert {int(p.stem[1:]) for p in FIXTURES.glob("v*.yaml")} == set(range(CONFIG_VERSION))
