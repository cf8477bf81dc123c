"""Line charts as inline SVG, drawn on the server: no script, nothing fetched."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Mapping, Sequence

from markupsafe import Markup, escape

_W, _H, _PAD = 560, 200, 36
_COLOURS = ("#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
#: metrics.csv columns charted, in chart order: (title, columns).
CHARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("mean reward per step", ("reward",)),
    ("shares per step: certified, correct, invalid", ("certified", "correct", "invalid")),
    ("held-out accuracy", ("heldout_accuracy", "heldout_worst_branch")),
)


def read_metrics(path: Path) -> dict[str, list[tuple[float, float]]]:
    """A metrics.csv as ``{column: [(step, value), ...]}``, finite values only; an unreadable file is empty."""
    series: dict[str, list[tuple[float, float]]] = {}
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                step = _float(row.get("step"))
                if step is None:
                    continue
                for name, text in row.items():
                    value = _float(text)
                    if name and name != "step" and value is not None:
                        series.setdefault(name, []).append((step, value))
    except (OSError, UnicodeDecodeError, csv.Error):
        return {}
    return series


def _float(text: object) -> float | None:
    try:
        value = float(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def line_chart(title: str, series: Mapping[str, Sequence[tuple[float, float]]]) -> Markup | None:
    """An SVG chart of each named series (x, y); None when there is nothing to draw."""
    drawn = {name: list(points) for name, points in series.items() if points}
    if not drawn:
        return None
    xs = [x for points in drawn.values() for x, _ in points]
    ys = [y for points in drawn.values() for _, y in points]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    if x1 == x0:
        x1 = x0 + 1
    if y1 == y0:
        y0, y1 = y0 - 0.5, y1 + 0.5

    def sx(x: float) -> float:
        return _PAD + (x - x0) / (x1 - x0) * (_W - 2 * _PAD)

    def sy(y: float) -> float:
        return _H - _PAD + (y - y0) / (y1 - y0) * (2 * _PAD - _H)

    parts = [f'<svg class="chart" viewBox="0 0 {_W} {_H + 18 * len(drawn)}" role="img" '
             f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">',
             f'<title>{escape(title)}</title>',
             f'<line x1="{_PAD}" y1="{_H - _PAD}" x2="{_W - _PAD}" y2="{_H - _PAD}" class="axis"/>',
             f'<line x1="{_PAD}" y1="{_PAD}" x2="{_PAD}" y2="{_H - _PAD}" class="axis"/>',
             f'<text x="4" y="{_PAD + 4}" class="tick">{y1:.3g}</text>',
             f'<text x="4" y="{_H - _PAD}" class="tick">{y0:.3g}</text>',
             f'<text x="{_PAD}" y="{_H - _PAD + 14}" class="tick">{x0:g}</text>',
             f'<text x="{_W - _PAD - 20}" y="{_H - _PAD + 14}" class="tick">{x1:g}</text>']
    for n, (name, points) in enumerate(drawn.items()):
        colour = _COLOURS[n % len(_COLOURS)]
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for x, y in points[-1:]:
            parts.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{colour}"/>')
        parts.append(f'<text x="{_PAD}" y="{_H + 14 + 18 * n}" class="legend" fill="{colour}">'
                     f'{escape(name)} (last {points[-1][1]:.3g})</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


def metrics_charts(series: Mapping[str, Sequence[tuple[float, float]]]) -> list[Markup]:
    """The charts of a training run's metrics.csv (see ``CHARTS``), those it has columns for."""
    charts = []
    for title, columns in CHARTS:
        chart = line_chart(title, {c: series[c] for c in columns if c in series})
        if chart is not None:
            charts.append(chart)
    return charts
