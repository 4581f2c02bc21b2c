"""The credential pool's exact values: messages, boundaries, what a strategy sees, what auth.json holds."""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from hermes.kernel import CredentialPool, CredentialsExhaustedError, NoCredentialsError, ProviderError
from hermes.kernel.credentials import AuthStore, Credential, CredentialStatus, CredentialStrategy, env_key_for, key_id
from hermes.kernel.errors import ConfigError, HermesError
from hermes.kernel.home import HermesHome
from hermes.plugins.credential_strategies import FillFirst

A, B, C = "sk-aaaaaaaaaaaaaaaaaaaa", "sk-bbbbbbbbbbbbbbbbbbbb", "sk-cccccccccccccccccccc"
T0 = 1_800_000_000.0  # 2027-01-15 08:00:00 UTC


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Recording(CredentialStrategy):
    """Picks the first candidate and keeps every list of candidates it was shown."""

    def __init__(self) -> None:
        self.seen: list[list[CredentialStatus]] = []

    def choose(self, candidates: Sequence[CredentialStatus]) -> CredentialStatus:
        self.seen.append(list(candidates))
        return candidates[0]


def home_of(path: Path) -> HermesHome:
    return HermesHome(path, "default")


def pool(path: Path, keys=(A, B), *, strategy=None, clock=None, **kw) -> CredentialPool:
    kw.setdefault("environ", {})
    return CredentialPool("openai", home=home_of(path), strategy=strategy or FillFirst(),
                          config_keys=list(keys) if isinstance(keys, tuple) else keys, clock=clock or Clock(), **kw)


def auth_json(path: Path) -> dict:
    return json.loads(home_of(path).auth_path.read_text(encoding="utf-8"))


@pytest.fixture
def utc_plus_5_30() -> Iterator[None]:
    # A local time that is not UTC, so a message that forgot the time zone shows a different hour.
    before = os.environ.get("TZ")
    os.environ["TZ"] = "IST-5:30"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


# --- names and errors -----------------------------------------------------------------------


class Declares:
    env_key = "MY_OWN_KEY"


class DeclaresNothing:
    env_key = None


@pytest.mark.parametrize("provider,cls,expected", [
    ("openai", None, "OPENAI_API_KEY"),
    ("anthropic", None, "ANTHROPIC_API_KEY"),
    ("my-local-llm", None, "MY_LOCAL_LLM_API_KEY"),
    ("my-local-llm", DeclaresNothing, "MY_LOCAL_LLM_API_KEY"),
    ("openai", Declares, "MY_OWN_KEY"),
])
def test_env_key_for(provider: str, cls, expected: str) -> None:
    assert env_key_for(provider, cls) == expected


def test_no_credentials_error_names_the_fix_and_does_not_rotate(hermes_home: Path) -> None:
    with pytest.raises(NoCredentialsError) as caught:
        pool(hermes_home, keys=[], env_name="MY_KEY").select()
    error = caught.value
    assert str(error) == "openai auth: no API key for openai; add one with `hermes auth add openai` or set MY_KEY"
    assert error.provider == "openai" and error.reason == "auth"
    assert error.should_rotate_credential is False


def cred(key: str, label: str) -> Credential:
    return Credential("openai", key, label, "config")


def test_exhausted_error_says_which_keys_why_and_until_when(utc_plus_5_30: None) -> None:
    cooling = [(cred(A, "work"), {"exhausted_until": T0 + 90.0, "reason": "rate_limit"}),
               (cred(B, "home"), {"exhausted_until": T0 + 0.5})]  # an older auth.json: no reason
    error = CredentialsExhaustedError("openai", cooling, T0)
    assert error.message == (
        "all 2 openai keys are cooling down: work (rate_limit, 90s left), home (unknown, 0s left); "
        "the first is usable again at 2027-01-15 08:00:00 UTC; see `hermes auth list` or clear with `hermes auth reset openai`")
    assert error.provider == "openai" and error.reason == "rate_limit"
    assert error.retry_after == 0.5
    assert error.retryable is False and error.should_rotate_credential is False and error.should_fallback is True


