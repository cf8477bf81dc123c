"""Run folders (``proofgym demo`` / ``train`` output: summary.json, metrics.csv) found by the run id they hold."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from proofgym.view._charts import line_chart, metrics_charts, read_metrics
from markupsafe import Markup

_MAX_DEPTH = 3  # runs/<name>/summary.json, runs/<group>/<name>/summary.json


@dataclass(frozen=True)
class RunFolder:
    """A run's output folder: its ``summary.json`` and, when present, ``metrics.csv``."""

    path: Path
    summary: dict[str, Any]

    @property
    def metrics_csv(self) -> Path | None:
        path = self.path / "metrics.csv"
        return path if path.is_file() else None

    def charts(self) -> list[Markup]:
        """Reward and share curves from metrics.csv, then held-out accuracy per rule branch from summary.json."""
        charts = metrics_charts(read_metrics(self.metrics_csv)) if self.metrics_csv else []
        per_branch: dict[str, list[tuple[float, float]]] = {}
        evaluations = self.summary.get("evaluations")
        for evaluation in evaluations if isinstance(evaluations, list) else ():
            if not isinstance(evaluation, dict) or not isinstance(evaluation.get("per_branch"), dict):
                continue
            step = evaluation.get("step")
            for branch, counts in evaluation["per_branch"].items():
                if (isinstance(step, (int, float)) and isinstance(counts, list) and len(counts) == 2
                        and all(isinstance(c, (int, float)) for c in counts) and counts[1]):
                    per_branch.setdefault(str(branch), []).append((float(step), counts[0] / counts[1]))
        chart = line_chart("held-out accuracy per rule branch", per_branch)
        return charts + ([chart] if chart is not None else [])


def find_run_folders(roots: Iterable[Path]) -> dict[str, RunFolder]:
    """``{run_id: RunFolder}`` for every summary.json naming a ``run_id`` under ``roots`` (a few levels deep)."""
    found: dict[str, RunFolder] = {}
    for root in roots:
        for depth in range(_MAX_DEPTH):
            for summary_path in sorted(root.glob("/".join(["*"] * depth + ["summary.json"]))):
                try:
                    summary = json.loads(summary_path.read_text(encoding="utf-8"))
                except (OSError, ValueError, UnicodeDecodeError):
                    continue
                run_id = summary.get("run_id") if isinstance(summary, dict) else None
                if isinstance(run_id, str) and run_id not in found:
                    found[run_id] = RunFolder(summary_path.parent, summary)
    return found
