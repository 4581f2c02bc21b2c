"""open_model_client builds the client as configured; RetryPolicy reads and checks ``retries``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes.kernel import ProviderError, RetryPolicy
from hermes.kernel.config import Config, load_config
from hermes.kernel.errors import ConfigError, PluginLoadError
from hermes.kernel.home import HermesHome
from hermes.kernel.providers.client import open_model_client
from hermes.kernel.testing import ScriptedProvider
from hermes.plugins.credential_strategies import FillFirst, RoundRobin

PROVIDERS, STRATEGIES = "hermes.model_providers", "hermes.credential_strategies"


class Local(ScriptedProvider):
    env_key = "LOCAL_KEY"
    env_base_url = "LOCAL_BASE_URL"


class Bare(ScriptedProvider):
    """No environment variables of its own (env_key and env_base_url are None)."""


class Drivers:
    """A plugin host with fixed drivers that records which ones were asked for."""

    def __init__(self, drivers: dict[tuple[str, str], Any]) -> None:
        self.drivers = drivers
        self.asked: list[tuple[str, str]] = []

    def driver(self, group: str, name: str) -> Any:
        self.asked.append((group, name))
        return self.drivers[(group, name)]


def drivers(provider: Any = Local, name: str = "local") -> Drivers:
    return Drivers({(PROVIDERS, name): provider, (STRATEGIES, "fill_first"): FillFirst,
                    (STRATEGIES, "round_robin"): RoundRobin()})


def home_with(hermes_home: Path, config: str) -> HermesHome:
    home = HermesHome(hermes_home, "default").ensure()
    home.config_path.write_text(config, encoding="utf-8")
    return home


def sleeper(seconds: float) -> None:
    raise AssertionError("never called here")


CONFIGURED = """\
model:
  provider: local
  base_url: http://127.0.0.1:9/v1
  timeout: 7.5
  prompt_caching: false
retries: {max_attempts: 5, base_delay: 0.25, max_delay: 4, max_retry_after: 9}
credentials:
  local: [sk-config-aaaaaaaaaaaaaaaa]
  other: [sk-other-bbbbbbbbbbbbbbbbb]