@pytest.mark.parametrize("reasons,expected", [
    (["billing"], "billing"),
    (["auth", "auth"], "auth"),
    (["rate_limit"], "rate_limit"),
    (["auth", "billing"], "rate_limit"),  # a mix reads as a rate limit
    (["billing", "billing", "rate_limit"], "rate_limit"),
    ([None], "rate_limit"),
])
def test_exhausted_error_reason_is_the_one_every_key_shares(reasons: list, expected: str) -> None:
    cooling = [(cred(f"sk-{i}-xxxxxxxxxxxxxxxxxx", f"k{i}"), {"exhausted_until": T0 + 10 * (i + 1), "reason": r})
               for i, r in enumerate(reasons)]
    error = CredentialsExhaustedError("openai", cooling, T0)
    assert error.reason == expected and error.retry_after == 10.0


def test_select_with_every_key_cooling_names_the_provider(hermes_home: Path) -> None:
    clock = Clock()
    p = pool(hermes_home, keys=[A], clock=clock)
    p.mark_exhausted(p.credentials()[0], ProviderError("billing", "pay", status=402))
    with pytest.raises(CredentialsExhaustedError) as caught:
        p.select()
    assert caught.value.message.startswith("all 1 openai keys are cooling down: config-1 (billing, 3600s left); ")
    assert caught.value.reason == "billing" and caught.value.provider == "openai"


# --- cooldowns --------------------------------------------------------------------------------


def test_a_cooldown_ends_exactly_at_its_time(hermes_home: Path) -> None:
    clock = Clock()
    p = pool(hermes_home, clock=clock)
    a = p.credentials()[0]
    assert p.mark_exhausted(a, ProviderError("rate_limit", "slow", status=429)) == 60.0
    clock.now = T0 + 59.999
    assert p.statuses() == [(a, {"exhausted_until": T0 + 60, "cooldown": 60.0, "reason": "rate_limit", "status": 429}),
                            (p.credentials()[1], {})]
    assert p.select().key == B
    clock.now = T0 + 60
    assert p.statuses()[0] == (a, {})
    assert p.state_of(a) == {}
    assert p.select().key == A


def test_a_key_without_state_is_usable_at_any_time(hermes_home: Path) -> None:
    p = pool(hermes_home, keys=[A], clock=Clock(0.0))
    assert p.select().key == A and p.statuses()[0][1] == {}


@pytest.mark.parametrize("said,expected", [(0, 0.0), (-3, 0.0), (2.5, 2.5)])
def test_what_the_provider_said_wins_zero_and_below_included(hermes_home: Path, said: float, expected: float) -> None:
    clock = Clock()
    p = pool(hermes_home, keys=[A], clock=clock)
    assert p.mark_exhausted(p.credentials()[0], ProviderError("rate_limit", "x", retry_after=said)) == expected
    assert auth_json(hermes_home)["state"][key_id(A)]["exhausted_until"] == T0 + expected


def test_other_reasons_cool_down_as_long_as_a_rate_limit(hermes_home: Path) -> None:
    p = pool(hermes_home, keys=[A], cooldowns={"rate_limit": 42.0})
    assert p.cooldowns == {"rate_limit": 42.0, "billing": 3600.0, "auth": 300.0}
    assert p.mark_exhausted(p.credentials()[0], ProviderError("server_error", "x")) == 42.0


def test_a_cooldown_is_logged_with_the_masked_key(hermes_home: Path, caplog: pytest.LogCaptureFixture) -> None:
    p = pool(hermes_home, keys=[A])
    with caplog.at_level(logging.INFO, logger="hermes.kernel.credentials.pool"):
        p.mark_exhausted(p.credentials()[0], ProviderError("billing", "pay"))
    assert [r.getMessage() for r in caplog.records] == [
        "openai key config-1 (sk-a...aaaa) cooling down for 3600s after billing"]


def test_success_after_another_process_cleared_the_key_is_no_error(hermes_home: Path) -> None:
    p = pool(hermes_home, keys=[A])
    a = p.credentials()[0]
    p.mark_exhausted(a, ProviderError("rate_limit", "x"))
    other = AuthStore(p.store.path)  # `hermes auth reset` in another process, between the check and the lock
    update = p.store.update

    def reset_first(change):
        other.update(lambda data: data["state"].clear())
        return update(change)

    p.store.update = reset_first  # type: ignore[method-assign]
    p.record_success(a)
    assert auth_json(hermes_home)["state"] == {}


