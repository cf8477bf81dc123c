"""Crafter throughput, in one run: bare ``crafter.Env`` against proofgym's environment against a full rollout over
the task app, then memory per concurrent rollout and rollouts per second at 1, 8 and 32 concurrent.

    python benchmarks/crafter_throughput.py [--steps 600] [--repeats 3] [--episode-steps 100] [--seeds 4]

Every figure is the median of ``--repeats`` runs. Goals (the issue's): proofgym's environment adds at most 10 % to
bare Crafter per action; the task app adds at most 2 ms per decision over the environment.

- bare: ``crafter.Env`` stepping uniformly random actions, rendering every frame (as crafter does), on the world
  proofgym's env plays for seed 0 (before, its later episodes' worlds made bare 7-10 % cheaper per action here);
- env (rendered): proofgym's ``crafter`` with the engine rendering every frame as bare does (frames kept, none
  stored), plus the text view, rewards and step info: the like-for-like ratio;
- env (text only): the default, which skips drawing frames (crafter's night noise is still drawn, so the episode
  is the same);
- rollout (in-process): ``run_rollout`` with the ``crafter-random`` policy: the agent loop and trace events;
- task app: ``POST /rollout`` to ``proofgym serve crafter`` (a subprocess) with the same policy, seeds and episodes.

Per decision figures of the rollouts are over episodes whose worlds are already cached in the measuring process
(a warm-up pass first), so that worldgen, which happens once per seed, is not counted as overhead of the loop.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import time
from typing import Any

import crafter
import httpx

from proofgym.crafter import ACTIONS, RandomAgent
from proofgym.envs import make
from proofgym.policies import build_policy
from proofgym.rollouts import run_rollout

KEY = "bench-key"


def bare_us_per_action(steps: int) -> float:
    env = crafter.Env(seed=0)

    def reset() -> None:
        # The world proofgym's env.reset(0) plays (crafter seeds episode k of Env(seed=s) with hash((s, k))), every
        # time: a new episode's world would hold other creatures, whose cost is not overhead of either.
        env._episode = 0
        env.reset()

    reset()
    agent, spent = RandomAgent(), 0.0
    for turn in range(1, steps + 1):
        action = ACTIONS.index(agent.decide("", seed=0, turn=turn)[0])
        started = time.perf_counter()
        _, _, done, _ = env.step(action)
        spent += time.perf_counter() - started
        if done:
            reset()  # worldgen is not a step: not timed, here or below
    return spent / steps * 1e6


def env_us_per_action(steps: int, **config: Any) -> float:
    agent = RandomAgent()
    spent = 0.0
    with make("crafter", max_turns=100_000, **config) as env:
        env.reset(0)
        for turn in range(1, steps + 1):
            action = {"tool": "interact", "args": {"action": agent.decide("", seed=0, turn=turn)[0]}}
            started = time.perf_counter()
            result = env.step(action)
            spent += time.perf_counter() - started
            if result.done:
                env.reset(0)
        return spent / steps * 1e6


def env_config(episode_steps: int) -> dict[str, Any]:
    return {"max_turns": episode_steps, "env_params": {"max_steps_per_episode": episode_steps}}


def env_episode_s(seeds: list[int], episode_steps: int) -> tuple[float, int]:
    """Seconds and decisions of the random agent's episodes of ``seeds`` straight on the environment."""
    agent, decisions = RandomAgent(), 0
    started = time.perf_counter()
    with make("crafter", **env_config(episode_steps)) as env:
        for seed in seeds:
            env.reset(seed)
            turn = 0
            while True:
                turn += 1
                decisions += 1
                action = agent.decide("", seed=hash((0, seed)), turn=turn)[0]
                if env.step({"tool": "interact", "args": {"action": action}}).done:
                    break
    return time.perf_counter() - started, decisions


def rollout_episode_s(seeds: list[int], episode_steps: int) -> tuple[float, int]:
    policy = build_policy("crafter-random", {})

    async def run() -> int:
        total = 0
        for seed in seeds:
            result = await run_rollout("crafter", seed=seed, policy=policy, env_config=env_config(episode_steps))
            total += result.length
        return total

    started = time.perf_counter()
    decisions = asyncio.run(run())
    return time.perf_counter() - started, decisions


