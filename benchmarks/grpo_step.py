"""Where a step of the demo's compact GRPO loop spends its time, and what the reward path costs it.

On the demo's tiny model (after a short format warm-up, so that completions parse and are verified), it runs
``--steps`` GRPO steps of 16 prompts x 8 samples twice, from the same weights and seed:
- with the real reward path (parser -> verification runtime -> embedded rule kernel -> shaper);
- with a baseline reward function that parses nothing and verifies nothing (a constant reward per position in
  the group, so every group still trains);
and prints the median step time of each, its split into generation / scoring / training, and the ratio of the
real step to the baseline step, i.e. what verification adds to a training step (goal: scoring under 5 % of it).
It also runs, from the same weights, the two cheaper steps that were tried for the demo and dropped: bf16 autocast
and one gradient step per generation, and prints each against the demo's step. Median of the steps after the first two
(warm-up).

    python benchmarks/grpo_step.py [--steps 12] [--threads 1]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import tempfile

import torch

from proofgym.rewards import ScoredItem
from proofgym.policies import build_tiny_model
from proofgym.training import (
    CompactGRPO,
    DemoSettings,
    CompactGRPOConfig,
    SFTConfig,
    demo_completion,
    demo_rows,
    demo_run_config,
    sft_warmup,
)


class ConstantRewards:
    """The baseline: a reward from the completion's place in its group, no parsing, no verification."""

    def score(self, prompts, completions, refs):
        return [ScoredItem(index=i, reward=float(i % 2), outcome="certified", components={}, reason="baseline")
                for i in range(len(completions))]

    def close(self) -> None:
        pass


# The demo's GRPO settings (dynamic sampling off, so that every step generates and trains the same amount), and the
# cheaper variants that learned worse (see the README's demo section).
CURRENT = dataclasses.replace(DemoSettings().grpo, dynamic_sampling=False)
VARIANTS = {"bf16 autocast": dataclasses.replace(CURRENT, precision="bf16"),
            "one update per generation": dataclasses.replace(CURRENT, updates_per_generation=1)}


def run(model, tokenizer, state, reward_fn, rows, steps: int,
        config: CompactGRPOConfig = CURRENT) -> list[dict[str, float]]:
    model.load_state_dict(state)
    torch.manual_seed(0)
    loop = CompactGRPO(model, tokenizer, reward_fn, rows, config=config, seed=0)
    return [loop.step().metrics for _ in range(steps)][2:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    rows = demo_rows(0, 2000)
    with tempfile.TemporaryDirectory() as cache:
        model, tokenizer = build_tiny_model(cache, seed=0)
    sft_warmup(model, tokenizer, [(r["prompt"], demo_completion(r["gold"], r["source_facts"])) for r in rows],
               config=SFTConfig(steps=60))
    state = {k: v.clone() for k, v in model.state_dict().items()}
    real_fn = demo_run_config().reward_function()
    real = run(model, tokenizer, state, real_fn, rows, args.steps)
    variants = {name: run(model, tokenizer, state, real_fn, rows, args.steps, config)
                for name, config in VARIANTS.items()}
    real_fn.close()
    base = run(model, tokenizer, state, ConstantRewards(), rows, args.steps)

    def med(metrics, key):
        return statistics.median(m[key] for m in metrics)

    print(f"GRPO step, 16 prompts x 8 samples, tiny model, {args.threads} thread(s), median of {len(real)} steps")
    for name, metrics in (("real reward path", real), ("baseline (no verification)", base),
                          *variants.items()):
        print(f"  {name:28s} step {med(metrics, 'step_s'):.3f} s = generate {med(metrics, 'generate_s'):.3f} "
              f"+ score {med(metrics, 'score_s'):.4f} + train {med(metrics, 'train_s'):.3f}")
    print(f"  completions that parsed and were verified on the real path: {med(real, 'format_ok'):.0%}")
    ratio = med(real, "step_s") / med(base, "step_s")
    share = med(real, "score_s") / med(real, "step_s")
    print(f"real / baseline step time: {ratio:.3f}x; scoring share of the real step: {share:.1%} (goal < 5 %)")
    for name, metrics in variants.items():
        print(f"{name} / the demo's step: {med(metrics, 'step_s') / med(real, 'step_s'):.2f}x")


if __name__ == "__main__":
    from _record import record

    record("grpo_step", main)