def test_success_clears_only_that_keys_state_and_writes_nothing_when_there_is_none(hermes_home: Path) -> None:
    p = pool(hermes_home, keys=[A, B])
    a, b = p.credentials()
    p.record_success(a)
    assert not home_of(hermes_home).auth_path.exists()  # nothing to clear: auth.json is not even created
    p.mark_exhausted(a, ProviderError("rate_limit", "x"))
    p.mark_exhausted(b, ProviderError("rate_limit", "x"))
    before = home_of(hermes_home).auth_path.stat().st_mtime_ns
    p.record_success(a)
    assert set(auth_json(hermes_home)["state"]) == {b.id}
    after = home_of(hermes_home).auth_path.stat().st_mtime_ns
    assert after != before
    time.sleep(0.01)
    p.record_success(a)  # already clear: no write
    assert home_of(hermes_home).auth_path.stat().st_mtime_ns == after


# --- choosing -----------------------------------------------------------------------------------


def status(key: str, label: str, position: int, requests: int = 0, last_used: float = 0.0,
           leases: int = 0) -> CredentialStatus:
    return CredentialStatus(id=key_id(key), label=label, position=position, request_count=requests,
                            last_used=last_used, leases=leases)


def test_a_strategy_sees_positions_shared_counts_and_leases(hermes_home: Path) -> None:
    clock = Clock()
    rec = Recording()
    p = pool(hermes_home, keys=[A, B, C], strategy=rec, clock=clock, lease_ttl=100)
    assert p.select().key == A
    assert rec.seen[-1] == [status(A, "config-1", 0), status(B, "config-2", 1), status(C, "config-3", 2)]
    clock.now = T0 + 5
    lease = p.lease()  # on A, the first of the least-leased
    assert rec.seen[-1][0] == status(A, "config-1", 0, requests=1, last_used=T0)
    clock.now = T0 + 10
    p.select()  # only the keys no session holds are offered
    assert rec.seen[-1] == [status(B, "config-2", 1), status(C, "config-3", 2)]
    p.lease(), p.lease()  # B, then C
    clock.now = T0 + 99
    p.select()
    assert rec.seen[-1] == [status(A, "config-1", 0, requests=2, last_used=T0 + 5, leases=1),
                            status(B, "config-2", 1, requests=2, last_used=T0 + 10, leases=1),
                            status(C, "config-3", 2, requests=1, last_used=T0 + 10, leases=1)]
    clock.now = T0 + 105  # A's lease ends at T0 + 105 exactly: no longer held
    p.select()
    assert [(v.label, v.leases) for v in rec.seen[-1]] == [("config-1", 0)]
    lease.release()


def test_a_pool_without_a_strategy_says_so(hermes_home: Path) -> None:
    p = CredentialPool("openai", home=home_of(hermes_home), config_keys=[A], environ={})
    with pytest.raises(ValueError, match=r"^this pool was opened without a strategy; it cannot choose keys$"):
        p.select()


def test_a_sessions_preferred_key_wins_while_usable(hermes_home: Path) -> None:
    p = pool(hermes_home, keys=[A, B, C])
    a, b, c = p.credentials()
    assert p.select(b) is b
    p.mark_exhausted(b, ProviderError("rate_limit", "x"))
    assert p.select(b).key == A  # cooling down: the strategy picks
    assert auth_json(hermes_home)["usage"][b.id]["requests"] == 1


# --- leases -------------------------------------------------------------------------------------


def held(path: Path) -> dict:
    return auth_json(path)["leases"]


def test_a_lease_lasts_fifteen_minutes_and_renews_from_half_time(hermes_home: Path) -> None:
    clock = Clock()
    p = pool(hermes_home, keys=[A], clock=clock)
    lease = p.lease()
    assert lease.released is False and len(lease.lease_id) == 12
    assert held(hermes_home) == {key_id(A): {lease.lease_id: T0 + 900}}
    clock.now = T0 + 300
    assert lease.renew_if_due() is False  # a third of the time: not yet
    clock.now = T0 + 450
    assert lease.renew_if_due() is True  # half: renewed
    assert held(hermes_home) == {key_id(A): {lease.lease_id: T0 + 1350}}
    clock.now = T0 + 460
    assert lease.renew_if_due() is False
    lease.release()
    assert lease.released is True and held(hermes_home) == {}
    clock.now = T0 + 2000
    assert lease.renew_if_due() is False  # a released lease is never renewed
    assert held(hermes_home) == {}


