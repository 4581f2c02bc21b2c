"""Layered config: defaults < config.yaml < .env / environment < CLI flags."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hermes.kernel import ConfigError, HermesHome, load_config
from hermes.kernel.config import (
    DEFAULTS,
    parse_value,
    read_config_file,
    read_dotenv,
    set_config_value,
    set_dotenv_value,
)


@pytest.fixture
def home(tmp_path: Path) -> HermesHome:
    return HermesHome(tmp_path / "h", "default").ensure()


def test_defaults_when_nothing_is_configured(home: HermesHome) -> None:
    config = load_config(home, environ={})
    assert config.get("agent.max_iterations") == DEFAULTS["agent"]["max_iterations"] == 90
    assert config.get("context.engine") == "compressor"
    assert config.get("missing.key", "fallback") == "fallback"
    with pytest.raises(ConfigError, match="no config key 'missing.key'"):
        config.get("missing.key")


def test_each_layer_overrides_the_one_below(home: HermesHome) -> None:
    home.config_path.write_text("agent:\n  max_iterations: 10\nmodel:\n  provider: anthropic\n  name: from-file\n")
    home.env_path.write_text("HERMES_MODEL__NAME=from-dotenv\nHERMES_CONTEXT__ENGINE=masking\n")
    environ = {"HERMES_CONTEXT__ENGINE": "from-env", "HERMES_AGENT__MAX_ITERATIONS": "12"}
    config = load_config(home, environ=environ, overrides={"model.provider": "openai", "model.base_url": None})
    assert config.get("model.provider") == "openai"  # CLI flag beats the file
    assert config.get("model.base_url") is None  # an unset flag masks nothing
    assert config.get("model.name") == "from-dotenv"  # .env beats the file
    assert config.get("context.engine") == "from-env"  # the environment beats .env
    assert config.get("agent.max_iterations") == 12  # YAML-typed
    assert config.get("compression.threshold") == 0.5  # defaults fill the rest


def test_environment_ignores_unknown_sections_and_reserved_names(home: HermesHome) -> None:
    config = load_config(home, environ={"HERMES_HOME": "/x", "HERMES_NOPE__X": "1", "HERMES_LOAD_PLUGINS": ""})
    assert "nope" not in config.as_dict() and "home" not in config.as_dict()


def test_malformed_yaml_names_file_and_line(home: HermesHome) -> None:
    home.config_path.write_text("model:\n  provider: openai\n  name: [unclosed\nagent: {}\n")
    with pytest.raises(ConfigError) as err:
        load_config(home, environ={})
    assert str(home.config_path) in str(err.value) and "line " in str(err.value)
    assert err.value.exit_code == 2


def test_top_level_must_be_a_mapping(home: HermesHome) -> None:
    home.config_path.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        read_config_file(home.config_path)


def test_plugins_disabled_must_be_a_list(home: HermesHome) -> None:
    home.config_path.write_text("config_version: 1\nplugins:\n  disabled: {a: 1}\n")
    with pytest.raises(ConfigError, match="plugins.disabled: .* is not allowed; use a list"):
        load_config(home, environ={}).disabled_plugins
    home.config_path.write_text("plugins:\n  disabled: hello, other\n")  # a v0 file: names become a list
    assert load_config(home, environ={}).disabled_plugins == ["hello", "other"]


def test_dotenv_parsing(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("# comment\nexport A=1\nB='two words'\nC=\"x#y\"\nD=plain # trailing comment\n\nE=\n")
    assert read_dotenv(env) == {"A": "1", "B": "two words", "C": "x#y", "D": "plain", "E": ""}
    env.write_text("not a pair\n")
    with pytest.raises(ConfigError, match="line 1"):
        read_dotenv(env)


def test_dotenv_written_atomically_with_mode_0600(home: HermesHome) -> None:
    home.env_path.write_text("KEEP=me\nOPENAI_API_KEY=old\n")
    set_dotenv_value(home.env_path, "OPENAI_API_KEY", "sk-new value")
    set_dotenv_value(home.env_path, "OTHER", "x")
    assert stat.S_IMODE(os.stat(home.env_path).st_mode) == 0o600
    assert read_dotenv(home.env_path) == {"KEEP": "me", "OPENAI_API_KEY": "sk-new value", "OTHER": "x"}
    assert [p.name for p in home.path.iterdir() if p.name.endswith(".tmp")] == []
    with pytest.raises(ConfigError):
        set_dotenv_value(home.env_path, "BAD", "two\nlines")


def test_parse_value_is_yaml_typed() -> None:
    assert parse_value("40") == 40
    assert parse_value("0.5") == 0.5
    assert parse_value("true") is True
    assert parse_value("[a, b]") == ["a", "b"]
    assert parse_value("null") is None
    assert parse_value("gpt-4o") == "gpt-4o"
    assert parse_value("{unbalanced") == "{unbalanced"


_segment = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
_scalar = st.one_of(
    st.integers(-10**6, 10**6),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=20),
)


@settings(max_examples=60, deadline=None)
@example(assignments=[(["a"], [0]), (["a", "a"], None)])  # a block list under a key that becomes a section
@given(
    assignments=st.lists(
        st.tuples(st.lists(_segment, min_size=1, max_size=3), st.one_of(_scalar, st.lists(_scalar, max_size=3))),
        min_size=1,
        max_size=6,
    )
)
def test_set_then_get_round_trips(tmp_path_factory: pytest.TempPathFactory, assignments) -> None:
    """Whatever is set last under a key reads back, and config.yaml stays loadable."""
    home = HermesHome(tmp_path_factory.mktemp("h"), "default").ensure()
    expected: dict[str, object] = {}
    for parts, value in assignments:
        key = ".".join(parts)
        set_config_value(home.config_path, key, value)
        # Setting a key replaces any value at a prefix or under it.
        expected = {k: v for k, v in expected.items() if not (k.startswith(key + ".") or key.startswith(k + "."))}
        expected[key] = value
    config = load_config(home, environ={})
    for key, value in expected.items():
        if key.split(".")[0] in DEFAULTS and isinstance(DEFAULTS[key.split(".")[0]], dict) and key.count(".") == 0:
            continue  # replacing a whole default section merges with the defaults
        assert config.get(key) == value
    assert stat.S_IMODE(os.stat(home.config_path).st_mode) == 0o600
