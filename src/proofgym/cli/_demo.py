"""``proofgym demo``: train the built-in tiny model on the grant rules (or a domain folder's) by GRPO, offline on
CPU."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from proofgym.cli._errors import print_error
from proofgym.training import DEFAULT_DEMO_STEPS, DEMO_GOAL_RULE, DEMO_STOP_RULE

console = Console()


def demo_command(
    out: Path = typer.Option(Path("runs/demo"), "--out", help="Output folder (metrics, curve, traces, policy)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the model's weights, the training rows and sampling."),
    steps: Optional[int] = typer.Option(None, "--steps", min=1, help=f"GRPO steps (default {DEFAULT_DEMO_STEPS}, "
                                                                       "the tested count)."),
    quick: bool = typer.Option(False, "--quick", help="A few steps of every phase: checks the pipeline, "
                                                      "does not learn."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="Where the tiny model is built once "
                                                                       "(default ~/.cache/proofgym)."),
    threads: Optional[int] = typer.Option(None, "--threads", min=1, help="CPU threads for torch (default 1, "
                                                                         "on any core count: a seed's run then "
                                                                         "does not depend on it)."),
    domain: Optional[Path] = typer.Option(None, "--domain", help="A domain folder (written by 'proofgym domain "
                                                                 "init') to train on instead of the grant rules: "
                                                                 "its train split trains, its held-out split is "
                                                                 "scored per deciding rule."),
) -> None:
    try:
        from proofgym.training import DemoSettings, prefer_passive_waiting, run_demo

        prefer_passive_waiting()  # before torch loads OpenMP
        import torch  # noqa: F401  (the train extra: fail here with a clear message, not mid-run)
    except ImportError as exc:
        print_error(f"the demo needs the train extra (pip install 'proofgym[train]'): {exc}")
        raise typer.Exit(2) from None
    settings = DemoSettings.quick() if quick else DemoSettings()
    if threads is not None:
        settings = dataclasses.replace(settings, threads=threads)
    try:
        run_demo(out, seed=seed, steps=steps, settings=settings, cache_dir=cache_dir, console=console,
                 domain=domain)
    except OSError as exc:  # an output or cache folder that cannot be written
        print_error(exc)
        raise typer.Exit(2) from None
    except (KeyError, ValueError) as exc:  # a domain folder that cannot be loaded or trained on
        print_error(exc.args[0] if isinstance(exc, KeyError) else exc)
        raise typer.Exit(2) from None


# The help states the goal and the stop rule in the words the run prints (one text for both).
demo_command.__doc__ = f"""Build a tiny model locally and train it by GRPO against the embedded rule kernel.

Prints held-out decision accuracy per rule branch before and after, with the certified share, and PASSED when
{DEMO_GOAL_RULE} (NOT REACHED otherwise; the exit status is 0 either way). Stops early once {DEMO_STOP_RULE}.
"""