def test_releasing_one_session_keeps_the_others_on_the_same_key(hermes_home: Path) -> None:
    p = pool(hermes_home, keys=[A])
    one, two = p.lease(), p.lease()
    one.release()
    assert held(hermes_home) == {key_id(A): {two.lease_id: T0 + 900}}
    one.release()  # twice is harmless
    assert held(hermes_home) == {key_id(A): {two.lease_id: T0 + 900}}


def test_leases_survive_a_doctor_fix_that_dropped_them(hermes_home: Path) -> None:
    # `hermes doctor --fix` drops stale leases; a live session still renews and releases its own cleanly.
    clock = Clock()
    p = pool(hermes_home, keys=[A], clock=clock, lease_ttl=100)
    one, two = p.lease(), p.lease()
    store = AuthStore(home_of(hermes_home).auth_path)
    store.update(lambda data: data["leases"][key_id(A)].pop(one.lease_id))
    one.release()
    assert held(hermes_home) == {key_id(A): {two.lease_id: T0 + 100}}
    store.update(lambda data: data["leases"].clear())
    clock.now = T0 + 50
    assert two.renew_if_due() is True
    assert held(hermes_home) == {key_id(A): {two.lease_id: T0 + 150}}
    store.update(lambda data: data["leases"].clear())
    two.release()
    assert held(hermes_home) == {}


def test_a_new_lease_drops_the_expired_ones_at_their_exact_end(hermes_home: Path) -> None:
    clock = Clock()
    p = pool(hermes_home, keys=[A], clock=clock, lease_ttl=100)
    old = p.lease()
    clock.now = T0 + 100
    new = p.lease()
    assert held(hermes_home) == {key_id(A): {new.lease_id: T0 + 200}}
    assert old.lease_id != new.lease_id


# --- the keys -----------------------------------------------------------------------------------


def test_keys_from_auth_json_are_labelled_and_sourced(hermes_home: Path) -> None:
    store = AuthStore(home_of(hermes_home).auth_path)
    store.update(lambda data: data["credentials"].update({
        "openai": [{"key": A}, {"key": B, "label": "work"}, {"key": C, "label": ""}],
        "anthropic": [{"key": "sk-ant-zzzzzzzzzzzzzzzz", "label": "other"}],
    }))
    p = pool(hermes_home, keys=None, environ={"OPENAI_API_KEY": " sk-env-eeeeeeeeeeeeeeee\n"})
    assert [(c.provider, c.key, c.label, c.source) for c in p.credentials()] == [
        ("openai", "sk-env-eeeeeeeeeeeeeeee", "OPENAI_API_KEY", "env"),
        ("openai", A, "key-1", "auth.json"), ("openai", B, "work", "auth.json"), ("openai", C, "key-3", "auth.json")]
    assert len(p) == 4


@pytest.mark.parametrize("raw,expected", [
    (None, []),
    ("", []),
    ([], []),
    (A, [(A, "config-1")]),
    ({"key": A, "label": "solo"}, [(A, "solo")]),
    ([{"key": A, "label": ""}, "", B], [(A, "config-1"), (B, "config-3")]),
])
def test_config_keys_in_every_accepted_shape(hermes_home: Path, raw, expected) -> None:
    creds = pool(hermes_home, keys=raw).credentials()
    assert [(c.key, c.label) for c in creds] == expected
    assert all(c.provider == "openai" and c.source == "config" for c in creds)


@pytest.mark.parametrize("raw", [[5], [{"key": 5}], [{"label": "no key"}]])
def test_config_keys_of_another_shape_are_a_config_error(hermes_home: Path, raw) -> None:
    with pytest.raises(ConfigError) as caught:
        pool(hermes_home, keys=raw).credentials()
    assert str(caught.value) == "credentials.openai entries must be keys or {key: ..., label: ...} mappings"


