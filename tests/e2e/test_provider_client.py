"""The full provider stack as the agent loop uses it: config -> plugin host -> ModelClient -> real SDK -> fake server."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes.kernel import ModelRequest, ModelResponse, PluginHost, ProviderError
from hermes.kernel.config import load_config
from hermes.kernel.credentials import AuthStore
from hermes.kernel.home import HermesHome
from hermes.kernel.providers.client import open_model_client
from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401

KEY_A, KEY_B = "sk-first-aaaaaaaaaaaaaaaa", "sk-second-bbbbbbbbbbbbbbb"


def client_for(server: FakeModelServer, hermes_home: Path, provider: str, extra: str = ""):
    home = HermesHome(hermes_home, "default").ensure()
    url = server.openai_base_url if provider == "openai" else server.base_url
    home.config_path.write_text(
        f"model:\n  provider: {provider}\n  base_url: {url}\n  timeout: 5\n"
        f"retries:\n  max_attempts: 2\n  base_delay: 0.01\n{extra}", encoding="utf-8")
    store = AuthStore(home.auth_path)
    store.add(provider, KEY_A, "a", 0)
    store.add(provider, KEY_B, "b", 0)
    return open_model_client(PluginHost(load_plugins=""), load_config(home, environ={}), home, environ={})


@pytest.mark.parametrize("provider,model", [("openai", "gpt-4o"), ("anthropic", "claude-sonnet-4-6")])
@pytest.mark.parametrize("stream", [False, True])
def test_rate_limited_key_rotates_over_http(fake_model_server: FakeModelServer, hermes_home: Path,
                                            provider: str, model: str, stream: bool) -> None:
    client = client_for(fake_model_server, hermes_home, provider)
    fake_model_server.fault("rate_limit", retry_after=30).fault("server_error").reply("through")
    request = ModelRequest(model=model, messages=[{"role": "user", "content": "hi"}])
    response = list(client.stream(request))[-1] if stream else client.complete(request)
    assert isinstance(response, ModelResponse) and response.text == "through"
    assert [r.api_key for r in fake_model_server.requests] == [KEY_A, KEY_B, KEY_B]
    assert response.cost.status == "estimated"
    # The next request stays on the working key (fill_first, A is cooling down for the 30 s it was told).
    client.complete(request)
    assert fake_model_server.requests[-1].api_key == KEY_B


def test_timeout_is_retried_then_reported(fake_model_server: FakeModelServer, hermes_home: Path) -> None:
    client = client_for(fake_model_server, hermes_home, "openai", "  max_retry_after: 1\n")
    client.timeout = 0.3
    fake_model_server.fault("hang", seconds=3).fault("hang", seconds=3)
    with pytest.raises(ProviderError) as caught:
        client.complete(ModelRequest(model="gpt-4o", messages=[{"role": "user", "content": "hi"}]))
    assert caught.value.reason == "timeout" and len(fake_model_server.requests) == 2
    assert KEY_A not in str(caught.value)
