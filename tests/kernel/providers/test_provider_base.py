"""The ModelProvider base: its settings, its repr, its classification, and a stream without a response."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hermes.kernel import CanonicalUsage, ModelProvider, ModelRequest, ModelResponse, ProviderError, StreamDelta
from hermes.kernel.providers.base import final_response


class Bare(ModelProvider):
    def complete(self, request: ModelRequest) -> ModelResponse:
        raise NotImplementedError

    def stream(self, request: ModelRequest) -> Iterator[StreamDelta]:
        raise NotImplementedError


def test_settings_are_kept_and_options_copied() -> None:
    options = {"max_tokens_field": "max_tokens"}
    provider = Bare(api_key="sk-secret-0123456789", base_url="http://127.0.0.1:9/v1", timeout=5.0, options=options)
    options["max_tokens_field"] = "changed"
    assert (provider.api_key, provider.base_url, provider.timeout, provider.options) == (
        "sk-secret-0123456789", "http://127.0.0.1:9/v1", 5.0, {"max_tokens_field": "max_tokens"})
    default = Bare()
    assert (default.api_key, default.base_url, default.timeout, default.options) == (None, None, 600.0, {})


def test_repr_names_the_class_and_endpoint_never_the_key() -> None:
    assert repr(Bare(api_key="sk-secret-0123456789", base_url="http://h/v1")) == "Bare(base_url='http://h/v1')"


def test_the_default_classify_is_the_shared_table() -> None:
    error = Bare().classify(ConnectionResetError("reset"))
    assert (error.reason, error.message) == ("server_error", "the connection was dropped before the response completed")


def test_a_stream_without_a_response_is_a_retryable_format_error() -> None:
    with pytest.raises(ProviderError) as caught:
        final_response(iter([StreamDelta(text="half")]))
    error = caught.value
    assert (error.reason, error.message, error.retryable) == (
        "format_error", "the stream ended without a response", True)
    assert str(error) == "format_error: the stream ended without a response"


def test_the_last_response_of_a_drained_stream_is_returned() -> None:
    first = ModelResponse(message={"role": "assistant", "content": "a"}, finish_reason="stop", usage=CanonicalUsage())
    last = ModelResponse(message={"role": "assistant", "content": "b"}, finish_reason="stop", usage=CanonicalUsage())
    assert final_response(iter([StreamDelta(text="a"), first, StreamDelta(text="b"), last])) is last
