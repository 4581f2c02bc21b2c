"""Token usage and cost in one vendor-neutral shape.

Providers normalise what their API reports into :class:`CanonicalUsage`; the
session store accumulates it per session; pricing turns it into a
:class:`CostResult` whose status says how far to trust the number.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Literal

log = logging.getLogger(__name__)

__all__ = ["CanonicalUsage", "CostResult", "CostStatus", "record_request"]

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


def record_request(
    path: Path,
    *,
    session_id: str | None,
    provider: str,
    model: str,
    outcome: str,
    usage: CanonicalUsage | None = None,
    cost: CostResult | None = None,
    tools: dict[str, int] | None = None,
) -> None:
    """Append one request to the JSON-lines log at ``path`` (``HERMES_HOME/logs/requests.jsonl``).

    Every model request gets a line, failed and cut-off ones included, with its
    outcome (``ok``, ``incomplete``, ``error:<reason>``), tokens and cost with
    its status; the session store keeps only the totals. A write that fails is
    logged and dropped: accounting must never end a turn.
    """
    entry = {
        "time": round(time.time(), 3),
        "session_id": session_id,
        "provider": provider,
        "model": model,
        "outcome": outcome,
        "tokens": usage.as_dict() if usage is not None else None,
        "cost_usd": cost.amount_usd if cost is not None else None,
        "cost_status": cost.status if cost is not None else ("unknown" if usage is not None else None),
    }
    if tools is not None:  # deferred tool loading: what was offered, left out, searched (kernel/tool_search.py)
        entry["tools"] = tools
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # One write of one line in append mode: concurrent processes never interleave lines.
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (json.dumps(entry, separators=(",", ":")) + "\n").encode("utf-8"))
        finally:
            os.close(fd)
    except OSError as exc:
        log.debug("could not log the request: %s", exc)
