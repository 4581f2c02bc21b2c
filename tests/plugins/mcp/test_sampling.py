"""Sampling limits: off by default, a token cap, a rate limit, usage recorded."""

from __future__ import annotations

from typing import Any

import pytest

from hermes.kernel import CanonicalUsage, Config, ModelResponse, ToolContext
from hermes.plugins.mcp.sampling import Sampler
from hermes.plugins.mcp.settings import GlobalSettings


class FakeClient:
    def __init__(self) -> None:
        self.requests: list[Any] = []

    def complete(self, request: Any) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse({"role": "assistant", "content": "sampled"}, "stop", CanonicalUsage(input_tokens=7, output_tokens=3))


class FakeStore:
    def __init__(self) -> None:
        self.usage: list[tuple[str, Any]] = []

    def record_usage(self, session_id: str, usage: Any, cost: Any = None) -> None:
        self.usage.append((session_id, usage))


def sampler(**sampling: Any) -> tuple[Sampler, FakeClient, FakeStore]:
    settings = GlobalSettings.from_config({"sampling": sampling})
    s = Sampler(settings, Config({"model": {"name": "main-model"}}), None)
    client, store = FakeClient(), FakeStore()
    s._client = client
    s.bind(ToolContext(session_id="s1", services={"store": store}))
    return s, client, store


PARAMS = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5000,
          "systemPrompt": "be brief"}  # fmt: skip


def test_sampling_is_refused_unless_enabled() -> None:
    s, client, _ = sampler()
    with pytest.raises(RuntimeError, match="mcp.sampling.enabled"):
        s("srv", PARAMS)
    assert client.requests == []


def test_a_request_is_capped_sent_to_the_model_and_accounted() -> None:
    s, client, store = sampler(enabled=True, max_tokens_cap=64)
    answer = s("srv", PARAMS)
    assert answer == {"text": "sampled", "model": "main-model", "stop_reason": "endTurn"}
    (request,) = client.requests
    assert request.max_tokens == 64 and request.model == "main-model"
    assert request.messages == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    assert store.usage == [("s1", CanonicalUsage(input_tokens=7, output_tokens=3))]


def test_requests_per_minute_is_enforced() -> None:
    s, client, _ = sampler(enabled=True, requests_per_minute=2, model="small")
    s("srv", PARAMS)
    s("srv", PARAMS)
    with pytest.raises(RuntimeError, match="2 requests per minute"):
        s("srv", PARAMS)
    assert len(client.requests) == 2 and client.requests[0].model == "small"


def test_on_a_server_sampling_goes_through_the_agents_client_wrapper(tmp_path) -> None:
    # hermes serve passes its meter as the wrapper: a key at its limit gets no sampled call.
    from hermes.kernel import CLIENT_WRAPPER_SERVICE

    class LimitExceeded(Exception):
        pass

    s, client, store = sampler(enabled=True)
    wrapped: list[Any] = []

    class Refusing:
        def __init__(self, inner: Any) -> None:
            wrapped.append(inner)

        def complete(self, request: Any) -> Any:
            raise LimitExceeded("the key's cost limit is spent")

    s.bind(ToolContext(session_id="s1", services={"store": store, CLIENT_WRAPPER_SERVICE: Refusing}))
    with pytest.raises(LimitExceeded):
        s("srv", PARAMS)
    assert wrapped == [client] and client.requests == [] and store.usage == []


def test_the_turns_route_is_used_unwrapped_with_its_lease_and_sampling_model_overrides_its_model() -> None:
    from types import SimpleNamespace

    from hermes.kernel import CLIENT_WRAPPER_SERVICE
    from hermes.kernel.tools import ROUTE_SERVICE

    class RouteClient(FakeClient):
        name = "anthropic"

        def complete(self, request: Any, *, lease: Any = None) -> ModelResponse:
            self.leases = [*getattr(self, "leases", []), lease]
            return super().complete(request)

    s, own, store = sampler(enabled=True)
    route_client = RouteClient()
    route = SimpleNamespace(client=route_client, model="claude-x", lease="key-1")
    wrapped: list[Any] = []
    s.bind(ToolContext(session_id="s1", services={"store": store, ROUTE_SERVICE: route,
                                                   CLIENT_WRAPPER_SERVICE: lambda c: wrapped.append(c) or c}))  # fmt: skip
    assert s("srv", PARAMS)["model"] == "claude-x"
    assert [r.model for r in route_client.requests] == ["claude-x"] and route_client.leases == ["key-1"]
    assert own.requests == [] and wrapped == []  # the agent's client is metered already: never wrapped twice
    s.settings = GlobalSettings.from_config({"sampling": {"enabled": True, "model": "small"}})
    s("srv", PARAMS)
    assert route_client.requests[-1].model == "small"
    assert len(store.usage) == 2