def test_the_process_environment_is_read_when_none_is_given(hermes_home: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", A)
    p = CredentialPool("openai", home=home_of(hermes_home), strategy=FillFirst())
    assert [(c.label, c.source) for c in p.credentials()] == [("OPENAI_API_KEY", "env")]


def test_the_key_list_is_rebuilt_only_when_a_source_changed(hermes_home: Path) -> None:
    environ = {"OPENAI_API_KEY": A}
    p = pool(hermes_home, keys=None, environ=environ)
    first = p.credentials()
    again = p.credentials()
    assert again == first and again[0] is first[0]  # the same objects: each key is hashed once
    again.append(first[0])  # a copy: the caller cannot change the pool's list
    AuthStore(home_of(hermes_home).auth_path).add("openai", B, "stored", 0)
    assert [c.key for c in p.credentials()] == [A, B]
    environ["OPENAI_API_KEY"] = C
    assert [c.key for c in p.credentials()] == [C, B]


# --- auth.json ----------------------------------------------------------------------------------


def test_key_id_is_the_first_16_hex_digits_of_the_sha256() -> None:
    assert key_id(A) == "aaf47d2ad540d88b"
    assert cred(A, "x").id == "aaf47d2ad540d88b"


def test_auth_json_layout_on_disk(hermes_home: Path) -> None:
    store = AuthStore(home_of(hermes_home).auth_path)
    store.add("openai", A, "work", 1.5)
    assert home_of(hermes_home).auth_path.read_text(encoding="utf-8") == (
        '{\n'
        '  "credentials": {\n'
        '    "openai": [\n'
        '      {\n'
        '        "added_at": 1.5,\n'
        f'        "key": "{A}",\n'
        '        "label": "work"\n'
        '      }\n'
        '    ]\n'
        '  },\n'
        '  "leases": {},\n'
        '  "state": {},\n'
        '  "usage": {},\n'
        '  "version": 1\n'
        '}\n')
    assert sorted(p.name for p in home_of(hermes_home).auth_path.parent.iterdir()
                  if p.name.startswith("auth")) == ["auth.json", "auth.json.lock"]


def test_view_is_the_cache_and_read_a_private_copy(hermes_home: Path) -> None:
    store = AuthStore(home_of(hermes_home).auth_path)
    assert store.read() == {"version": 1, "credentials": {}, "state": {}, "leases": {}, "usage": {}}
    store.add("openai", A, "work", 0)
    assert store.view() is store.view()
    copy = store.read()
    copy["credentials"]["openai"].clear()
    copy["state"]["x"] = 1
    assert store.read()["credentials"]["openai"][0]["label"] == "work" and store.view()["state"] == {}
    assert store.read() is not store.read()
    other = AuthStore(store.path)  # another process adds a key: the cache follows the file
    other.add("openai", B, "home", 0)
    assert [e["label"] for e in store.view()["credentials"]["openai"]] == ["work", "home"]


def test_a_partial_auth_json_gets_every_section(hermes_home: Path) -> None:
    path = home_of(hermes_home).auth_path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"credentials": {"openai": [{"key": A}]}}), encoding="utf-8")
    store = AuthStore(path)
    assert store.read() == {"version": 1, "credentials": {"openai": [{"key": A}]}, "state": {}, "leases": {},
                            "usage": {}}
    assert pool(hermes_home, keys=None).select().key == A


@pytest.mark.parametrize("content,message", [
    (b'{"credentials": ', "{path} is not valid JSON (line 1, column 17: Expecting value); "
                         "fix it or remove it and re-add keys with `hermes auth add`"),
    (b"[1, 2]", "{path} must hold a JSON object"),
    (b'{"label": "caf\xe9"}', "{path} is not UTF-8 text (byte 14: b'\\xe9'); re-save it as UTF-8 or remove it"),
])
def test_a_broken_auth_json_is_one_clear_line(hermes_home: Path, content: bytes, message: str) -> None:
    path = home_of(hermes_home).auth_path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    with pytest.raises(HermesError) as caught:
        AuthStore(path).view()
    assert str(caught.value) == message.format(path=path)


def test_an_unreadable_auth_json_names_the_cause(hermes_home: Path) -> None:
    path = home_of(hermes_home).auth_path
    path.mkdir(parents=True)
    with pytest.raises(HermesError) as caught:
        AuthStore(path).view()
    assert str(caught.value) == f"cannot read {path}: Is a directory; check its permissions"


