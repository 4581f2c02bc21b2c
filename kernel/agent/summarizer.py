"""The model call a context engine makes for a summary: auxiliary model first, main model once."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ..providers.base import ModelRequest
from ..providers.errors import ProviderError
from .calling import ModelRoute

__all__ = ["SummaryText", "make_summarizer"]

log = logging.getLogger(__name__)


class SummaryText(str):
    """The summary's text, with why the model stopped (``length`` means it was cut off)."""

    finish_reason: str | None = None

    @classmethod
    def of(cls, text: str, finish_reason: str | None) -> SummaryText:
        out = cls(text)
        out.finish_reason = finish_reason
        return out


def make_summarizer(routes: Sequence[ModelRoute], context_length: int | None = None):  # type: ignore[no-untyped-def]
    """A ``Summarizer`` trying ``routes`` in order (auxiliary, then main); None without routes.

    Only a failure of the first route moves on to the next (once); the last
    route's failure is raised as the classified :class:`ProviderError`, so the
    engine can tell an auth or network failure from any other. The function
    carries ``context_length``, the window of the first route's model, so an
    engine caps the summary request by the model that reads it. Its answer is a
    :class:`SummaryText` carrying the ``finish_reason``.
    """
    from ..context_windows import context_length_for

    chain = list(routes)
    if not chain:
        return None

    def summarize(system: str, prompt: str, max_tokens: int) -> str:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        for index, route in enumerate(chain):
            request = ModelRequest(model=route.model, messages=messages, max_tokens=max_tokens, stream=False)
            try:
                response = route.client.complete(request, lease=route.lease)  # type: ignore[attr-defined]
            except ProviderError as error:
                if index + 1 >= len(chain):
                    raise
                log.warning("summary model %s failed (%s); using %s once", route.label, error.reason, chain[index + 1].label)
                continue
            return SummaryText.of(response.text or "", getattr(response, "finish_reason", None))
        raise AssertionError("unreachable")

    summarize.context_length = context_length or context_length_for(chain[0].model)  # type: ignore[attr-defined]
    return summarize
