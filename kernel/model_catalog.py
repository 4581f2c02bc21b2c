"""A bundled, dated catalog of model windows and output limits, with where each figure comes from.

Keys are name prefixes, matched against the model name without an
aggregator's ``vendor/`` part; the longest matching prefix wins. Figures are
input windows and maximum output tokens as each vendor publishes them for its
own API; a provider serving a model with a smaller window reports it through
its model list, which the resolution chain asks first
(:mod:`hermes.kernel.context_windows`).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["CATALOG", "CATALOG_DATE", "SOURCES", "CatalogEntry"]

#: When these figures were last checked against their sources.
CATALOG_DATE = "2026-11-15"


class CatalogEntry(NamedTuple):
    context_length: int
    max_output: int | None
    family: str


SOURCES = {
    "openai": "https://platform.openai.com/docs/models",
    "anthropic": "https://docs.claude.com/en/docs/about-claude/models/overview",
    "google": "https://ai.google.dev/gemini-api/docs/models",
    "qwen": "https://huggingface.co/Qwen (model cards) and https://www.alibabacloud.com/help/en/model-studio/models",
    "deepseek": "https://api-docs.deepseek.com/quick_start/pricing",
    "meta": "https://www.llama.com/docs/model-cards-and-prompt-formats/",
    "mistral": "https://docs.mistral.ai/getting-started/models/models_overview/",
}

_K = 1024

CATALOG: dict[str, CatalogEntry] = {
    # OpenAI
    "gpt-5": CatalogEntry(400_000, 128_000, "openai"),
    "gpt-5-chat": CatalogEntry(128_000, 16_384, "openai"),
    "gpt-4.1": CatalogEntry(1_047_576, 32_768, "openai"),
    "gpt-4o": CatalogEntry(128_000, 16_384, "openai"),
    "gpt-4-turbo": CatalogEntry(128_000, 4_096, "openai"),
    "gpt-4": CatalogEntry(8_192, 8_192, "openai"),
    "gpt-3.5-turbo": CatalogEntry(16_385, 4_096, "openai"),
    "gpt-oss": CatalogEntry(131_072, 131_072, "openai"),
    "o1": CatalogEntry(200_000, 100_000, "openai"),
    "o1-mini": CatalogEntry(128_000, 65_536, "openai"),
    "o3": CatalogEntry(200_000, 100_000, "openai"),
    "o3-mini": CatalogEntry(200_000, 100_000, "openai"),
    "o4-mini": CatalogEntry(200_000, 100_000, "openai"),
    # Anthropic ("[1m]" or "-1m" names the 1M-token tier of the models that offer it)
    "claude-": CatalogEntry(200_000, 8_192, "anthropic"),
    "claude-3-haiku": CatalogEntry(200_000, 4_096, "anthropic"),
    "claude-3-opus": CatalogEntry(200_000, 4_096, "anthropic"),
    "claude-3-5": CatalogEntry(200_000, 8_192, "anthropic"),
    "claude-3-7-sonnet": CatalogEntry(200_000, 64_000, "anthropic"),
    "claude-sonnet-4": CatalogEntry(200_000, 64_000, "anthropic"),
    "claude-sonnet-4[1m]": CatalogEntry(1_000_000, 64_000, "anthropic"),
    "claude-sonnet-4-5[1m]": CatalogEntry(1_000_000, 64_000, "anthropic"),
    "claude-sonnet-4-1m": CatalogEntry(1_000_000, 64_000, "anthropic"),
    "claude-sonnet-4-5-1m": CatalogEntry(1_000_000, 64_000, "anthropic"),
    "claude-opus-4": CatalogEntry(200_000, 32_000, "anthropic"),
    "claude-opus-4-5": CatalogEntry(200_000, 64_000, "anthropic"),
    "claude-haiku-4": CatalogEntry(200_000, 64_000, "anthropic"),
    # Google
    "gemini-1.5-pro": CatalogEntry(2_097_152, 8_192, "google"),
    "gemini-1.5-flash": CatalogEntry(1_048_576, 8_192, "google"),
    "gemini-2.0-flash": CatalogEntry(1_048_576, 8_192, "google"),
    "gemini-2.5": CatalogEntry(1_048_576, 65_536, "google"),
    "gemini-3": CatalogEntry(1_048_576, 65_536, "google"),
    "gemma-3": CatalogEntry(131_072, 8_192, "google"),
    # Qwen (native windows; the 2507 releases and Qwen3-Coder are 256K)
    "qwen2.5": CatalogEntry(32_768, 8_192, "qwen"),
    "qwen2.5-1m": CatalogEntry(1_010_000, 8_192, "qwen"),
    "qwen3": CatalogEntry(32_768, 32_768, "qwen"),
    "qwen3-coder": CatalogEntry(262_144, 65_536, "qwen"),
    "qwen3-235b-a22b-2507": CatalogEntry(262_144, 32_768, "qwen"),
    "qwen3-235b-a22b-instruct-2507": CatalogEntry(262_144, 32_768, "qwen"),
    "qwen3-235b-a22b-thinking-2507": CatalogEntry(262_144, 81_920, "qwen"),
    "qwen3-30b-a3b-2507": CatalogEntry(262_144, 32_768, "qwen"),
    "qwen3-30b-a3b-instruct-2507": CatalogEntry(262_144, 32_768, "qwen"),
    "qwen3-next": CatalogEntry(262_144, 32_768, "qwen"),
    "qwen3-max": CatalogEntry(262_144, 65_536, "qwen"),
    "qwen-max": CatalogEntry(32_768, 8_192, "qwen"),
    "qwen-plus": CatalogEntry(131_072, 8_192, "qwen"),
    "qwen-turbo": CatalogEntry(1_000_000, 8_192, "qwen"),
    "qwq": CatalogEntry(131_072, 32_768, "qwen"),
    # DeepSeek
    "deepseek-chat": CatalogEntry(128_000, 8_000, "deepseek"),
    "deepseek-reasoner": CatalogEntry(128_000, 64_000, "deepseek"),
    "deepseek-v3": CatalogEntry(128_000, 8_000, "deepseek"),
    "deepseek-r1": CatalogEntry(128_000, 64_000, "deepseek"),
    "deepseek-coder": CatalogEntry(128_000, 8_000, "deepseek"),
    # Meta Llama
    "llama-2": CatalogEntry(4_096, 4_096, "meta"),
    "llama2": CatalogEntry(4_096, 4_096, "meta"),
    "llama-3-": CatalogEntry(8_192, 8_192, "meta"),
    "llama3:": CatalogEntry(8_192, 8_192, "meta"),
    "llama-3.1": CatalogEntry(131_072, 8_192, "meta"),
    "llama3.1": CatalogEntry(131_072, 8_192, "meta"),
    "llama-3.2": CatalogEntry(131_072, 8_192, "meta"),
    "llama3.2": CatalogEntry(131_072, 8_192, "meta"),
    "llama-3.3": CatalogEntry(131_072, 8_192, "meta"),
    "llama3.3": CatalogEntry(131_072, 8_192, "meta"),
    "llama-4-scout": CatalogEntry(10_485_760, 16_384, "meta"),
    "llama-4-maverick": CatalogEntry(1_048_576, 16_384, "meta"),
    # Mistral
    "mistral-large": CatalogEntry(131_072, None, "mistral"),
    "mistral-medium": CatalogEntry(131_072, None, "mistral"),
    "mistral-small": CatalogEntry(131_072, None, "mistral"),
    "mistral-7b": CatalogEntry(32_768, None, "mistral"),
    "mistral:": CatalogEntry(32_768, None, "mistral"),
    "mistral-nemo": CatalogEntry(131_072, None, "mistral"),
    "open-mistral-nemo": CatalogEntry(131_072, None, "mistral"),
    "ministral": CatalogEntry(131_072, None, "mistral"),
    "codestral": CatalogEntry(256_000, None, "mistral"),
    "devstral": CatalogEntry(131_072, None, "mistral"),
    "magistral": CatalogEntry(40_000, None, "mistral"),
    "mixtral-8x7b": CatalogEntry(32_768, None, "mistral"),
    "mixtral-8x22b": CatalogEntry(65_536, None, "mistral"),
    "pixtral": CatalogEntry(131_072, None, "mistral"),
}
