"""The credential pool: sources, strategies, cooldowns, leases, locking."""

from __future__ import annotations

import json
import multiprocessing
import stat
import threading
from pathlib import Path

import pytest

from hermes.kernel import (
    CredentialPool,
    CredentialsExhaustedError,
    NoCredentialsError,
    PluginHost,
    PluginNotFoundError,
    ProviderError,
)
from hermes.kernel.config import load_config
from hermes.kernel.credentials import AuthStore, CredentialStatus, CredentialStrategy
from hermes.kernel.home import HermesHome
from hermes.kernel.providers.client import open_model_client
from hermes.plugins.credential_strategies import FillFirst, LeastUsed, RandomChoice, RoundRobin

A, B, C = "sk-aaaaaaaaaaaaaaaaaaaa", "sk-bbbbbbbbbbbbbbbbbbbb", "sk-cccccccccccccccccccc"


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def home_of(path: Path) -> HermesHome:
    return HermesHome(path, "default")


def pool(path: Path, keys=(A, B), strategy=None, environ=None, clock=None) -> CredentialPool:
    return CredentialPool("openai", home=home_of(path), strategy=strategy or FillFirst(), config_keys=list(keys),
                          environ=environ or {}, clock=clock or Clock())


def test_keys_from_config_environment_and_auth_json_in_order(hermes_home: Path) -> None:
    AuthStore(home_of(hermes_home).auth_path).add("openai", C, "stored", 0)
    AuthStore(home_of(hermes_home).auth_path).add("openai", A, "dup", 0)
    p = pool(hermes_home, keys=[A, {"key": B, "label": "team"}], environ={"OPENAI_API_KEY": C})
    creds = p.credentials()
    assert [(c.label, c.source) for c in creds] == [("config-1", "config"), ("team", "config"),
                                                    ("OPENAI_API_KEY", "env")]
    assert A not in repr(creds) and "sk-a...aaaa" in repr(creds[0])


def test_no_keys_names_the_fix(hermes_home: Path) -> None:
    with pytest.raises(NoCredentialsError, match="hermes auth add openai.*OPENAI_API_KEY"):
        pool(hermes_home, keys=[]).select()


def test_fill_first_stays_on_one_key(hermes_home: Path) -> None:
    p = pool(hermes_home, keys=[A, B, C])
    assert {p.select().key for _ in range(5)} == {A}


def test_strategies() -> None:
    views = [CredentialStatus(id=str(i), label=str(i), position=i, request_count=n) for i, n in enumerate([5, 1, 3])]
    assert FillFirst().choose(views).position == 0
    rr = RoundRobin()
    used = {0: 0.0, 1: 0.0, 2: 0.0}
    order = []
    for tick in range(1, 5):  # last_used is what auth.json shares between processes
        pick = rr.choose([CredentialStatus(id=str(i), label=str(i), position=i, last_used=used[i]) for i in used])
        order.append(pick.position)
        used[pick.position] = float(tick)
    assert order == [0, 1, 2, 0]
    assert LeastUsed().choose(views).position == 1
    assert {RandomChoice().choose(views).position for _ in range(200)} == {0, 1, 2}


def test_strategies_are_plugins_and_unknown_names_are_clear(hermes_home: Path) -> None:
    host = PluginHost(load_plugins="")
    assert set(host.available("hermes.credential_strategies")) >= {"fill_first", "round_robin", "random", "least_used"}
    assert host.driver("hermes.credential_strategies", "least_used") is LeastUsed
    home = home_of(hermes_home)
    home.ensure()
    home.config_path.write_text("credential_pool_strategies:\n  openai: round_robin\n", encoding="utf-8")
    client = open_model_client(host, load_config(home, environ={}), home, environ={"OPENAI_API_KEY": A})
    assert isinstance(client.pool.strategy, RoundRobin)
    home.config_path.write_text("credential_pool_strategies:\n  openai: fastest\n", encoding="utf-8")
    with pytest.raises(PluginNotFoundError, match="'hermes.credential_strategies' plugin named 'fastest'; available: fill_first"):
        open_model_client(host, load_config(home, environ={}), home, environ={})


def test_rate_limit_cools_down_a_minute_unless_the_provider_says_otherwise(hermes_home: Path) -> None:
    clock = Clock()
    p = pool(hermes_home, clock=clock)
    assert p.mark_exhausted(p.select(), ProviderError("rate_limit", "slow")) == 60
    assert p.select().key == B
    assert p.mark_exhausted(p.select(), ProviderError("rate_limit", "slow", retry_after=90)) == 90
    with pytest.raises(CredentialsExhaustedError) as caught:
        p.select()
    assert caught.value.retry_after == pytest.approx(60)
    clock.now += 61
    assert p.select().key == A  # A's default minute ended first; B waits out its 90 s