credential_pool: {rate_limit_cooldown: 11, billing_cooldown: 22, auth_cooldown: 33, lease_ttl: 44}
credential_pool_strategies: {local: round_robin}
pricing: {models: {m-1: {input: 1, output: 2}}}
"""


def test_every_setting_reaches_the_client_and_its_pool(hermes_home: Path) -> None:
    home = home_with(hermes_home, CONFIGURED)
    host = drivers()
    client = open_model_client(host, load_config(home, environ={}), home,  # type: ignore[arg-type]
                               environ={"LOCAL_KEY": "sk-env-cccccccccccccccccc"}, sleep=sleeper)
    assert host.asked == [(PROVIDERS, "local"), (STRATEGIES, "round_robin")]
    assert (client.name, client.provider_class, client.sleep) == ("local", Local, sleeper)
    assert (client.base_url, client.timeout, client.options) == ("http://127.0.0.1:9/v1", 7.5, {"prompt_caching": False})
    assert client.retry == RetryPolicy(max_attempts=5, base_delay=0.25, max_delay=4.0, max_retry_after=9.0)
    assert client.pricing == {"m-1": {"input": 1, "output": 2}}
    pool = client.pool
    assert pool is not None and pool.provider == "local" and pool.store.path == home.auth_path
    assert isinstance(pool.strategy, RoundRobin)  # an instance is used as it is
    assert pool.cooldowns == {"rate_limit": 11.0, "billing": 22.0, "auth": 33.0} and pool.lease_ttl == 44.0
    assert pool.env_name == "LOCAL_KEY"
    assert [(c.key, c.label, c.source) for c in pool.credentials()] == [
        ("sk-config-aaaaaaaaaaaaaaaa", "config-1", "config"), ("sk-env-cccccccccccccccccc", "LOCAL_KEY", "env")]


def assert_defaults(client: Any, host: Drivers) -> None:
    assert host.asked == [(PROVIDERS, "local"), (STRATEGIES, "fill_first")]
    assert client.name == "local" and client.provider_class is Local
    assert (client.base_url, client.timeout, client.options) == (None, 600.0, {"prompt_caching": True})
    assert client.retry == RetryPolicy() == RetryPolicy(max_attempts=3, base_delay=1.0, max_delay=30.0,
                                                        max_retry_after=60.0)
    assert client.pricing == {}
    assert isinstance(client.pool.strategy, FillFirst)  # a class is instantiated
    assert client.pool.cooldowns == {"rate_limit": 60.0, "billing": 3600.0, "auth": 300.0}
    assert client.pool.lease_ttl == 900.0 and client.pool.credentials() == []


@pytest.mark.parametrize("data", [
    {"model": {"provider": "local"}},
    # Explicit nulls (a hand-edited file, a plugin's own Config) mean the defaults too.
    {"model": {"provider": "local", "base_url": None}, "credentials": None, "credential_pool": None,
     "credential_pool_strategies": None, "pricing": None},
    {"model": {"provider": "local"}, "pricing": {"models": None}},
], ids=["absent", "null", "null-models"])
def test_a_bare_config_gets_the_schema_defaults(hermes_home: Path, data: dict[str, Any]) -> None:
    home = HermesHome(hermes_home, "default").ensure()
    host = drivers()
    assert_defaults(open_model_client(host, Config(data), home, environ={}), host)  # type: ignore[arg-type]


def test_the_loaded_defaults_equal_the_bare_fallbacks(hermes_home: Path) -> None:
    home = home_with(hermes_home, "model:\n  provider: local\n")
    host = drivers()
    assert_defaults(open_model_client(host, load_config(home, environ={}), home, environ={}), host)  # type: ignore[arg-type]


def test_an_explicit_provider_wins_over_model_provider(hermes_home: Path) -> None:
    home = home_with(hermes_home, CONFIGURED)
    host = drivers(Bare, "other")
    client = open_model_client(host, load_config(home, environ={}), home, provider="other", environ={})  # type: ignore[arg-type]
    assert host.asked == [(PROVIDERS, "other"), (STRATEGIES, "fill_first")]
    assert client.name == "other" and client.provider_class is Bare
    assert [c.key for c in client.pool.credentials()] == ["sk-other-bbbbbbbbbbbbbbbbb"]
    assert client.pool.env_name == "OTHER_API_KEY"  # no env_key declared: named after the provider


def test_base_url_comes_from_config_then_the_providers_variable(hermes_home: Path, monkeypatch) -> None:
    home = HermesHome(hermes_home, "default").ensure()
    bare = Config({"model": {"provider": "local"}})
    configured = Config({"model": {"provider": "local", "base_url": "http://configured/v1"}})
    env = {"LOCAL_BASE_URL": "http://from-env/v1"}
    assert open_model_client(drivers(), bare, home, environ=env).base_url == "http://from-env/v1"  # type: ignore[arg-type]
    assert open_model_client(drivers(), configured, home, environ=env).base_url == "http://configured/v1"  # type: ignore[arg-type]
    assert open_model_client(drivers(), bare, home, environ={"LOCAL_BASE_URL": ""}).base_url is None  # type: ignore[arg-type]
    # Without an explicit environ the process environment is read, and only when one is given it is not.
    monkeypatch.setenv("LOCAL_BASE_URL", "http://process/v1")
    monkeypatch.setenv("LOCAL_KEY", "sk-process-dddddddddddddddd")
    client = open_model_client(drivers(), bare, home)  # type: ignore[arg-type]
    assert client.base_url == "http://process/v1"
    assert [c.key for c in client.pool.credentials()] == ["sk-process-dddddddddddddddd"]
    assert open_model_client(drivers(), bare, home, environ={}).base_url is None  # type: ignore[arg-type]
    # A provider without a base-URL variable reads none (os.environ.get(None) would raise).
    assert open_model_client(drivers(Bare), bare, home).base_url is None  # type: ignore[arg-type]


@pytest.mark.parametrize("found", [lambda **kw: None, dict, "hermes.plugins.openai_provider:OpenAIProvider"],
                         ids=["function", "other-class", "string"])
def test_a_driver_that_is_no_provider_class_is_a_load_error(hermes_home: Path, found: Any) -> None:
    home = HermesHome(hermes_home, "default").ensure()
    with pytest.raises(PluginLoadError) as caught:
        open_model_client(drivers(found), Config({"model": {"provider": "local"}}), home, environ={})  # type: ignore[arg-type]
    assert str(caught.value) == (
        "'hermes.model_providers' plugin 'local' failed to load: does not name a hermes.kernel.ModelProvider subclass")
    assert (caught.value.group, caught.value.name) == (PROVIDERS, "local")


# --- RetryPolicy -------------------------------------------------------------------


def test_retries_section_is_read_with_defaults_for_what_is_missing() -> None:
    assert RetryPolicy.from_config({}) == RetryPolicy()
    policy = RetryPolicy.from_config({"max_attempts": "5", "base_delay": "0.5", "max_delay": 8, "max_retry_after": "12"})
    assert policy == RetryPolicy(max_attempts=5, base_delay=0.5, max_delay=8.0, max_retry_after=12.0)
    assert [type(v) for v in (policy.max_attempts, policy.base_delay, policy.max_delay, policy.max_retry_after)] == [
        int, float, float, float]
    assert RetryPolicy.from_config({"max_delay": 2}) == RetryPolicy(max_delay=2.0)


@pytest.mark.parametrize("section", [None, [], "3", 3])
def test_retries_that_is_not_a_mapping_is_one_clear_line(section: Any) -> None:
    with pytest.raises(ConfigError) as caught:
        RetryPolicy.from_config(section)
    assert str(caught.value) == "retries must be a mapping (max_attempts, base_delay, max_delay, max_retry_after)"


@pytest.mark.parametrize("key", ["max_attempts", "base_delay", "max_delay", "max_retry_after"])
@pytest.mark.parametrize("value", ["three", None, [1]])
def test_retries_values_must_be_numbers(key: str, value: Any) -> None:
    with pytest.raises(ConfigError) as caught:
        RetryPolicy.from_config({key: value})
    assert str(caught.value) == "retries.* must be numbers"
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


@pytest.mark.parametrize("section,ok", [
    ({"max_attempts": 0}, False), ({"max_attempts": 1}, True),
    ({"base_delay": -0.1}, False), ({"base_delay": 0}, True), ({"base_delay": 0.5}, True),
    ({"max_delay": -0.1}, False), ({"max_delay": 0}, True), ({"max_delay": 0.5}, True),
])
def test_retries_bounds(section: dict[str, Any], ok: bool) -> None:
    if ok:
        assert RetryPolicy.from_config(section) == RetryPolicy(**{k: type(getattr(RetryPolicy, k))(v)
                                                                    for k, v in section.items()})
        return
    with pytest.raises(ConfigError) as caught:
        RetryPolicy.from_config(section)
    assert str(caught.value) == "retries.max_attempts must be at least 1 and delays not negative"


def test_delay_doubles_is_capped_and_jitters_into_the_upper_half() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0)
    assert [policy.delay(n, rng=lambda: 1.0) for n in (0, 1, 2, 3, 4)] == [1.0, 1.0, 2.0, 4.0, 5.0]
    assert [policy.delay(n, rng=lambda: 0.0) for n in (1, 2, 3, 4)] == [0.5, 1.0, 2.0, 2.5]
    assert policy.delay(2, rng=lambda: 0.5) == 1.5


def test_retry_after_is_a_floor_up_to_its_limit() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0, max_retry_after=60.0)
    told = ProviderError("rate_limit", "slow down", retry_after=60.0)
    assert policy.delay(1, told, rng=lambda: 0.0) == 60.0  # exactly the limit is still waited for
    assert policy.delay(3, ProviderError("rate_limit", "x", retry_after=0.5), rng=lambda: 1.0) == 4.0
    assert policy.delay(1, ProviderError("rate_limit", "x", retry_after=60.5), rng=lambda: 0.0) is None
    assert policy.delay(1, ProviderError("server_error", "x"), rng=lambda: 0.0) == 0.5
