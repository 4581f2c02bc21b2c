"""ModelClient: retries with backoff, rotation across keys, cost, leases; in process."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from hermes.kernel import (
    CredentialPool,
    CredentialsExhaustedError,
    ModelClient,
    ModelRequest,
    ModelResponse,
    ProviderError,
    RetryPolicy,
    StreamDelta,
)
from hermes.kernel.home import HermesHome
from hermes.kernel.testing import Fault, Reply, Script
from hermes.kernel.testing.provider import ScriptedProvider
from hermes.plugins.credential_strategies import FillFirst

REQUEST = ModelRequest(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def make_client(hermes_home: Path, script: Script, keys: list[str], *, attempts: int = 3, clock=None):
    calls: list[str | None] = []

    class Recording(ScriptedProvider):
        def __init__(self, **kwargs):
            super().__init__(script=script, **kwargs)

        def _next(self, request):
            calls.append(self.api_key)
            return super()._next(request)

    pool = CredentialPool("openai", home=HermesHome(hermes_home, "default"), strategy=FillFirst(),
                          config_keys=keys, environ={}, clock=clock or Clock())
    sleeps: list[float] = []
    client = ModelClient("openai", Recording, pool, retry=RetryPolicy(max_attempts=attempts, base_delay=0.5),
                         sleep=sleeps.append)
    return client, calls, sleeps


def test_retries_with_backoff_then_succeeds(hermes_home: Path, caplog) -> None:
    script = Script([Fault("server_error"), Fault("overloaded"), Reply("fine")])
    client, calls, sleeps = make_client(hermes_home, script, ["sk-aaaaaaaaaaaaaaaaaaaa"])
    with caplog.at_level(logging.DEBUG, logger="hermes"):
        response = client.complete(REQUEST)
    assert response.text == "fine" and len(calls) == 3
    assert len(sleeps) == 2 and 0.25 <= sleeps[0] <= 0.5 and 0.5 <= sleeps[1] <= 1.0  # jittered, doubling
    attempts = [r.getMessage() for r in caplog.records if "attempt" in r.getMessage()]
    assert any("attempt 1" in m and "server_error" in m for m in attempts)
    assert any("attempt 2" in m and "overloaded" in m for m in attempts)
    assert any("attempt 3" in m and "ok" in m for m in attempts)
    assert all("sk-aaaa" not in r.getMessage() for r in caplog.records)


def test_gives_up_after_max_attempts(hermes_home: Path) -> None:
    client, calls, sleeps = make_client(hermes_home, Script([Fault("server_error")] * 5), ["sk-aaaaaaaaaaaaaaaaaaaa"],
                                        attempts=2)
    with pytest.raises(ProviderError) as caught:
        client.complete(REQUEST)
    assert caught.value.reason == "server_error" and len(calls) == 2 and len(sleeps) == 1


def test_non_retryable_is_raised_at_once(hermes_home: Path) -> None:
    client, calls, sleeps = make_client(hermes_home, Script([Fault("context_overflow", limit=8192)]),
                                        ["sk-aaaaaaaaaaaaaaaaaaaa"])
    with pytest.raises(ProviderError) as caught:
        client.complete(REQUEST)
    assert caught.value.should_compress and caught.value.context_limit == 8192
    assert len(calls) == 1 and sleeps == []


def test_retry_after_is_honoured_and_too_long_waits_are_not_slept(hermes_home: Path) -> None:
    client, calls, sleeps = make_client(hermes_home, Script([Fault("overloaded", retry_after=4), Reply("ok")]),
                                        ["sk-aaaaaaaaaaaaaaaaaaaa"])
    client.complete(REQUEST)
    assert sleeps == [4.0]
    client, calls, sleeps = make_client(hermes_home, Script([Fault("overloaded", retry_after=600)]),
                                        ["sk-bbbbbbbbbbbbbbbbbbbb"])
    with pytest.raises(ProviderError):
        client.complete(REQUEST)
    assert sleeps == [] and len(calls) == 1


def test_rotation_does_not_use_up_the_next_keys_retries(hermes_home: Path) -> None:
    # Key A is rate limited without reset information: retried once, then cooled 60 s and rotated;
    # key B then fails twice transiently and succeeds on its third attempt.
    clock = Clock()
    script = Script([Fault("rate_limit"), Fault("rate_limit"), Fault("server_error"), Fault("server_error"),
                     Reply("made it")])
    client, calls, sleeps = make_client(hermes_home, script, ["sk-aaaaaaaaaaaaaaaaaaaa", "sk-bbbbbbbbbbbbbbbbbbbb"],
                                        attempts=3, clock=clock)
    assert client.complete(REQUEST).text == "made it"
    assert calls == ["sk-aaaaaaaaaaaaaaaaaaaa"] * 2 + ["sk-bbbbbbbbbbbbbbbbbbbb"] * 3
    assert len(sleeps) == 3  # one backoff on A, two on B; rotation itself does not wait
    state = client.pool.statuses()[0][1]
    assert state["reason"] == "rate_limit" and state["exhausted_until"] == clock.now + 60


def test_rate_limit_cooldown_follows_what_the_provider_said(hermes_home: Path) -> None:
    clock = Clock()
    keys = ["sk-aaaaaaaaaaaaaaaaaaaa", "sk-bbbbbbbbbbbbbbbbbbbb"]
    client, calls, sleeps = make_client(hermes_home, Script([Fault("rate_limit", retry_after=7), Reply("b")]), keys,
                                        clock=clock)
    assert client.complete(REQUEST).text == "b" and calls == keys and sleeps == []
    assert client.pool.statuses()[0][1]["exhausted_until"] == clock.now + 7
    # retry-after: 0 means now, not an hour: the single key is retried at once and stays usable.
    client, calls, sleeps = make_client(hermes_home, Script([Fault("rate_limit", retry_after=0), Reply("ok")]),
                                        ["sk-cccccccccccccccccccc"], clock=clock)
    assert client.complete(REQUEST).text == "ok" and sleeps[0] < 1.0 and len(calls) == 2
    assert client.pool.statuses()[0][1] == {}


def test_success_clears_error_state_even_when_the_stream_is_not_drained(hermes_home: Path) -> None:
    client, calls, _ = make_client(hermes_home, Script([Fault("rate_limit", retry_after=1), Reply("fine")]),
                                   ["sk-aaaaaaaaaaaaaaaaaaaa"])
    for item in client.stream(REQUEST):
        if isinstance(item, ModelResponse):
            break  # the agent stops at the response, as call_with_stream does
    assert client.pool.statuses()[0][1] == {}


def test_billing_rotates_at_once_and_cools_an_hour(hermes_home: Path) -> None:
    clock = Clock()
    client, calls, sleeps = make_client(hermes_home, Script([Fault("billing"), Reply("b")]),
                                        ["sk-aaaaaaaaaaaaaaaaaaaa", "sk-bbbbbbbbbbbbbbbbbbbb"], clock=clock)
    assert client.complete(REQUEST).text == "b" and len(calls) == 2 and sleeps == []
    assert client.pool.statuses()[0][1]["exhausted_until"] == clock.now + 3600


def test_single_key_401_is_retried_once_then_named_without_a_cooldown(hermes_home: Path) -> None:
    client, calls, _ = make_client(hermes_home, Script([Fault("auth"), Fault("auth")]), ["sk-aaaaaaaaaaaaaaaaaaaa"])
    with pytest.raises(ProviderError) as caught:
        client.complete(REQUEST)
    message = str(caught.value)
    assert caught.value.reason == "auth" and len(calls) == 2
    assert "config-1" in message and "sk-a...aaaa" in message and "hermes auth add openai" in message
    assert "sk-aaaaaaaaaaaaaaaaaaaa" not in message
    assert client.pool.statuses()[0][1] == {}  # nothing locks the only key: the next run tries it again


def test_auth_failure_rotates_and_all_exhausted_is_a_clear_error(hermes_home: Path) -> None:
    clock = Clock()
    script = Script([Fault("auth"), Fault("auth"), Fault("billing")])
    client, calls, _ = make_client(hermes_home, script, ["sk-aaaaaaaaaaaaaaaaaaaa", "sk-bbbbbbbbbbbbbbbbbbbb"],
                                   clock=clock)
    with pytest.raises(ProviderError) as caught:
        client.complete(REQUEST)
    assert caught.value.reason == "billing" and len(calls) == 3
    with pytest.raises(CredentialsExhaustedError) as exhausted:
        client.complete(REQUEST)
    message = str(exhausted.value)
    assert "all 2 openai keys are cooling down" in message and "hermes auth reset openai" in message
    assert "sk-aaaa" not in message
    assert exhausted.value.should_fallback and not exhausted.value.retryable
    clock.now += 301  # the 401 cooldown is five minutes; the 402 one an hour
    assert client.complete(REQUEST).text == "OK"
    assert calls[-1] == "sk-aaaaaaaaaaaaaaaaaaaa"


def test_single_key_rate_limit_retries_then_clears_its_cooldown(hermes_home: Path) -> None:
    script = Script([Fault("rate_limit", retry_after=2), Reply("ok")])
    client, calls, sleeps = make_client(hermes_home, script, ["sk-aaaaaaaaaaaaaaaaaaaa"])
    assert client.complete(REQUEST).text == "ok"
    assert sleeps == [2.0]
    assert client.pool.statuses()[0][1] == {}  # success proved the key usable again


def test_streaming_retries_only_before_the_first_delta(hermes_home: Path) -> None:
    client, calls, _ = make_client(hermes_home, Script([Fault("server_error"), Reply("one two three")]),
                                   ["sk-aaaaaaaaaaaaaaaaaaaa"])
    items = list(client.stream(REQUEST))
    assert [i.text for i in items if isinstance(i, StreamDelta)] == ["one ", "two ", "three"]
    assert isinstance(items[-1], ModelResponse) and items[-1].cost.status == "estimated"
    assert len(calls) == 2


def test_every_response_is_priced(hermes_home: Path) -> None:
    client, _, _ = make_client(hermes_home, Script([Reply("x", cost_usd=0.5)]), ["sk-aaaaaaaaaaaaaaaaaaaa"])
    assert client.complete(REQUEST).cost.status == "actual"
    unknown = client.complete(ModelRequest(model="mystery-model", messages=[{"role": "user", "content": "x"}]))
    assert unknown.cost.status == "unknown" and unknown.cost.amount_usd is None


def test_leased_key_is_preferred_by_its_session(hermes_home: Path) -> None:
    client, calls, _ = make_client(hermes_home, Script(), ["sk-aaaaaaaaaaaaaaaaaaaa", "sk-bbbbbbbbbbbbbbbbbbbb"])
    first, second = client.lease(), client.lease()
    assert first.credential.key != second.credential.key  # two sessions spread over two keys
    client.complete(REQUEST, lease=second)
    assert calls == ["sk-bbbbbbbbbbbbbbbbbbbb"]
    first.release()
    second.release()


def test_unknown_failures_are_retried_exactly_once(hermes_home: Path) -> None:
    client, calls, _ = make_client(hermes_home, Script([Fault("unknown")] * 3), ["sk-aaaaaaaaaaaaaaaaaaaa"], attempts=5)
    with pytest.raises(ProviderError) as caught:
        client.complete(REQUEST)
    assert caught.value.reason == "unknown" and len(calls) == 2
