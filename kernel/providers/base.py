"""The model-provider contract: request, response, stream events and the ABC.

Messages are in the canonical OpenAI Chat format (``role``, ``content``,
``tool_calls``, ``tool_call_id``); a provider translates them to its vendor's
wire format and back. A provider instance is bound to one credential and one
endpoint; retries, credential rotation and cost live above it
(:class:`hermes.kernel.providers.client.ModelClient`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, Union

from ..usage import CanonicalUsage, CostResult
from .errors import ProviderError

__all__ = ["ModelProvider", "ModelRequest", "ModelResponse", "StreamDelta", "StreamItem"]


@dataclass
class ModelRequest:
    """One call to a model.

    ``tools`` are OpenAI Chat tool schemas (``Tool.schema()``); ``extra_body``
    is merged into the vendor request body as is (vendor-specific options).
    """

    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    max_tokens: int = 4096
    temperature: float | None = None
    stream: bool = False
    extra_body: dict[str, Any] = field(default_factory=dict)
    #: Told of each provider request the client makes for this call (the api hooks,
    #: :class:`~hermes.kernel.hook_calls.ApiObserver`); None when nobody listens.
    observer: Any = field(default=None, repr=False, compare=False)


@dataclass
class ModelResponse:
    """The assistant's reply in canonical form.

    ``message`` is an OpenAI Chat assistant message (``content`` and, when the
    model called tools, ``tool_calls``; ``reasoning`` when it thought aloud).
    ``finish_reason`` uses OpenAI's names: stop, length, tool_calls, content_filter.
    """

    message: dict[str, Any]
    finish_reason: str
    usage: CanonicalUsage
    model: str = ""
    reasoning: str | None = None
    cost: CostResult | None = None
    response_id: str | None = None
    reported_cost_usd: float | None = None

    @property
    def text(self) -> str:
        content = self.message.get("content")
        return content if isinstance(content, str) else ""

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        return list(self.message.get("tool_calls") or [])

    @property
    def is_empty(self) -> bool:
        """No text and no tool calls: the model gave no answer (the loop decides what next)."""
        return not self.text.strip() and not self.tool_calls


@dataclass(frozen=True)
class StreamDelta:
    """A piece of the reply as it arrives, for live display."""

    text: str = ""
    reasoning: str = ""


StreamItem = Union[StreamDelta, ModelResponse]


class ModelProvider(ABC):
    """A driver in ``hermes.model_providers`` that talks to one vendor API.

    Subclasses import their SDK inside methods (never at module level) and
    raise :class:`ProviderError` for every failure, classified.
    """

    #: Environment variable the vendor SDK reads the key from.
    env_key: ClassVar[str | None] = None
    #: Environment variable the vendor SDK reads the base URL from.
    env_base_url: ClassVar[str | None] = None
    #: The model used when neither ``--model`` nor ``model.name`` names one.
    default_model: ClassVar[str] = ""
    #: Most tools the API accepts in one request (None: no stated limit). The
    #: kernel never sends more: it defers schemas behind ``tool_search`` first,
    #: then cuts the rest with one warning (:mod:`hermes.kernel.tool_search`).
    max_tools: ClassVar[int | None] = None

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 600.0,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.api_key = api_key
        self.base_url = base_url
        self.timeout = timeout
        self.options = dict(options or {})

    def __repr__(self) -> str:  # never shows the key
        return f"{type(self).__name__}(base_url={self.base_url!r})"

    @abstractmethod
    def complete(self, request: ModelRequest) -> ModelResponse:
        """Send ``request`` and return the whole reply."""

    @abstractmethod
    def stream(self, request: ModelRequest) -> Iterator[StreamItem]:
        """Send ``request``; yield :class:`StreamDelta` pieces, then the :class:`ModelResponse`."""

    def classify(self, exc: BaseException) -> ProviderError:
        """Map an exception from this provider's SDK to a classified error."""
        from .errors import classify_exception

        return classify_exception(exc)

    def close(self) -> None:
        """Release connections (optional)."""


def final_response(items: Iterator[StreamItem]) -> ModelResponse:
    """Drain a stream and return its closing :class:`ModelResponse`."""
    found = None
    for item in items:  # drained to the end so the producer can finish its bookkeeping
        if isinstance(item, ModelResponse):
            found = item
    if found is not None:
        return found
    raise ProviderError("format_error", "the stream ended without a response", retryable=True)
