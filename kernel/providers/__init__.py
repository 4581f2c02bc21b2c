"""Model providers: the contract, usage normalisation, error classification,
retries, pricing and the client that ties them to the credential pool.

No vendor SDK is imported here; providers import theirs on first use.
"""

from .base import ModelProvider, ModelRequest, ModelResponse, StreamDelta, StreamItem, final_response
from .errors import REASONS, ClassifiedError, FailureReason, ProviderError, classify_exception, classify_status
from .pricing import PRICES, PRICING_VERSION, ModelPrice, compute_cost, lookup_price
from .usage import normalize_anthropic_usage, normalize_openai_usage

__all__ = [
    "PRICES",
    "PRICING_VERSION",
    "REASONS",
    "ClassifiedError",
    "FailureReason",
    "ModelPrice",
    "ModelProvider",
    "ModelRequest",
    "ModelResponse",
    "ProviderError",
    "StreamDelta",
    "StreamItem",
    "classify_exception",
    "classify_status",
    "compute_cost",
    "final_response",
    "lookup_price",
    "normalize_anthropic_usage",
    "normalize_openai_usage",
]
