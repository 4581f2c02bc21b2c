"""Keep long command output as 40 % head and 60 % tail: errors show early, results at the end."""

from __future__ import annotations

__all__ = ["HEAD_SHARE", "HeadTailBuffer", "head_tail", "omission_notice"]

HEAD_SHARE = 0.4


def _budgets(limit: int) -> tuple[int, int]:
    head = int(limit * HEAD_SHARE)
    return head, limit - head


def omission_notice(omitted: int, total: int) -> str:
    """The line put where the middle of the output was cut."""
    return (
        f"\n\n[... {omitted:,} characters omitted from the middle; the output had {total:,} characters. "
        "Showing the first 40 % and the last 60 % of what fits. Redirect to a file and search it "
        "to see the rest ...]\n\n"
    )


def head_tail(text: str, limit: int) -> str:
    """``text`` unchanged when it fits in ``limit`` characters, else head + notice + tail."""
    if len(text) <= limit:
        return text
    head, tail = _budgets(limit)
    return text[:head] + omission_notice(len(text) - limit, len(text)) + (text[-tail:] if tail else "")


class HeadTailBuffer:
    """Streaming :func:`head_tail`: memory stays near ``limit`` however much is written.

    ``buffer.text()`` equals ``head_tail(everything_written, limit)``.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._head_budget, self._tail_budget = _budgets(limit)
        self._head: list[str] = []
        self._head_len = 0
        self._tail: list[str] = []
        self._tail_len = 0
        self.total = 0

    def write(self, chunk: str) -> None:
        self.total += len(chunk)
        room = self._head_budget - self._head_len
        if room > 0:
            self._head.append(chunk[:room])
            self._head_len += min(room, len(chunk))
            chunk = chunk[room:]
        if chunk:
            self._tail.append(chunk)
            self._tail_len += len(chunk)
            # Trim only now and then, so writes stay amortised O(1).
            if self._tail_len > 2 * self._tail_budget + 65536:
                self._trim()

    def _trim(self) -> None:
        joined = "".join(self._tail)
        keep = joined[-self._tail_budget :] if self._tail_budget else ""
        self._tail, self._tail_len = [keep], len(keep)

    def text(self) -> str:
        head = "".join(self._head)
        if self.total <= self.limit:
            return head + "".join(self._tail)
        self._trim()
        return head + omission_notice(self.total - self.limit, self.total) + "".join(self._tail)
