"""The model call a context engine makes for a summary: auxiliary model first, main model once."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ..providers.base import ModelRequest
from ..providers.errors import ProviderError
from .calling import ModelRoute

__all__ = ["make_summarizer"]

log = logging.getLogger(__name__)


def make_summarizer(routes: Sequence[ModelRoute]):  # type: ignore[no-untyped-def]
    """A ``Summarizer`` trying ``routes`` in order (auxiliary, then main); None without routes.

    Only a failure of the first route moves on to the next (once); the last
    route's failure is raised as the classified :class:`ProviderError`, so the
    engine can tell an auth or network failure from any other.
    """
    chain = list(routes)
    if not chain:
        return None

    def summarize(system: str, prompt: str, max_tokens: int) -> str:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        for index, route in enumerate(chain):
            request = ModelRequest(model=route.model, messages=messages, max_tokens=max_tokens, stream=False)
            try:
                return route.client.complete(request, lease=route.lease).text  # type: ignore[attr-defined]
            except ProviderError as error:
                if index + 1 >= len(chain):
                    raise
                log.warning("summary model %s failed (%s); using %s once", route.label, error.reason, chain[index + 1].label)
        raise AssertionError("unreachable")

    return summarize
