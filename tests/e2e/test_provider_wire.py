"""Both built-in providers, through the real openai and anthropic SDKs over HTTP, against the fake server."""

from __future__ import annotations

import json

import pytest

from hermes.kernel import ModelRequest, ModelResponse, ProviderError, StreamDelta
from hermes.kernel.testing import FakeModelServer, ScriptedUsage, ToolCall
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from hermes.plugins.anthropic_provider import AnthropicProvider
from hermes.plugins.openai_provider import OpenAIProvider

PROVIDERS = {
    "openai": (OpenAIProvider, "gpt-4o", lambda s: s.openai_base_url),
    "anthropic": (AnthropicProvider, "claude-sonnet-4-6", lambda s: s.base_url),
}


def make(server: FakeModelServer, name: str, timeout: float = 5.0):
    cls, model, url = PROVIDERS[name]
    return cls(api_key="sk-test-0123456789abcdef", base_url=url(server), timeout=timeout), model


def run(provider, request: ModelRequest, stream: bool) -> tuple[ModelResponse, list[StreamDelta]]:
    if not stream:
        return provider.complete(request), []
    items = list(provider.stream(request))
    assert isinstance(items[-1], ModelResponse)
    assert all(isinstance(i, StreamDelta) for i in items[:-1])
    return items[-1], items[:-1]


both = pytest.mark.parametrize("name", sorted(PROVIDERS))
modes = pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])


@both
@modes
def test_text_reply_with_cached_usage(fake_model_server: FakeModelServer, name: str, stream: bool) -> None:
    provider, model = make(fake_model_server, name)
    fake_model_server.reply("Hello from the fake model", usage=ScriptedUsage(
        input_tokens=120, cache_read_tokens=880, cache_write_tokens=0, output_tokens=7))
    request = ModelRequest(model=model, messages=[{"role": "system", "content": "Be brief."},
                                                  {"role": "user", "content": "hi"}])
    response, deltas = run(provider, request, stream)
    assert response.text == "Hello from the fake model"
    assert response.finish_reason == "stop"
    assert response.message["role"] == "assistant"
    # Cached tokens are never counted as fresh input, whichever way the vendor reports them.
    assert (response.usage.input_tokens, response.usage.cache_read_tokens, response.usage.output_tokens) == (120, 880, 7)
    assert response.usage.request_count == 1
    if stream:
        assert "".join(d.text for d in deltas) == "Hello from the fake model"
        assert len(deltas) > 1
    sent = fake_model_server.requests[-1]
    assert sent.stream is stream and sent.api == name and sent.api_key == "sk-test-0123456789abcdef"
    if name == "openai" and stream:
        assert sent.body["stream_options"] == {"include_usage": True}


@both
@modes
def test_parallel_tool_calls_round_trip(fake_model_server: FakeModelServer, name: str, stream: bool) -> None:
    provider, model = make(fake_model_server, name)
    fake_model_server.tool_calls(("read_file", {"path": "a.txt"}), ("search", {"query": "x" * 50, "limit": 3}),
                                 text="Let me look.")
    tools = [{"type": "function", "function": {"name": n, "description": n, "parameters": {"type": "object"}}}
             for n in ("read_file", "search")]
    request = ModelRequest(model=model, messages=[{"role": "user", "content": "go"}], tools=tools, stream=stream)
    response, _ = run(provider, request, stream)
    assert response.finish_reason == "tool_calls"
    assert [c["function"]["name"] for c in response.tool_calls] == ["read_file", "search"]
    assert json.loads(response.tool_calls[1]["function"]["arguments"]) == {"query": "x" * 50, "limit": 3}
    assert all(c["id"] and c["type"] == "function" for c in response.tool_calls)
    assert response.text == "Let me look."
    # The assistant message goes back into history with the tool results.
    history = [
        {"role": "user", "content": "go"},
        response.message,
        *({"role": "tool", "tool_call_id": c["id"], "content": f"result {i}"} for i, c in enumerate(response.tool_calls)),
    ]
    fake_model_server.reply("done")
    final, _ = run(provider, ModelRequest(model=model, messages=history, tools=tools), stream)
    assert final.text == "done"
    body = fake_model_server.requests[-1].body
    if name == "openai":
        assert [m["role"] for m in body["messages"]] == ["user", "assistant", "tool", "tool"]
        assert body["tools"][0]["function"]["name"] == "read_file"
    else:
        assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
        kinds = [b["type"] for b in body["messages"][1]["content"]]
        assert kinds == ["text", "tool_use", "tool_use"]
        results = body["messages"][2]["content"]
        assert [b["tool_use_id"] for b in results] == [c["id"] for c in response.tool_calls]
        assert body["tools"][0] == {"name": "read_file", "description": "read_file", "input_schema": {"type": "object"}}


