"""What each trainer adapter adds to the cost of scoring one GRPO step.

One step is ``--prompts`` grant-eligibility prompts x ``--group`` completions (distinct records; the completions of a
group are the gold answer or its flipped decision, as a policy's samples repeat themselves). Every figure is the
median of ``--runs`` steps, each on fresh records so that no step is answered from the cache of an earlier one:

- baseline: ``RewardFunction.score`` on the step (parser -> runtime -> kernel -> shaper);
- TRL: the ``TRLRewardFunction`` call TRL makes (reference columns, metrics sent to ``log_metric``);
- veRL: ``compute_score`` once per completion (NaiveRewardManager), and ``compute_score_batch`` on the step
  (BatchRewardManager);
- OpenRLHF: ``POST /get_reward`` of the step over HTTP to the reward server on 127.0.0.1 (uvicorn in a thread),
  prompt + response concatenated, labels as JSON text.

Each line prints the time per step, the time per completion and the ratio to the baseline.

    python benchmarks/trainer_adapters.py [--prompts 16] [--group 8] [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import threading
import time

from proofgym.domains import build_dataset, get_domain, gold_completion
from proofgym.integrations import (
    compute_score,
    compute_score_batch,
    domain_run_config,
    reward_function_for_run_config,
    trl_reward_function,
)
from proofgym.reward_server import create_reward_app

DOMAIN = "grant_eligibility"


def make_steps(prompts: int, group: int, runs: int) -> list[dict]:
    """``runs + 1`` steps of distinct records (the first one warms up), each ``prompts x group`` completions."""
    domain = get_domain(DOMAIN)
    steps = []
    for seed in range(100, 100 + runs + 1):
        rows = build_dataset(domain, seed=seed, n=prompts)
        gold = [gold_completion(domain, record) for record in domain.generate(seed, prompts)]
        step_rows, completions = [], []
        for row, answer in zip(rows, gold):
            flipped = answer.replace('"permit"', '"@"').replace('"deny"', '"permit"').replace('"@"', '"deny"')
            for k in range(group):
                step_rows.append(row)
                completions.append(answer if k % 2 == 0 else flipped)
        steps.append({"rows": step_rows, "completions": completions})
    return steps


def timed(fn, steps: list[dict]) -> float:
    fn(steps[0])  # warm-up: imports, first kernel compile
    times = []
    for step in steps[1:]:
        start = time.perf_counter()
        fn(step)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=16)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    steps = make_steps(args.prompts, args.group, args.runs)
    n = args.prompts * args.group
    results: dict[str, float] = {}

    baseline_fn = domain_run_config(DOMAIN).reward_function()
    results["baseline RewardFunction.score"] = timed(
        lambda s: baseline_fn.score([r["prompt"] for r in s["rows"]], s["completions"], s["rows"]), steps)
    baseline_fn.close()

    trl = trl_reward_function(domain_run_config(DOMAIN))
    sink: dict[str, float] = {}
    results["TRL reward function"] = timed(
        lambda s: trl([r["prompt"] for r in s["rows"]], s["completions"], gold=[r["gold"] for r in s["rows"]],
                      source_facts=[r["source_facts"] for r in s["rows"]], log_metric=sink.__setitem__), steps)
    trl.close()

    # veRL: each run gets a cold shared reward function, so neither entry point reads the other's cache.
    for label, source, fn in (
        ("veRL compute_score x n", f"proofgym/{DOMAIN}",
         lambda s, src: [compute_score(src, c, {"gold": r["gold"], "source_facts": r["source_facts"]})
                         for c, r in zip(s["completions"], s["rows"])]),
        ("veRL compute_score_batch", f"proofgym:{DOMAIN}",
         lambda s, src: compute_score_batch([src] * len(s["rows"]), s["completions"],
                                            [{"gold": r["gold"], "source_facts": r["source_facts"]} for r in s["rows"]])),
    ):
        reward_function_for_run_config(source)
        results[label] = timed(lambda s, fn=fn, src=source: fn(s, src), steps)

    results["OpenRLHF POST /get_reward (HTTP)"] = time_http(steps)

    base = results["baseline RewardFunction.score"]
    print(f"one GRPO step: {args.prompts} prompts x {args.group} completions = {n} completions; "
          f"median of {args.runs} steps")
    for label, seconds in results.items():
        print(f"  {label:34s} {seconds * 1e3:8.2f} ms/step  {seconds / n * 1e6:8.1f} us/completion  "
              f"x{seconds / base:5.2f} of baseline")


def time_http(steps: list[dict]) -> float:
    import httpx
    import uvicorn

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_reward_app(domain_run_config(DOMAIN)), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            def post(step: dict) -> None:
                prompts = [r["prompt"] for r in step["rows"]]
                body = {"query": [p + c for p, c in zip(prompts, step["completions"])], "prompts": prompts,
                        "labels": [json.dumps({"gold": r["gold"], "source_facts": r["source_facts"]})
                                   for r in step["rows"]]}
                reply = client.post("/get_reward", json=body)
                reply.raise_for_status()

            return timed(post, steps)
    finally:
        server.should_exit = True
        thread.join(10)


if __name__ == "__main__":
    from _record import record

    record("trainer_adapters", main)
