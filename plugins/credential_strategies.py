"""Built-in credential selection strategies: fill_first, round_robin, random, least_used."""

from __future__ import annotations

import random
from collections.abc import Sequence

from hermes.kernel import CredentialStatus, CredentialStrategy

__all__ = ["FillFirst", "LeastUsed", "RandomChoice", "RoundRobin"]


class FillFirst(CredentialStrategy):
    """The first key until it is exhausted: the provider's prompt cache stays warm."""

    def choose(self, candidates: Sequence[CredentialStatus]) -> CredentialStatus:
        return min(candidates, key=lambda c: c.position)


class RoundRobin(CredentialStrategy):
    """Each request takes the key used longest ago (ties: pool order).

    ``last_used`` comes from auth.json, so the rotation is shared by every
    process using the pool, not kept per process.
    """

    def choose(self, candidates: Sequence[CredentialStatus]) -> CredentialStatus:
        return min(candidates, key=lambda c: (c.last_used, c.position))


class RandomChoice(CredentialStrategy):
    """A uniformly random key per request."""

    def choose(self, candidates: Sequence[CredentialStatus]) -> CredentialStatus:
        return random.choice(list(candidates))


class LeastUsed(CredentialStrategy):
    """The key with the fewest requests so far (ties: pool order)."""

    def choose(self, candidates: Sequence[CredentialStatus]) -> CredentialStatus:
        return min(candidates, key=lambda c: (c.request_count, c.position))
