"""Rollout-loop overhead: what ``run_rollout`` adds to an environment's own step time.

Two environments, each driven by a scripted policy:
- ``null``: a tool environment whose steps do nothing (``--steps`` steps per episode), so the figure is
  the loop's own cost per step (policy call, worker-thread hop, trace records, messages);
- ``grant_eligibility``: the single-turn rulebook environment answered with the gold completion
  (the real reward path: parse, kernel + proof check, shaping).

The baseline, measured in the same run, steps a fresh environment instance directly (make, reset, the
same actions, close) in a plain loop. Printed per environment: the baseline and loop time per step,
the overhead per step and the ratio; then rollouts/s with 1, 16 and 64 rollouts in flight on one
event loop. Each figure is the median of ``--runs`` runs.

    python benchmarks/rollout_loop.py [--rollouts 200] [--steps 20] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from proofgym.domains import gold_completion
from proofgym.envs import Observation, Tool, ToolEnv, ToolResult, make, register_env
from proofgym.policies import ScriptedPolicy
from proofgym.rollouts import run_rollout

CONCURRENCY = (1, 16, 64)


class NullEnv(ToolEnv):
    """Steps that cost nothing: ``noop`` until the last turn, which ends the episode."""

    def __init__(self, *, steps: int = 20) -> None:
        super().__init__([Tool("noop", "Do nothing.")], max_turns=steps)
        self.steps = steps

    def _reset(self, seed: int) -> Observation:
        self._turn_count = 0
        return Observation("Do nothing.")

    def _call_tool(self, call) -> ToolResult:
        self._turn_count += 1
        return ToolResult(Observation("ok"), {"noop": 0.01}, done=self._turn_count == self.steps)


def median(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def direct(env_name: str, config: dict, plans: list[list], seeds: list[int]) -> None:
    for seed, plan in zip(seeds, plans, strict=True):
        with make(env_name, **config) as env:
            env.reset(seed)
            for action in plan:
                if env.step(action).done:
                    break


def looped(env_name: str, config: dict, plans: list[list], seeds: list[int], concurrency: int) -> None:
    async def main() -> None:
        gate = asyncio.Semaphore(concurrency)

        async def one(seed: int, plan: list) -> None:
            async with gate:
                result = await run_rollout(env_name, seed=seed, policy=ScriptedPolicy(plan), env_config=config)
                assert result.status == "ok", result.error

        await asyncio.gather(*(one(seed, plan) for seed, plan in zip(seeds, plans, strict=True)))

    asyncio.run(main())


def bench(label: str, env_name: str, config: dict, plans: list[list], seeds: list[int], runs: int) -> None:
    steps = sum(len(plan) for plan in plans)
    base = median(lambda: direct(env_name, config, plans, seeds), runs)
    loop = median(lambda: looped(env_name, config, plans, seeds, 1), runs)
    per_base, per_loop = base / steps * 1e6, loop / steps * 1e6
    print(f"{label}: {len(plans)} rollouts, {steps} steps")
    print(f"  direct env.step loop (baseline): {per_base:9.1f} us/step")
    print(f"  run_rollout, 1 in flight:        {per_loop:9.1f} us/step  overhead {per_loop - per_base:8.1f} us/step"
          f"  ({loop / base:.2f}x the baseline)")
    for concurrency in CONCURRENCY:
        elapsed = median(lambda c=concurrency: looped(env_name, config, plans, seeds, c), runs)
        print(f"  {concurrency:3d} in flight: {len(plans) / elapsed:9.1f} rollouts/s"
              f"  {elapsed / steps * 1e6:9.1f} us/step  (baseline {len(plans) / base:9.1f} rollouts/s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rollouts", type=int, default=200)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    register_env("null-bench", NullEnv)
    seeds = list(range(args.rollouts))
    null_plans = [[{"tool": "noop"}] * args.steps for _ in seeds]
    bench("null environment", "null-bench", {"steps": args.steps}, null_plans, seeds, args.runs)

    with make("grant_eligibility") as env:
        gold_plans = []
        for seed in seeds:
            env.reset(seed)
            gold_plans.append([gold_completion(env.domain, env.record)])
    bench("grant_eligibility (gold answers)", "grant_eligibility", {}, gold_plans, seeds, args.runs)


if __name__ == "__main__":
    from _record import record

    record("rollout_loop", main)
