"""Search over one huge message (issue 27), for every backend: :func:`huge_message`, :func:`print_huge`."""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.store_data import open_sqlite

__all__ = ["HUGE_MESSAGE_TARGET_MS", "huge_message", "print_huge"]

HUGE_MESSAGE_TARGET_MS = 1000.0


def _huge_texts(chars: int) -> dict[str, tuple[str, str]]:
    """``{case: (message, query)}``: the shapes that made snippets quadratic (issue 27)."""
    lines, at = [], 0
    while at < chars * 2 // 5:  # a 400 KB log (at 1M): one 'error' line in 20 characters
        line = f"E{len(lines):05d} error, step {len(lines) % 97}"[:19]
        lines.append(line)
        at += len(line) + 1
    return {
        "log, a match a line": ("\n".join(lines), "error"),
        "one line, words": (("error ok " * (chars // 9 + 1))[:chars], "error"),
        "one line, substring": (("xerrorx " * (chars // 8 + 1))[:chars], "rror"),
        "one line, no spaces": ("error" + "a" * (chars - 10) + "error", "error"),
    }


def huge_message(runs: int, chars: int = 1_000_000, open_store: Any = None) -> dict[str, Any]:
    """Search p50 over one stored message of ``chars`` characters matched throughout (target:
    <= 1 s at a million): the snippet is all the work, so this times its cut. ``open_store()``
    gives a fresh, empty store per case (default: SQLite in a temporary folder)."""
    out: dict[str, Any] = {"chars": chars, "runs": runs, "target_ms": HUGE_MESSAGE_TARGET_MS}
    with tempfile.TemporaryDirectory() as tmp:
        fresh = open_store or (lambda: open_sqlite(Path(tmp) / f"huge-{len(out)}.db"))
        for name, (text, query) in _huge_texts(chars).items():
            with fresh() as store:
                sid = store.create_session()
                store.append_message(sid, {"role": "tool", "tool_call_id": "c1", "tool_name": "terminal", "content": text})
                times, hits = [], []
                for _ in range(runs):
                    start = time.perf_counter()
                    hits = store.search(query)
                    times.append((time.perf_counter() - start) * 1000)
            snippet = hits[0].snippet if hits else ""
            out[name] = {
                "message_chars": len(text),
                "matches": text.count(query),
                "p50_ms": round(statistics.median(times), 1),
                "hits": len(hits),
                "snippet_chars": len(snippet),
                "highlighted": f"**{query}**" in snippet,
            }
    return out


def print_huge(h: dict[str, Any]) -> None:
    print(f"  search over one huge message, p50 of {h['runs']} (target <= {h['target_ms']:.0f} ms):")
    for name, r in h.items():
        if isinstance(r, dict):
            print(f"    {name:<21} {r['message_chars']:>9,} chars, {r['matches']:>7,} matches: {r['p50_ms']:>7.1f} ms"
                  f"  snippet {r['snippet_chars']} chars, highlighted: {r['highlighted']}")  # fmt: skip
