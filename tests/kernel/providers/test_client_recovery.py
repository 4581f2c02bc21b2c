"""ModelClient's recovery rules, exactly: which key, how long to wait, what the user and the log read.

A small in-process provider answers from a list of steps: a text is a reply (streamed
word by word), a ProviderError is raised before any text, and ``Partial`` streams text
and then fails.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hermes.kernel import (
    CredentialPool,
    ModelClient,
    ModelRequest,
    ModelResponse,
    ProviderError,
    RetryPolicy,
    StreamDelta,
)
from hermes.kernel.credentials import AuthStore, Credential
from hermes.kernel.home import HermesHome
from hermes.kernel.providers.base import ModelProvider, StreamItem
from hermes.kernel.providers.client import _refused
from hermes.kernel.usage import CanonicalUsage, CostResult
from hermes.plugins.credential_strategies import FillFirst

REQUEST = ModelRequest(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
A, B = "sk-aaaaaaaaaaaaaaaaaaaa", "sk-bbbbbbbbbbbbbbbbbbbb"
CLIENT_LOG = "hermes.kernel.providers.client"


@dataclass(frozen=True)
class Partial:
    """Stream ``text``, then fail with ``error``."""

    text: str
    error: ProviderError


@dataclass
class Rig:
    client: ModelClient
    steps: list[Any]
    calls: list[str | None] = field(default_factory=list)  # the key of every call
    sleeps: list[float] = field(default_factory=list)
    made: list[ModelProvider] = field(default_factory=list)  # every provider instance
    closed: list[ModelProvider] = field(default_factory=list)

    def states(self) -> list[dict[str, Any]]:
        assert self.client.pool is not None
        return [state for _, state in self.client.pool.statuses()]


def rig(hermes_home: Path, steps: list[Any], keys: list[str] | None = None, *, environ: dict[str, str] | None = None,
        attempts: int = 3, pool: bool = True, **client_kw: Any) -> Rig:
    made_rig: Rig

    class Steps(ModelProvider):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            made_rig.made.append(self)

        def _step(self) -> Any:
            made_rig.calls.append(self.api_key)
            return made_rig.steps.pop(0) if made_rig.steps else "OK"

        def _response(self, text: str, request: ModelRequest) -> ModelResponse:
            return ModelResponse(message={"role": "assistant", "content": text}, finish_reason="stop",
                                 usage=CanonicalUsage(1000, 500, request_count=1), model=request.model)

        def complete(self, request: ModelRequest) -> ModelResponse:
            step = self._step()
            if isinstance(step, ProviderError):
                raise step
            return self._response(step.text if isinstance(step, Partial) else step, request)

        def stream(self, request: ModelRequest) -> Iterator[StreamItem]:
            step = self._step()
            if isinstance(step, ProviderError):
                raise step
            if isinstance(step, Partial):
                yield StreamDelta(text=step.text)
                raise step.error
            for word in step.split(" "):
                yield StreamDelta(text=word)
            yield self._response(step, request)

        def close(self) -> None:
            made_rig.closed.append(self)

    credentials = None
    if pool:
        credentials = CredentialPool("openai", home=HermesHome(hermes_home, "default"), strategy=FillFirst(),
                                     config_keys=keys or [], environ=environ or {})
    made_rig = Rig(ModelClient("openai", Steps, credentials, retry=RetryPolicy(max_attempts=attempts, base_delay=0.5),
                               sleep=lambda s: made_rig.sleeps.append(s), **client_kw), list(steps))
    return made_rig


def error(reason: str, **kw: Any) -> ProviderError:
    return ProviderError(reason, f"scripted {reason}", provider="openai", **kw)  # type: ignore[arg-type]


def client_log(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == CLIENT_LOG]


# --- which key, how long ---------------------------------------------------------------


def test_401s_are_retried_and_rotated_without_waiting(hermes_home: Path) -> None:
    two = rig(hermes_home, [error("auth", status=401), error("auth", status=401), "from b"], [A, B])
    assert two.client.complete(REQUEST).text == "from b"
    assert two.calls == [A, A, B] and two.sleeps == []
    assert two.states()[0]["reason"] == "auth" and two.states()[1] == {}
    one = rig(hermes_home / "one", [error("auth", status=401), error("auth", status=401)], [A])
    with pytest.raises(ProviderError):
        one.client.complete(REQUEST)
    assert one.calls == [A, A] and one.sleeps == []


def test_billing_is_never_retried_on_the_same_key_even_if_called_retryable(hermes_home: Path) -> None:
    # An aggregator may call a 402 retryable; only another key can help, and the only one cools an hour.
    r = rig(hermes_home, [error("billing", status=402, retryable=True), "never"], [A])
    with pytest.raises(ProviderError) as caught:
        r.client.complete(REQUEST)
    assert caught.value.reason == "billing" and r.calls == [A] and r.sleeps == []
    assert r.states()[0]["reason"] == "billing"


def test_a_single_keys_second_rate_limit_cools_it_and_retries_it(hermes_home: Path) -> None:
    r = rig(hermes_home, [error("rate_limit", status=429), error("rate_limit", status=429), error("rate_limit")], [A])
    with pytest.raises(ProviderError):
        r.client.complete(REQUEST)
    assert r.calls == [A, A, A] and len(r.sleeps) == 2
    state = r.states()[0]
    assert state["reason"] == "rate_limit" and state["exhausted_until"] - time.time() > 55  # the 60 s default


def test_an_error_that_must_not_rotate_keeps_its_key(hermes_home: Path) -> None:
    # A rate limit on the account behind every key (the provider says so): backoff on the same key.
    steps = [error("rate_limit", should_rotate_credential=False)] * 2 + ["still a"]
    r = rig(hermes_home, steps, [A, B])
    assert r.client.complete(REQUEST).text == "still a"
    assert r.calls == [A, A, A] and len(r.sleeps) == 2 and r.states() == [{}, {}]


def test_a_local_server_without_keys_gets_backoff_and_no_key_bookkeeping(hermes_home: Path) -> None:
    steps = [error("rate_limit", status=429), error("rate_limit", status=429), "local answer"]
    r = rig(hermes_home, steps, [], base_url="http://127.0.0.1:9/v1")
    assert r.client.complete(REQUEST).text == "local answer"
    assert r.calls == [None, None, None] and len(r.sleeps) == 2
    refused = rig(hermes_home / "b", [error("auth", status=401), "never"], [], base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ProviderError) as caught:
        refused.client.complete(REQUEST)
    assert caught.value.reason == "auth" and refused.calls == [None]  # no key to retry or rotate


def test_text_already_streamed_is_never_retried(hermes_home: Path) -> None:
    r = rig(hermes_home, [Partial("half an ans", error("server_error")), "again"], [A])
    items: list[Any] = []
    with pytest.raises(ProviderError) as caught:
        for item in r.client.stream(REQUEST):
            items.append(item)
    assert caught.value.reason == "server_error"
    assert items == [StreamDelta(text="half an ans")] and r.calls == [A] and r.sleeps == []


def test_the_sessions_lease_picks_the_key_when_streaming(hermes_home: Path) -> None:
    r = rig(hermes_home, ["one two"], [A, B])
    first, second = r.client.lease(), r.client.lease()
    assert (first.credential.key, second.credential.key) == (A, B)
    assert [i.text for i in r.client.stream(REQUEST, lease=second)][-1] == "one two"
    assert r.calls == [B]
    first.release()
    second.release()


def test_no_lease_without_a_pool_or_keys(hermes_home: Path) -> None:
    assert rig(hermes_home, [], pool=False).client.lease() is None
    assert rig(hermes_home, [], []).client.lease() is None


def test_configured_prices_are_used(hermes_home: Path) -> None:
    r = rig(hermes_home, ["priced"], [A], pricing={"gpt-4o": {"input": 2.0, "output": 4.0}})
    # 1000 input and 500 output tokens at 2 and 4 USD per million.
    assert r.client.complete(REQUEST).cost == CostResult(0.004, "estimated", "config")
    assert rig(hermes_home, [], [A]).client.pricing == {}


# --- one provider per key, built as configured --------------------------------------


def test_one_provider_per_key_built_with_the_clients_settings(hermes_home: Path) -> None:
    r = rig(hermes_home, [], [A, B], base_url="http://127.0.0.1:9/v1", timeout=7.0, options={"prompt_caching": False})
    leases = [r.client.lease(), r.client.lease()]
    for lease in [*leases, *leases]:
        r.client.complete(REQUEST, lease=lease)
    assert r.calls == [A, B, A, B] and [p.api_key for p in r.made] == [A, B]  # reused, not rebuilt
    assert all((p.base_url, p.timeout, p.options) == ("http://127.0.0.1:9/v1", 7.0, {"prompt_caching": False})
               for p in r.made)
    for lease in leases:
        lease.release()


def test_without_a_pool_one_keyless_provider_with_the_defaults(hermes_home: Path) -> None:
    r = rig(hermes_home, [], pool=False)
    assert (r.client.base_url, r.client.timeout, r.client.options, r.client.pricing) == (None, 600.0, {}, {})
    r.client.complete(REQUEST)
    r.client.complete(REQUEST)
    assert r.calls == [None, None] and len(r.made) == 1
    assert (r.made[0].api_key, r.made[0].base_url, r.made[0].timeout, r.made[0].options) == (None, None, 600.0, {})


def test_abort_closes_every_provider_and_survives_a_failing_close(hermes_home: Path, caplog) -> None:
    r = rig(hermes_home, [], [A, B])
    leases = [r.client.lease(), r.client.lease()]
    for lease in leases:
        r.client.complete(REQUEST, lease=lease)
    first = r.made[0]

    def broken() -> None:
        r.closed.append(first)
        raise RuntimeError("the reader is closing it too")

    first.close = broken  # type: ignore[method-assign]
    with caplog.at_level(logging.DEBUG, logger=CLIENT_LOG):
        r.client.abort()
    assert r.closed == r.made  # the second is closed although the first one's close failed
    failed = [rec for rec in caplog.records if rec.name == CLIENT_LOG]
    assert [rec.getMessage() for rec in failed] == ["closing openai during an abort failed"]
    assert failed[0].exc_info is not None and failed[0].exc_info[0] is RuntimeError
    r.client.complete(REQUEST, lease=leases[0])
    assert len(r.made) == 3  # aborted providers are never reused
    r.client.close()
    assert r.closed[-1] is r.made[2]
    r.client.complete(REQUEST, lease=leases[0])
    assert len(r.made) == 4
    for lease in leases:
        lease.release()


# --- what the user and the log read ---------------------------------------------------


@pytest.mark.parametrize("where,expected", [
    ("config", "config.yaml (config-1)"),
    ("env", "the environment or .env (OPENAI_API_KEY)"),
    ("auth.json", "auth.json (mine)"),
])
def test_a_refused_key_is_named_with_where_it_comes_from(hermes_home: Path, where: str, expected: str) -> None:
    home = HermesHome(hermes_home, "default").ensure()
    if where == "auth.json":
        AuthStore(home.auth_path).add("openai", A, "mine", 0)
    r = rig(hermes_home, [error("auth", status=401), error("auth", status=401)],
            [A] if where == "config" else [], environ={"OPENAI_API_KEY": A} if where == "env" else None)
    with pytest.raises(ProviderError) as caught:
        r.client.complete(REQUEST)
    assert str(caught.value) == (
        f"openai auth (HTTP 401): the openai key sk-a...aaaa from {expected} was refused as unauthorised twice; "
        "check it, replace it with `hermes auth add openai`, or remove it with `hermes auth remove openai LABEL`")
    assert (caught.value.status, caught.value.provider) == (401, "openai")
    assert caught.value.should_rotate_credential is False and caught.value.should_fallback is True


def test_a_key_from_elsewhere_is_named_by_its_label() -> None:
    refused = _refused("openai", Credential("openai", A, "vault-7", "keyring"), error("auth", status=401))
    assert refused.message.startswith("the openai key sk-a...aaaa from vault-7 was refused as unauthorised twice; ")


def test_the_log_tells_each_attempt_rotation_and_wait_by_key_label(hermes_home: Path, caplog) -> None:
    steps = [error("rate_limit", retry_after=7.0), error("server_error", retry_after=2.0), "fine"]
    r = rig(hermes_home, steps, [A, B])
    with caplog.at_level(logging.DEBUG, logger="hermes"):
        assert r.client.complete(REQUEST).text == "fine"
    assert client_log(caplog) == [
        "openai gpt-4o attempt 1 with key config-1: rate_limit (retryable=True rotate=True)",
        "openai: rotating from key config-1 to config-2",
        "openai gpt-4o attempt 1 with key config-2: server_error (retryable=True rotate=False)",
        "openai: retrying in 2.00s",
        "openai gpt-4o attempt 2 with key config-2: ok",
    ]
    assert r.sleeps == [2.0] and not any(A in m or B in m for m in client_log(caplog))


def test_the_log_names_no_key_as_a_dash(hermes_home: Path, caplog) -> None:
    r = rig(hermes_home, [error("server_error", retry_after=1.0)], pool=False)
    with caplog.at_level(logging.DEBUG, logger=CLIENT_LOG):
        r.client.complete(REQUEST)
    assert client_log(caplog) == [
        "openai gpt-4o attempt 1 with key -: server_error (retryable=True rotate=False)",
        "openai: retrying in 1.00s",
        "openai gpt-4o attempt 2 with key -: ok",
    ]