@both
@modes
def test_reasoning_is_kept(fake_model_server: FakeModelServer, name: str, stream: bool) -> None:
    provider, model = make(fake_model_server, name)
    fake_model_server.reply("42", reasoning="Six times seven is forty-two.",
                            usage=ScriptedUsage(input_tokens=5, output_tokens=30, reasoning_tokens=20))
    response, deltas = run(provider, ModelRequest(model=model, messages=[{"role": "user", "content": "6*7?"}]), stream)
    assert response.reasoning == "Six times seven is forty-two."
    assert response.text == "42"
    if stream:
        assert "".join(d.reasoning for d in deltas) == response.reasoning
    if name == "openai":
        assert response.usage.reasoning_tokens == 20
    else:
        # The signed thinking block goes back verbatim on the next request.
        assert response.message["reasoning_details"][0]["signature"].startswith("fakesig")
        fake_model_server.reply("ok")
        provider.complete(ModelRequest(model=model, messages=[{"role": "user", "content": "6*7?"}, response.message,
                                                              {"role": "user", "content": "sure?"}]))
        sent = fake_model_server.requests[-1].body["messages"][1]["content"]
        assert sent[0]["type"] == "thinking" and sent[0]["signature"] == response.message["reasoning_details"][0]["signature"]


def test_anthropic_request_shape_caching_and_merging(fake_model_server: FakeModelServer) -> None:
    provider, model = make(fake_model_server, "anthropic")
    messages = [
        {"role": "system", "content": "You are hermes."},
        {"role": "system", "content": "Memory: the user likes tea."},
        {"role": "user", "content": "one"},
        {"role": "user", "content": "two"},
        {"role": "assistant", "content": "three"},
        {"role": "user", "content": [{"type": "text", "text": "four"},
                                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
    ]
    provider.complete(ModelRequest(model=model, messages=messages, max_tokens=77, temperature=0.2))
    body = fake_model_server.requests[-1].body
    assert body["max_tokens"] == 77 and body["temperature"] == 0.2
    assert [b["text"] for b in body["system"]] == ["You are hermes.", "Memory: the user likes tea."]
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in body["system"][0]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert [b["text"] for b in body["messages"][0]["content"]] == ["one", "two"]
    assert body["messages"][2]["content"][1]["source"] == {"type": "base64", "media_type": "image/png", "data": "AAAA"}
    # Breakpoints on the latest messages: four in all with the system prompt.
    marked = [m for m in body["messages"] if "cache_control" in m["content"][-1]]
    assert len(marked) == 3


def test_openai_compatible_base_url_sends_max_tokens(fake_model_server: FakeModelServer) -> None:
    provider, model = make(fake_model_server, "openai")
    provider.complete(ModelRequest(model=model, messages=[{"role": "user", "content": "x", "reasoning": "drop me"}],
                                   max_tokens=99, extra_body={"top_k": 5}))
    body = fake_model_server.requests[-1].body
    assert body["max_tokens"] == 99 and body["top_k"] == 5
    assert body["messages"] == [{"role": "user", "content": "x"}]


# --- every fault, through both SDKs, streaming and not -------------------------------

FAULTS = [
    # fault kind, fields, reason, retryable, compress, rotate, fallback
    ("rate_limit", {"retry_after": 7}, "rate_limit", True, False, True, True),
    ("billing", {}, "billing", False, False, True, True),
    ("auth", {}, "auth", False, False, True, True),
    ("forbidden", {}, "auth_permanent", False, False, False, True),
    ("model_not_found", {}, "model_not_found", False, False, False, True),
    ("payload_too_large", {}, "payload_too_large", False, True, False, False),
    ("context_overflow", {"limit": 32768}, "context_overflow", False, True, False, False),
    ("content_policy", {}, "content_policy", False, False, False, False),
    ("server_error", {}, "server_error", True, False, False, True),
    ("bad_gateway", {}, "server_error", True, False, False, True),
    ("unavailable", {}, "overloaded", True, False, False, True),
    ("overloaded", {}, "overloaded", True, False, False, True),
    ("drop_stream", {}, "server_error", True, False, False, True),
    ("malformed_json", {}, "format_error", True, False, False, False),
    ("hang", {"seconds": 5}, "timeout", True, False, False, True),
    ("thinking_signature", {}, "thinking_signature", False, False, False, False),
    ("image_too_large", {}, "image_too_large", False, False, False, False),
    ("image_rejected", {}, "image_rejected", False, False, False, True),
    ("multimodal_tool_content", {}, "multimodal_tool_content", False, False, False, False),
    ("invalid_encrypted_content", {}, "invalid_encrypted_content", False, False, False, False),
    ("long_context_tier", {}, "long_context_tier", False, True, False, False),
    ("provider_policy_blocked", {}, "provider_policy_blocked", False, False, False, True),
    ("upstream_rate_limit", {}, "upstream_rate_limit", True, False, False, True),
    ("unknown", {}, "unknown", True, False, False, False),
]


@both
@modes
@pytest.mark.parametrize("fault,fields,reason,retryable,compress,rotate,fallback", FAULTS, ids=[f[0] for f in FAULTS])
def test_fault_is_classified(fake_model_server: FakeModelServer, name: str, stream: bool, fault: str, fields: dict,
                             reason: str, retryable: bool, compress: bool, rotate: bool, fallback: bool) -> None:
    provider, model = make(fake_model_server, name, timeout=0.4 if fault == "hang" else 5.0)
    fake_model_server.fault(fault, **fields)
    with pytest.raises(ProviderError) as caught:
        run(provider, ModelRequest(model=model, messages=[{"role": "user", "content": "hi"}]), stream)
    error = caught.value
    assert error.reason == reason
    assert (error.retryable, error.should_compress, error.should_rotate_credential, error.should_fallback) == (
        retryable, compress, rotate, fallback)
    assert error.provider == name
    assert "sk-test-0123456789abcdef" not in str(error)
    if fault == "rate_limit":
        assert error.retry_after == 7 and error.status == 429
    if fault == "context_overflow":
        assert error.context_limit == 32768


@both
def test_a_stream_without_a_finish_reason_is_incomplete_not_stop(fake_model_server: FakeModelServer, name: str) -> None:
    provider, model = make(fake_model_server, name)
    fake_model_server.fault("cut_stream", message="half of an answer")
    pieces = []
    with pytest.raises(ProviderError) as caught:
        for item in provider.stream(ModelRequest(model=model, messages=[{"role": "user", "content": "hi"}])):
            pieces.append(item.text)
    assert caught.value.reason == "stream_incomplete" and caught.value.retryable
    assert "".join(pieces) == "half of an answer"  # every delta arrived before the error


@both
def test_retry_after_as_an_http_date(fake_model_server: FakeModelServer, name: str) -> None:
    provider, model = make(fake_model_server, name)
    fake_model_server.fault("overloaded", retry_after=30, retry_after_date=True)
    with pytest.raises(ProviderError) as caught:
        provider.complete(ModelRequest(model=model, messages=[{"role": "user", "content": "hi"}]))
    assert 25 <= caught.value.retry_after <= 31


@both
def test_rate_limit_reset_header_without_retry_after(fake_model_server: FakeModelServer, name: str) -> None:
    provider, model = make(fake_model_server, name)
    fake_model_server.fault("rate_limit", reset_after=120)
    with pytest.raises(ProviderError) as caught:
        provider.complete(ModelRequest(model=model, messages=[{"role": "user", "content": "hi"}]))
    # OpenAI says "120s" in x-ratelimit-reset-requests; Anthropic gives an RFC 3339 instant.
    assert 115 <= caught.value.retry_after <= 121


@both
def test_context_overflow_wording_is_the_vendors(fake_model_server: FakeModelServer, name: str) -> None:
    provider, model = make(fake_model_server, name)
    fake_model_server.fault("context_overflow", limit=200000)
    with pytest.raises(ProviderError) as caught:
        provider.complete(ModelRequest(model=model, messages=[{"role": "user", "content": "hi"}]))
    wording = "maximum context length is 200000 tokens" if name == "openai" else "prompt is too long"
    assert wording in caught.value.message
    assert caught.value.context_limit == 200000


@both
@modes
def test_key_never_reaches_a_traceback(fake_model_server: FakeModelServer, name: str, stream: bool) -> None:
    import traceback

    provider, model = make(fake_model_server, name)
    fake_model_server.fault("auth")
    with pytest.raises(ProviderError) as caught:
        run(provider, ModelRequest(model=model, messages=[{"role": "user", "content": "hi"}]), stream)
    text = "".join(traceback.format_exception(caught.value))
    assert "AuthenticationError" not in text  # the SDK exception (with its request headers) is not chained in
    assert "sk-test-0123456789abcdef" not in text and "auth (HTTP 401)" in text


@both
@modes
def test_empty_completion_is_returned_for_the_loop_to_judge(fake_model_server: FakeModelServer, name: str,
                                                            stream: bool) -> None:
    provider, model = make(fake_model_server, name)
    fake_model_server.fault("empty")
    response, deltas = run(provider, ModelRequest(model=model, messages=[{"role": "user", "content": "hi"}]), stream)
    assert response.is_empty and response.tool_calls == [] and response.finish_reason == "stop"
    assert not "".join(d.text for d in deltas)
    fake_model_server.reply("something")
    assert not run(provider, ModelRequest(model=model, messages=[{"role": "user", "content": "hi"}]), stream)[0].is_empty


def test_anthropic_1m_tier_sends_the_beta_flag_and_the_plain_model(fake_model_server: FakeModelServer) -> None:
    provider, _ = make(fake_model_server, "anthropic")
    provider.complete(ModelRequest(model="claude-future-9[1m]", messages=[{"role": "user", "content": "hi"}]))
    sent = fake_model_server.requests[-1]
    assert sent.body["model"] == "claude-future-9" and "context-1m" in sent.headers["anthropic-beta"]