def test_billing_and_auth_cooldowns(hermes_home: Path) -> None:
    clock = Clock()
    p = pool(hermes_home, keys=[A, B, C], clock=clock)
    assert p.mark_exhausted(p.credentials()[0], ProviderError("billing", "pay")) == 3600
    # A 401 is five minutes whatever the headers say.
    assert p.mark_exhausted(p.credentials()[1], ProviderError("auth", "bad", retry_after=5)) == 300
    assert p.select().key == C
    clock.now += 301
    assert p.select().key == B
    assert p.reset() == 2
    assert p.select().key == A


def test_cooldowns_are_shared_across_pool_instances(hermes_home: Path) -> None:
    # Another process opening the same HERMES_HOME sees the cooldown (state lives in auth.json).
    clock = Clock()
    pool(hermes_home, clock=clock).mark_exhausted(pool(hermes_home).credentials()[0], ProviderError("rate_limit", "x"))
    assert pool(hermes_home, clock=clock).select().key == B
    data = json.loads(home_of(hermes_home).auth_path.read_text())
    assert A not in json.dumps(data["state"])  # state is keyed by a hash, not the key


def test_round_robin_cursor_and_request_counts_are_shared_by_processes(hermes_home: Path) -> None:
    clock = Clock()
    picks = []
    for _ in range(4):  # a fresh pool each time, as a fresh `hermes chat -q` process would open
        clock.now += 1
        picks.append(pool(hermes_home, keys=[A, B, C], strategy=RoundRobin(), clock=clock).select().key)
    assert picks == [A, B, C, A]
    usage = json.loads(home_of(hermes_home).auth_path.read_text())["usage"]
    assert sorted(v["requests"] for v in usage.values()) == [1, 1, 2]


def test_leases_renew_when_half_their_time_has_passed(hermes_home: Path) -> None:
    clock = Clock()
    p = CredentialPool("openai", home=home_of(hermes_home), strategy=FillFirst(), config_keys=[A], environ={},
                       clock=clock, lease_ttl=100)
    lease = p.lease()
    clock.now += 10
    assert not lease.renew_if_due()
    clock.now += 45
    assert lease.renew_if_due()
    (expires,) = json.loads(home_of(hermes_home).auth_path.read_text())["leases"][lease.credential.id].values()
    assert expires == clock.now + 100
    lease.release()


def test_soft_leases_spread_sessions_and_share_when_oversubscribed(hermes_home: Path) -> None:
    p = pool(hermes_home)
    one, two, three = p.lease(), p.lease(), p.lease()
    assert {one.credential.key, two.credential.key} == {A, B}
    assert three.credential.key in (A, B)  # soft: a third session still gets a key
    one.release()
    with p.lease() as four:
        assert four.credential.key == one.credential.key
    two.release()
    three.release()
    assert json.loads(home_of(hermes_home).auth_path.read_text())["leases"] == {}


def test_auth_json_is_private(hermes_home: Path) -> None:
    store = AuthStore(home_of(hermes_home).auth_path)
    store.add("openai", A, "one", 0)
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    with pytest.raises(Exception, match="already stored"):
        store.add("openai", A, "two", 0)


def test_threads_do_not_lose_updates(hermes_home: Path) -> None:
    store = AuthStore(home_of(hermes_home).auth_path)
    threads = [threading.Thread(target=store.add, args=("openai", f"sk-thread-{i:02d}-xxxxxxxxxx", f"t{i}", 0))
               for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(store.keys("openai")) == 16


def _add_keys(path: str, worker: int) -> None:
    store = AuthStore(Path(path))
    for i in range(10):
        store.add("anthropic", f"sk-ant-{worker}-{i:02d}-xxxxxxxxxx", f"w{worker}-{i}", 0)


def test_processes_do_not_lose_updates(hermes_home: Path) -> None:
    path = home_of(hermes_home).auth_path
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_add_keys, args=(str(path), w)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(20)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    assert len(AuthStore(path).keys("anthropic")) == 40


def test_custom_strategy_contract() -> None:
    class Last(CredentialStrategy):
        def choose(self, candidates):
            return max(candidates, key=lambda c: c.position)

    views = [CredentialStatus(id="a", label="a", position=0), CredentialStatus(id="b", label="b", position=1)]
    assert Last().choose(views).id == "b"
    with pytest.raises(TypeError):
        CredentialStrategy()  # type: ignore[abstract]