def test_only_well_formed_stored_keys_count(hermes_home: Path) -> None:
    store = AuthStore(home_of(hermes_home).auth_path)
    store.update(lambda data: data["credentials"].update(
        {"openai": ["sk-bare-string", {"key": ""}, {"key": 5}, {"label": "no key"}, {"key": A, "label": "ok"}]}))
    assert store.keys("openai") == [{"key": A, "label": "ok"}]
    assert store.keys("anthropic") == []


def test_a_duplicate_key_or_label_is_refused_and_nothing_changes(hermes_home: Path) -> None:
    store = AuthStore(home_of(hermes_home).auth_path)
    store.add("openai", A, "work", 0)
    before = store.path.read_text(encoding="utf-8")
    with pytest.raises(HermesError, match=r"^that key is already stored for openai$"):
        store.add("openai", A, "other", 0)
    with pytest.raises(HermesError) as caught:
        store.add("openai", B, "work", 0)
    assert str(caught.value) == "openai already has a key labelled 'work'; choose another --label"
    assert store.path.read_text(encoding="utf-8") == before
    store.add("anthropic", B, "work", 0)  # labels are per provider
    assert [e["label"] for e in store.keys("anthropic")] == ["work"]


def test_removing_a_key_forgets_its_state_leases_and_usage(hermes_home: Path) -> None:
    store = AuthStore(home_of(hermes_home).auth_path)
    for key, label in ((A, "one"), (B, "two"), (C, "three")):
        store.add("openai", key, label, 0)
    store.add("anthropic", A, "same-key-elsewhere", 0)

    def share(data: dict) -> None:
        for key in (A, B, C):
            data["state"][key_id(key)] = {"exhausted_until": T0, "reason": "rate_limit"}
            data["leases"][key_id(key)] = {"lease": T0}
            data["usage"][key_id(key)] = {"requests": 1, "last_used": T0}

    store.update(share)
    gone = store.remove("openai", lambda pos, entry: entry["label"] == "two" or pos == 3)
    assert [e["label"] for e in gone] == ["two", "three"]
    data = auth_json(hermes_home)
    assert data["credentials"] == {"openai": [{"key": A, "label": "one", "added_at": 0}],
                                   "anthropic": [{"key": A, "label": "same-key-elsewhere", "added_at": 0}]}
    assert set(data["state"]) == set(data["leases"]) == set(data["usage"]) == {key_id(A)}
    assert store.remove("openai", lambda pos, entry: pos == 2) == []
    assert [e["label"] for e in store.remove("openai", lambda pos, entry: pos == 1)] == ["one"]
    assert store.remove("mistral", lambda pos, entry: True) == []
    assert auth_json(hermes_home)["credentials"]["openai"] == []


def test_a_hand_edited_entry_without_a_key_can_be_removed(hermes_home: Path) -> None:
    store = AuthStore(home_of(hermes_home).auth_path)
    store.add("openai", A, "good", 0)
    store.update(lambda data: data["credentials"]["openai"].append({"label": "broken"}))
    assert store.remove("openai", lambda pos, entry: entry.get("label") == "broken") == [{"label": "broken"}]
    assert store.keys("openai") == [{"key": A, "label": "good", "added_at": 0}]


def test_a_cooldown_set_while_the_clock_was_a_day_ahead_is_void_once_it_is_corrected(hermes_home: Path) -> None:
    from hermes.kernel.credentials.pool import _cooling

    assert _cooling({"exhausted_until": T0 + 60.0, "cooldown": 60.0}, T0)  # set now: cools for its minute
    assert not _cooling({"exhausted_until": T0 + 60.0, "cooldown": 60.0}, T0 + 60.0)
    # Set at T0 + 1 day by a wrong clock, read at T0: a day left of a 60 s cooldown is no cooldown.
    assert not _cooling({"exhausted_until": T0 + 86_400 + 60.0, "cooldown": 60.0}, T0)
    assert _cooling({"exhausted_until": T0 + 3_600.0, "cooldown": 3_600.0}, T0)  # a long one that is real
    assert _cooling({"exhausted_until": T0 + 86_400.0}, T0)  # an older auth.json without the length: as stored
