"""One GRPO step on the tiny model: TRL's GRPOTrainer (through proofgym) against proofgym's compact loop.

Both start from the same format-warmed model (``--warmup`` supervised steps, as ``proofgym demo`` and
``configs/run/train_grant_tiny.yaml`` do) and run the same settings: ``--prompts`` demo prompts x
``--group`` samples at temperature 1, ``--tokens`` new tokens at most, ``--updates`` gradient steps
per generation, KL to the warmed model, the same curriculum, one torch thread. A step is one
generation and its updates (TRL counts each update as a step: two of its steps make one here).
Prints the median step time of each over ``--steps`` steps (after one untimed step), the ratio, and
with ``--profile`` the functions TRL spends its step in (cProfile, cumulative time). TRL runs with
proofgym's engine (``train.grpo.engine: proofgym``, the default: its sampling and shared-prompt log-probabilities)
and, with ``--engine both``, also with TRL's own (``engine: trl``).

    python benchmarks/trl_vs_compact.py [--steps 8] [--warmup 200] [--prompts 16] [--group 8] [--tokens 24]
                                        [--updates 2] [--dynamic] [--profile] [--default-shape]
                                        [--engine {proofgym,trl,both}]
"""

from __future__ import annotations

import argparse
import copy
import cProfile
import io
import pstats
import statistics
import tempfile
import time
import warnings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--prompts", type=int, default=16)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=24)
    parser.add_argument("--updates", type=int, default=2)
    parser.add_argument("--dynamic", action="store_true", help="dynamic sampling in both (timings then vary "
                                                               "with the number of sampling rounds)")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--engine", choices=("proofgym", "trl", "both"), default="both",
                        help="training.grpo.engine of the TRL run (both: one TRL run with each)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--default-shape", action="store_true", help="proofgym:tiny's default shape (1.84 M "
                        "parameters) instead of the demo's and train_grant_tiny.yaml's (0.69 M)")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")

    import torch

    from proofgym.training._demo import HELDOUT_SEED, DemoSettings, _random_decision_example
    from proofgym.training._demo_task import demo_rows, demo_run_config
    from proofgym.training._sft import SFTConfig, sft_warmup
    from proofgym.policies._tiny import build_tiny_model

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    with tempfile.TemporaryDirectory() as cache:
        model, tokenizer = build_tiny_model(cache, seed=args.seed,
                                            config=None if args.default_shape else DemoSettings().model)
    heldout = demo_rows(HELDOUT_SEED, 1000)
    rows = demo_rows(args.seed, 8000, exclude=heldout)
    started = time.perf_counter()
    sft_warmup(model, tokenizer, _random_decision_example(rows, ("permit", "deny")),
               config=SFTConfig(steps=args.warmup, batch_size=64, learning_rate=1e-3), seed=args.seed)
    print(f"format warm-up: {args.warmup} steps in {time.perf_counter() - started:.0f} s")
    compact = compact_steps(copy.deepcopy(model), tokenizer, rows, demo_run_config(), args)
    engines = ("proofgym", "trl") if args.engine == "both" else (args.engine,)
    trl = {engine: trl_steps(copy.deepcopy(model), tokenizer, rows, args, engine) for engine in engines}
    c = statistics.median(compact["step"])
    print(f"one step = {args.prompts} prompts x {args.group} samples, <= {args.tokens} tokens, {args.updates} "
          f"update(s) per generation, dynamic sampling {'on' if args.dynamic else 'off'}; median of {args.steps}")
    print(f"  compact loop                  {c:6.2f} s/step  (generate {statistics.median(compact['generate']):.2f} "
          f"s, score {statistics.median(compact['score']):.2f} s, train {statistics.median(compact['train']):.2f} s)")
    for engine, result in trl.items():
        t = statistics.median(result["step"])
        print(f"  TRL, engine: {engine:<14}  {t:6.2f} s/step  ratio TRL / compact: x{t / c:.2f}")
    for engine, result in trl.items():
        if result.get("profile"):
            print(f"TRL, engine: {engine}\n{result['profile']}")


def compact_steps(model, tokenizer, rows, run, args) -> dict[str, list[float]]:
    from proofgym.training import BranchCurriculum, CompactGRPO, CompactGRPOConfig

    config = CompactGRPOConfig(prompts_per_step=args.prompts, group_size=args.group, max_new_tokens=args.tokens,
                        updates_per_generation=args.updates, dynamic_sampling=args.dynamic)
    reward_fn = run.reward_function()
    loop = CompactGRPO(model, tokenizer, reward_fn, rows, config=config, seed=args.seed,
                       curriculum=BranchCurriculum(rows, seed=args.seed, key="cell", replay=0.25))
    times: dict[str, list[float]] = {"step": [], "generate": [], "score": [], "train": []}
    try:
        for i in range(args.steps + 1):
            metrics = loop.step().metrics
            if i:
                for key, name in (("step", "step_s"), ("generate", "generate_s"), ("score", "score_s"),
                                  ("train", "train_s")):
                    times[key].append(metrics[name])
    finally:
        reward_fn.close()
    return times


def trl_steps(model, tokenizer, rows, args, engine: str) -> dict[str, object]:
    from transformers import TrainerCallback

    from proofgym.config import parse_run_config
    from proofgym.training import build_grpo_trainer
    from proofgym.training.trl._run import curriculum
    from proofgym.training._demo_task import DEMO_RUN_CONFIG

    run = parse_run_config({
        **DEMO_RUN_CONFIG,
        "training": {"model": "proofgym:tiny", "dataset": {"domain": "grant_eligibility", "prompt_format": "compact"},
                  "curriculum": {"key": "cell", "replay": 0.25}, "cpu_threads": 1, "seed": args.seed,
                  "grpo": {"group_size": args.group, "batch_size": args.prompts, "learning_rate": 3e-4,
                           "warmup_steps": 10, "min_lr_ratio": 0.1, "kl_beta": 0.05,
                           "max_completion_length": args.tokens, "updates_per_generation": args.updates,
                           "dynamic_sampling": args.dynamic, "steps": (args.steps + 1) * args.updates,
                           "top_k": 50, "engine": engine}},
    })
    ends: list[float] = []

    class _Clock(TrainerCallback):
        def on_step_end(self, *a, **k):
            ends.append(time.perf_counter())

    profiler = cProfile.Profile() if args.profile else None
    with tempfile.TemporaryDirectory() as out:
        trainer = build_grpo_trainer(run, model, rows, tokenizer=tokenizer, output_dir=out, callbacks=[_Clock()],
                                     curriculum=curriculum(run.training, rows), config_overrides={"disable_tqdm": True})

        class _Profile(TrainerCallback):
            def on_step_end(self, args_, state, *a, **k):
                if profiler is not None and state.global_step == args.updates:
                    profiler.enable()

        trainer.add_callback(_Profile())
        try:
            trainer.train()
        finally:
            if profiler is not None:
                profiler.disable()
            trainer.reward_funcs[0].close()
    # A step of this benchmark: one generation and its `updates` updates; the first is untimed.
    steps = [ends[i + args.updates] - ends[i] for i in range(args.updates - 1, len(ends) - args.updates, args.updates)]
    result: dict[str, object] = {"step": steps}
    if profiler is not None:
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(45)
        result["profile"] = text.getvalue()
    return result


if __name__ == "__main__":
    from _record import record

    record("trl_vs_compact", main)
