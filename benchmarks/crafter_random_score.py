"""The random baseline's Crafter score over many episodes, straight on the environment (no rollout loop), beside
the published 1.6 (Hafner 2021): a check of the environment and the score formula with a tighter interval than
the 100 episodes of ``configs/eval/crafter_baseline_random.toml`` give.

    python benchmarks/crafter_random_score.py --episodes 500 --first-seed 1000
"""

from __future__ import annotations

import argparse
import math
import random
import time

from proofgym.crafter import ACHIEVEMENTS, RandomAgent
from proofgym.envs import make

PUBLISHED_RANDOM = 1.6


def score(episodes: list[dict[str, int]]) -> float:
    rates = [100.0 * sum(counts[name] > 0 for counts in episodes) / len(episodes) for name in ACHIEVEMENTS]
    return math.exp(sum(math.log1p(rate) for rate in rates) / len(rates)) - 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=500)
    parser.add_argument("--first-seed", type=int, default=1000)
    args = parser.parse_args()
    agent, episodes, lengths = RandomAgent(), [], []
    started = time.perf_counter()
    with make("crafter", max_turns=10_000) as env:
        for seed in range(args.first_seed, args.first_seed + args.episodes):
            env.reset(seed)
            turn = 0
            while True:
                turn += 1
                action = agent.decide("", seed=seed, turn=turn)[0]
                result = env.step({"tool": "interact", "args": {"action": action}})
                if result.done:
                    break
            episodes.append(result.info["achievements"])
            lengths.append(result.info["world_step"])
    rng = random.Random(0)
    boots = sorted(score([rng.choice(episodes) for _ in episodes]) for _ in range(2000))
    print(f"random agent, {len(episodes)} episodes (seeds {args.first_seed}-{args.first_seed + args.episodes - 1}), "
          f"mean length {sum(lengths) / len(lengths):.1f} steps, {time.perf_counter() - started:.0f} s")
    print(f"score {score(episodes):.2f} % (95% bootstrap interval {boots[50]:.2f} - {boots[1950]:.2f}); "
          f"published random {PUBLISHED_RANDOM}")
    for name in ACHIEVEMENTS:
        rate = 100.0 * sum(counts[name] > 0 for counts in episodes) / len(episodes)
        if rate:
            print(f"  {name:<20} {rate:5.1f} %")


if __name__ == "__main__":
    from _record import record

    record("crafter_random_score", main)
