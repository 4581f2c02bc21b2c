"""The 40 % head / 60 % tail rule for long output, as a pure function and while streaming."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from hermes.plugins.tools._truncate import HeadTailBuffer, head_tail

_NOTICE = re.compile(r"\n\n\[\.\.\. ([\d,]+) characters omitted from the middle; the output had ([\d,]+) characters\..*?\]\n\n", re.S)


@given(text=st.text(max_size=400), limit=st.integers(min_value=0, max_value=300))
def test_head_tail_keeps_first_40_and_last_60_percent(text: str, limit: int) -> None:
    out = head_tail(text, limit)
    if len(text) <= limit:
        assert out == text
        return
    head, tail = int(limit * 0.4), limit - int(limit * 0.4)
    match = _NOTICE.search(out)
    assert match is not None
    assert out[: match.start()] == text[:head]
    assert out[match.end() :] == (text[-tail:] if tail else "")
    assert int(match.group(1).replace(",", "")) == len(text) - limit
    assert int(match.group(2).replace(",", "")) == len(text)


@given(chunks=st.lists(st.text(max_size=120), max_size=40), limit=st.integers(min_value=0, max_value=200))
def test_streaming_buffer_equals_head_tail(chunks: list[str], limit: int) -> None:
    buffer = HeadTailBuffer(limit)
    for chunk in chunks:
        buffer.write(chunk)
    assert buffer.text() == head_tail("".join(chunks), limit)


def test_buffer_memory_stays_bounded() -> None:
    buffer = HeadTailBuffer(1000)
    for _ in range(5000):
        buffer.write("z" * 1000)
    assert buffer._tail_len < 2 * 600 + 65536 + 1000
    assert buffer.total == 5_000_000
    assert "4,999,000 characters omitted" in buffer.text()
