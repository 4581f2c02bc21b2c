"""Usage reports into CanonicalUsage buckets, exactly, from the SDKs' own usage objects too."""

from __future__ import annotations

from types import SimpleNamespace

from anthropic.types import Usage as AnthropicUsage
from openai.types import CompletionUsage
from openai.types.completion_usage import CompletionTokensDetails, PromptTokensDetails

from hermes.kernel import CanonicalUsage, normalize_anthropic_usage, normalize_openai_usage
from hermes.kernel.providers.usage import usage_dict


def test_the_openai_sdk_object_keeps_its_nested_details() -> None:
    usage = CompletionUsage(prompt_tokens=1000, completion_tokens=300, total_tokens=1300,
                            prompt_tokens_details=PromptTokensDetails(cached_tokens=800),
                            completion_tokens_details=CompletionTokensDetails(reasoning_tokens=250))
    assert normalize_openai_usage(usage) == CanonicalUsage(input_tokens=200, output_tokens=300, cache_read_tokens=800,
                                                           reasoning_tokens=250, request_count=1)


def test_a_plain_object_is_read_by_its_attributes() -> None:
    assert usage_dict(SimpleNamespace(prompt_tokens=10, completion_tokens=2)) == {"prompt_tokens": 10,
                                                                                 "completion_tokens": 2}
    assert usage_dict(None) == {} and usage_dict({"a": 1}) == {"a": 1}


def test_cache_writes_come_out_of_the_prompt_too() -> None:
    # OpenRouter reports cache writes beside cached reads, both inside prompt_tokens.
    usage = normalize_openai_usage({"prompt_tokens": 1000, "completion_tokens": 5,
                                    "prompt_tokens_details": {"cached_tokens": 600, "cache_write_tokens": 300}})
    assert usage == CanonicalUsage(input_tokens=100, output_tokens=5, cache_read_tokens=600, cache_write_tokens=300,
                                   request_count=1)
    # A write count larger than what is left of the prompt is capped: buckets never exceed the prompt.
    capped = normalize_openai_usage({"prompt_tokens": 1000,
                                     "prompt_tokens_details": {"cached_tokens": 600, "cache_write_tokens": 500}})
    assert capped == CanonicalUsage(input_tokens=0, cache_read_tokens=600, cache_write_tokens=400, request_count=1)


def test_unreadable_counts_are_zero() -> None:
    usage = normalize_openai_usage({"prompt_tokens": "n/a", "completion_tokens": [3], "prompt_tokens_details": "x"})
    assert usage == CanonicalUsage(request_count=1)
    assert normalize_openai_usage({"prompt_tokens": -5, "completion_tokens": "7"}) == CanonicalUsage(
        output_tokens=7, request_count=1)


def test_anthropic_usage_fills_every_bucket() -> None:
    data = {"input_tokens": 50, "output_tokens": 20, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 100}
    assert normalize_anthropic_usage(data, reasoning_tokens=7) == CanonicalUsage(
        input_tokens=50, output_tokens=20, cache_read_tokens=900, cache_write_tokens=100, reasoning_tokens=7,
        request_count=1)
    assert normalize_anthropic_usage(AnthropicUsage(input_tokens=3, output_tokens=4)) == CanonicalUsage(
        input_tokens=3, output_tokens=4, request_count=1)
