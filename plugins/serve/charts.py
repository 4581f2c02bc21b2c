"""Usage aggregates for the dashboard and the inline SVG bar charts that draw them (no script, no CDN)."""

from __future__ import annotations

import html
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["bar_chart", "usage_by"]

_COLORS = ("#3b6ea5", "#d08c2c", "#5a9e6f", "#a34f6b", "#7a6bb0")


def usage_by(sessions: Iterable[Mapping[str, Any]], key: str) -> dict[str, dict[str, float]]:
    """Tokens in and out and cost summed per ``day`` (UTC date of the start) or per ``model``."""
    totals: dict[str, dict[str, float]] = defaultdict(lambda: {"input": 0.0, "output": 0.0, "cost": 0.0})
    for session in sessions:
        if key == "day":
            label = time.strftime("%Y-%m-%d", time.gmtime(float(session.get("started_at") or 0)))
        else:
            label = str(session.get("model") or "unknown")
        row = totals[label]
        row["input"] += (session.get("input_tokens") or 0) + (session.get("cache_read_tokens") or 0) + \
            (session.get("cache_write_tokens") or 0)
        row["output"] += session.get("output_tokens") or 0
        row["cost"] += session.get("estimated_cost_usd") or 0.0
    return dict(sorted(totals.items()))


def _fmt(value: float, money: bool) -> str:
    if money:
        return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"
    return f"{value:,.0f}"


def bar_chart(title: str, data: Mapping[str, Mapping[str, float]], series: tuple[str, ...], *,
              money: bool = False, chart_id: str = "") -> str:  # fmt: skip
    """A stacked bar chart as an ``<svg>``: one bar per label, one colour per series, a legend and titles."""
    width, height, left, bottom, top = 640, 220, 70, 40, 24
    labels = list(data)
    peak = max((sum(data[label].get(s, 0.0) for s in series) for label in labels), default=0.0) or 1.0
    slot = (width - left - 10) / max(len(labels), 1)
    bar = max(4.0, min(48.0, slot * 0.6))
    plot = height - bottom - top
    parts = [f'<svg class="chart" id="{html.escape(chart_id)}" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="{html.escape(title)}" xmlns="http://www.w3.org/2000/svg">',
             f'<text x="{left}" y="14" class="chart-title">{html.escape(title)}</text>',
             f'<line x1="{left}" y1="{top + plot}" x2="{width - 10}" y2="{top + plot}" stroke="#999"/>',
             f'<text x="{left - 6}" y="{top + 4}" text-anchor="end" class="axis">{_fmt(peak, money)}</text>',
             f'<text x="{left - 6}" y="{top + plot}" text-anchor="end" class="axis">0</text>']  # fmt: skip
    for index, label in enumerate(labels):
        x = left + index * slot + (slot - bar) / 2
        y = top + plot
        for number, name in enumerate(series):
            value = data[label].get(name, 0.0)
            h = plot * value / peak
            y -= h
            parts.append(f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{max(h, 0):.1f}" '
                         f'fill="{_COLORS[number % len(_COLORS)]}" data-series="{html.escape(name)}" '
                         f'data-label="{html.escape(label)}" data-value="{value:g}">'
                         f'<title>{html.escape(label)} · {html.escape(name)}: {_fmt(value, money)}</title></rect>')  # fmt: skip
        parts.append(f'<text x="{x + bar / 2:.1f}" y="{top + plot + 14}" text-anchor="middle" class="axis">'
                     f'{html.escape(label[-10:])}</text>')  # fmt: skip
    for number, name in enumerate(series):
        x = width - 10 - (len(series) - number) * 90
        parts.append(f'<rect x="{x}" y="4" width="10" height="10" fill="{_COLORS[number % len(_COLORS)]}"/>'
                     f'<text x="{x + 14}" y="13" class="axis">{html.escape(name)}</text>')  # fmt: skip
    if not labels:
        parts.append(f'<text x="{width / 2}" y="{top + plot / 2}" text-anchor="middle" class="axis">no usage yet</text>')
    parts.append("</svg>")
    return "".join(parts)
