"""Token usage and cost in one vendor-neutral shape.

Providers normalise what their API reports into :class:`CanonicalUsage`; the
session store accumulates it per session; pricing turns it into a
:class:`CostResult` whose status says how far to trust the number.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

__all__ = ["CanonicalUsage", "CostResult", "CostStatus"]

CostStatus = Literal["actual", "estimated", "included", "unknown"]


@dataclass(frozen=True)
class CanonicalUsage:
    """Tokens by bucket. ``input_tokens`` excludes tokens read from or written to the cache."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    request_count: int = 0

    @property
    def prompt_tokens(self) -> int:
        """Everything the model read: the size of the request, cached or not."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.output_tokens

    def __add__(self, other: CanonicalUsage) -> CanonicalUsage:
        if not isinstance(other, CanonicalUsage):
            return NotImplemented
        return CanonicalUsage(
            **{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        )

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class CostResult:
    """A cost in US dollars and how it was obtained.

    ``actual``: reported by the provider; ``estimated``: computed from a
    pricing table; ``included``: covered by a subscription or local model;
    ``unknown``: no price known, and ``amount_usd`` is None, never a guess.
    """

    amount_usd: float | None
    status: CostStatus
    pricing_version: str | None = None

    def __post_init__(self) -> None:
        if self.status == "unknown" and self.amount_usd is not None:
            raise ValueError("an unknown cost has no amount")
        if self.status != "unknown" and self.amount_usd is None:
            raise ValueError(f"a cost with status {self.status!r} needs an amount")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
