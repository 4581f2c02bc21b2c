"""The contract of a credential selection strategy (``hermes.credential_strategies``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["CredentialStatus", "CredentialStrategy"]


@dataclass(frozen=True)
class CredentialStatus:
    """What a strategy may see of one usable credential; never the key itself.

    ``position`` is the key's place in the pool (config, then environment,
    then auth.json, each in order); ``request_count`` and ``last_used``
    count requests made with it by every process (shared in auth.json); ``leases`` is how many live sessions hold it.
    """

    id: str
    label: str
    position: int
    request_count: int = 0
    last_used: float = 0.0
    leases: int = 0


class CredentialStrategy(ABC):
    """Picks one credential among those that are not cooling down.

    The pool calls :meth:`choose` with at least one candidate, already
    narrowed to the least-leased keys, under its lock; one instance serves one
    provider's pool, so a strategy may keep state (a cursor).
    """

    @abstractmethod
    def choose(self, candidates: Sequence[CredentialStatus]) -> CredentialStatus:
        """Return one of ``candidates``."""
