"""Per-step training metrics: kept in memory, written as a CSV, drawn as a reward curve (PNG)."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any, Mapping


class MetricsLog:
    """Rows of per-step metrics (``step`` plus any numeric columns), in the order they were logged."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def log(self, step: int, **metrics: Any) -> dict[str, Any]:
        row = {"step": int(step), **metrics}
        self.rows.append(row)
        return row

    def columns(self) -> list[str]:
        seen: dict[str, None] = {}
        for row in self.rows:
            seen.update(dict.fromkeys(row))
        return list(seen)

    def write_csv(self, path: str | Path) -> Path:
        """Write every row to ``path`` (one column per metric ever logged; missing values blank)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=self.columns(), restval="")
            writer.writeheader()
            writer.writerows(self.rows)
        return path

    def plot(self, path: str | Path, *, metrics: tuple[str, ...] = ("reward", "certified", "accuracy"),
             title: str = "reward curve") -> Path:
        """Draw the named metrics against the step (those never logged are skipped) into a PNG."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        figure, axes = plt.subplots(figsize=(8, 4.5))
        for name in metrics:
            points = [(row["step"], row[name]) for row in self.rows if _finite(row.get(name))]
            if points:
                xs, ys = zip(*points)
                axes.plot(xs, ys, marker="o" if len(points) < 30 else None, label=name)
        axes.set_xlabel("step")
        axes.set_title(title)
        axes.grid(alpha=0.3)
        if axes.get_legend_handles_labels()[0]:
            axes.legend()
        figure.tight_layout()
        figure.savefig(path, dpi=110)
        plt.close(figure)
        return path


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def summary(rows: list[Mapping[str, Any]], name: str) -> float | None:
    """The mean of column ``name`` over ``rows`` (None when it was never logged)."""
    values = [row[name] for row in rows if _finite(row.get(name))]
    return sum(values) / len(values) if values else None
