"""Keys, settings and per-key limits of ``hermes serve``, without a server."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes.kernel.config import DEFAULTS, Config, read_config_file
from hermes.kernel.errors import ConfigError, HermesError
from hermes.kernel.home import HermesHome
from hermes.plugins.serve.keys import add_key, hash_key, load_keys, match_key, revoke_key
from hermes.plugins.serve.settings import ServeSettings
from hermes.plugins.serve.limits import KeyLimits, LimitExceeded


def settings(tmp_path: Path, **serve) -> ServeSettings:
    return ServeSettings.from_config(Config({**DEFAULTS, "serve": {**DEFAULTS["serve"], **serve}}), HermesHome(tmp_path, "default"))


def test_a_key_is_stored_only_as_its_hash_and_matches_in_constant_time(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    plain = add_key(path, "app", requests_per_minute=5)
    stored = read_config_file(path)["serve"]["api_keys"]
    assert plain not in path.read_text() and stored[0]["sha256"] == hash_key(plain)
    keys = load_keys(stored)
    assert match_key(keys, plain).name == "app" and keys[0].requests_per_minute == 5
    assert match_key(keys, plain + "x") is None and match_key(keys, None) is None
    with pytest.raises(HermesError, match="a key named 'app' exists"):
        add_key(path, "app")
    with pytest.raises(HermesError, match="invalid key name"):
        add_key(path, "has space")
    with pytest.raises(HermesError, match="--rpm must be 0"):
        add_key(path, "neg", requests_per_minute=-1)
    revoke_key(path, "app")
    assert read_config_file(path)["serve"]["api_keys"] == []
    with pytest.raises(HermesError, match=r"no key named 'app' \(keys: none\)"):
        revoke_key(path, "app")


def test_malformed_key_entries_name_the_entry() -> None:
    with pytest.raises(ConfigError, match=r"serve.api_keys\[0\] needs a name and a sha256"):
        load_keys([{"name": "x"}])
    with pytest.raises(ConfigError, match="must be a list"):
        load_keys("hk-plain")
    with pytest.raises(ConfigError, match=r"serve.api_keys\[0\].cost_per_day must be a number"):
        load_keys([{"name": "x", "sha256": "ab", "cost_per_day": "lots"}])


@pytest.mark.parametrize(("key", "value", "message"), [
    ("max_concurrent", 0, "serve.max_concurrent must be a number from 1 to 1024"),
    ("drain_timeout", "soon", "serve.drain_timeout must be a number"),
    ("approvals", "ask", "serve.approvals must be one of refuse, allow-list"),
    ("allowed_commands", "git *", "serve.allowed_commands must be a list"),
])  # fmt: skip
def test_bad_settings_are_one_line_naming_the_key(tmp_path: Path, key: str, value: object, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        settings(tmp_path, **{key: value})
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_approvals_refuse_or_follow_the_allow_list(tmp_path: Path) -> None:
    assert settings(tmp_path).approver() is None
    approve = settings(tmp_path, approvals="allow-list", allowed_commands=["git push origin *"]).approver()
    assert approve("git push origin main", "reason") and not approve("git push --force upstream", "reason")
    assert settings(tmp_path).workspace == tmp_path / "workspace"


def test_requests_per_minute_slide_and_cost_per_day_accumulates(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    add_key(path, "two", requests_per_minute=2, cost_per_day=0.5)
    key = load_keys(read_config_file(path)["serve"]["api_keys"])[0]
    limits = KeyLimits(settings(tmp_path))
    limits.check(key, now=100.0)
    limits.check(key, now=110.0)
    with pytest.raises(LimitExceeded) as busy:
        limits.check(key, now=120.0)
    assert busy.value.status == 429 and busy.value.retry_after == 40
    limits.check(key, now=160.5)  # the first request left the window
    limits.add_cost(key, 0.3)
    limits.check(key, now=300.0)
    limits.add_cost(key, 0.3)
    with pytest.raises(LimitExceeded) as broke:
        limits.check(key, now=400.0)
    assert broke.value.status == 429 and "$0.6000 today" in broke.value.message
    unlimited = KeyLimits(settings(tmp_path))
    for second in range(100):
        unlimited.check(None, now=float(second))  # no key, default 0: unlimited