class TaskApp:
    def __init__(self) -> None:
        env = {**os.environ, "ENVIRONMENT_API_KEY": KEY}
        command = [sys.executable, "-c", "from proofgym.cli import main; main()", "serve", "crafter", "--port", "0",
                   "--policy", "crafter-random", "--allow-env-override", "*", "--max-concurrency", "64",
                   "--traces", "/tmp/proofgym-crafter-bench.db", "--log-level", "info"]
        self.process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert self.process.stdout is not None
        for line in self.process.stdout:
            found = re.search(r"(http://127\.0\.0\.1:\d+)", line)
            if found:
                self.url = found.group(1)
                break
        else:
            raise RuntimeError("proofgym serve crafter did not start")
        for _ in range(600):
            try:
                if httpx.get(self.url + "/health", headers={"X-API-Key": KEY}, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)

    def rss_kib(self) -> int:
        with open(f"/proc/{self.process.pid}/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))

    async def rollouts(self, seeds: list[int], episode_steps: int, concurrency: int) -> tuple[float, int, int]:
        """Seconds, decisions and the app's peak RSS (KiB) for ``seeds`` at ``concurrency`` at once."""
        peak = self.rss_kib()
        slots = asyncio.Semaphore(concurrency)
        async with httpx.AsyncClient(base_url=self.url, headers={"X-API-Key": KEY}, timeout=600) as client:

            async def one(seed: int) -> int:
                nonlocal peak
                body = {"run_id": "bench", "env": {"env_name": "crafter", "seed": seed,
                                                   "config": env_config(episode_steps)},
                        "policy": {"policy_name": "crafter-random", "config": {}},
                        "record": {"return_trace": False, "trace_format": "compact"}, "mode": "eval"}
                async with slots:
                    response = await client.post("/rollout", json=body)
                    peak = max(peak, self.rss_kib())
                response.raise_for_status()
                return int(response.json()["metrics"]["num_steps"])

            started = time.perf_counter()
            steps = await asyncio.gather(*(one(seed) for seed in seeds))
        return time.perf_counter() - started, sum(steps), peak

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=600, help="actions per throughput run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--episode-steps", type=int, default=100, help="crafter steps per rollout episode")
    parser.add_argument("--seeds", type=int, default=4, help="episodes per per-decision run")
    parser.add_argument("--concurrency-repeats", type=int, default=3, help="runs per concurrency level")
    args = parser.parse_args()
    steps, repeats = args.steps, args.repeats

    # The three are measured in turn within each repeat, so that a change of load on the machine hits all three.
    runs: dict[str, list[float]] = {"bare": [], "rendered": [], "text": []}
    for _ in range(repeats):
        runs["bare"].append(bare_us_per_action(steps))
        runs["rendered"].append(env_us_per_action(steps, frames={"store": True, "every": 10_000, "max_frames": 1}))
        runs["text"].append(env_us_per_action(steps))
    bare, rendered, text = (statistics.median(runs[name]) for name in ("bare", "rendered", "text"))
    print(f"per action (median of {repeats} x {steps} random actions, measured in turn):")
    print(f"  bare crafter.Env (rendering)        {bare:9.0f} us   {1e6 / bare:7.0f} steps/s")
    print(f"  proofgym env, rendering as bare     {rendered:9.0f} us   {1e6 / rendered:7.0f} steps/s   "
          f"ratio {rendered / bare:.3f} (goal <= 1.10)")
    print(f"  proofgym env, text only (default)   {text:9.0f} us   {1e6 / text:7.0f} steps/s   ratio {text / bare:.3f}")

    seeds = list(range(args.seeds))
    env_episode_s(seeds, args.episode_steps)  # warm-up: worlds generated and cached in this process
    app = TaskApp()
    try:
        asyncio.run(app.rollouts(seeds, args.episode_steps, 1))  # warm-up: the app's world cache
        env_runs, rollout_runs, app_runs = [], [], []
        for _ in range(repeats):  # in turn, as above
            env_runs.append(env_episode_s(seeds, args.episode_steps))
            rollout_runs.append(rollout_episode_s(seeds, args.episode_steps))
            app_runs.append(asyncio.run(app.rollouts(seeds, args.episode_steps, 1))[:2])
        env_ms = statistics.median(s / d for s, d in env_runs) * 1e3
        loop_ms = statistics.median(s / d for s, d in rollout_runs) * 1e3
        app_ms = statistics.median(s / d for s, d in app_runs) * 1e3
        print(f"per decision ({len(seeds)} episodes of {args.episode_steps} steps, cached worlds, median of {repeats}):")
        print(f"  proofgym env                        {env_ms:9.3f} ms")
        print(f"  rollout in-process (run_rollout)    {loop_ms:9.3f} ms   +{loop_ms - env_ms:.3f} ms over the env")
        print(f"  task app POST /rollout              {app_ms:9.3f} ms   +{app_ms - env_ms:.3f} ms over the env "
              f"(goal <= 2 ms)")

        idle = app.rss_kib()
        print(f"concurrent rollouts through the task app (fresh worlds, {args.episode_steps} steps each):")
        next_seed = 1000
        for concurrency in (1, 8, 32):
            results = []
            for _ in range(args.concurrency_repeats):
                batch = list(range(next_seed, next_seed + concurrency))
                next_seed += concurrency
                results.append(asyncio.run(app.rollouts(batch, args.episode_steps, concurrency)))
            seconds = statistics.median(r[0] for r in results)
            peak = max(r[2] for r in results)
            print(f"  {concurrency:>2} at once: {concurrency / seconds:6.2f} rollouts/s, "
                  f"peak RSS {peak / 1024:6.1f} MiB (idle {idle / 1024:.1f} MiB; "
                  f"{(peak - idle) / 1024 / concurrency:5.2f} MiB per concurrent rollout)")
    finally:
        app.close()


if __name__ == "__main__":
    from _record import record

    record("crafter_throughput", main)
