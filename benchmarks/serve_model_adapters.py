"""What does a LoRA adapter cost ``proofgym serve-model --enable-lora``, and what does one RL weight update through
the adapter endpoints cost the trainer, against the in-process state-dict copy it replaces?

One process: the model is loaded once and served by ``create_model_app(..., enable_lora=True)`` under real uvicorn
on loopback (a thread of this process); the client is httpx. A LoRA adapter (rank ``--rank``, all linear layers,
its B matrices drawn so that it changes the outputs) is written with peft's ``save_pretrained`` and loaded through
``POST /v1/load_lora_adapter``. Per run, the 8 chat prompts of ``benchmarks/serve_model.py`` as 8 concurrent greedy
requests (decoded together), ``max_tokens`` each:

- base: all 8 ask for the base model (the baseline of the same run);
- adapter: all 8 ask for the adapter;
- mixed: 4 ask for the base model and 4 for the adapter (one batch, peft's mixed-adapter forward).

Then ``--syncs`` weight updates the way the RL trainer makes them with ``[policy_server]``: save the adapter, load it
under a new name, unload the previous one (seconds per update), against the in-process trainer's update (a
state-dict copy of the whole model into its served copy, ``PolicyServer.sync``).

Printed: generated tokens, tokens per second, wall and CPU seconds of the row (the whole process), medians of
``--runs`` runs after a warm-up run, each row's ratio of tokens/s to the base row's in the same run (median of the
runs' ratios); the median seconds of an adapter update and of a state-dict copy. The load average before and after.

    python benchmarks/serve_model_adapters.py [--model proofgym:tiny|smollm2|DIR] [--runs 3] [--max-tokens 64]
        [--rank 16] [--syncs 10] [--threads 2]
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _threaded_server import ThreadedServer  # noqa: E402  (the test suite's uvicorn-in-a-thread helper)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import processor  # noqa: E402  (benchmarks/_machine.py)
from _record import record  # noqa: E402
from serve_model import QUESTIONS  # noqa: E402  (the prompts of benchmarks/serve_model.py)


def ask_all(http: Any, models: list[str], max_tokens: int) -> tuple[float, float, int]:
    """The 8 prompts as concurrent requests, request ``i`` for ``models[i]``: wall s, CPU s, tokens generated."""
    counts = [0] * len(QUESTIONS)

    def send(i: int) -> None:
        response = http.post("/v1/chat/completions", json={
            "model": models[i], "messages": [{"role": "user", "content": QUESTIONS[i]}], "temperature": 0,
            "max_tokens": max_tokens})
        response.raise_for_status()
        counts[i] = len(response.json()["choices"][0]["token_ids"])

    wall, cpu = time.perf_counter(), time.process_time()
    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(QUESTIONS))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - wall, time.process_time() - cpu, sum(counts)


def make_adapter(model: Any, folder: Path, rank: int, seed: int) -> Any:
    import torch
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(seed)
    peft_model = get_peft_model(copy.deepcopy(model), LoraConfig(r=rank, lora_alpha=2 * rank,
                                                                  target_modules="all-linear", task_type="CAUSAL_LM"))
    with torch.no_grad():
        for name, parameter in peft_model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(std=0.02)
    peft_model.save_pretrained(str(folder))
    return peft_model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="proofgym:tiny")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--syncs", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2, help="CPU threads of the engine")
    args = parser.parse_args()
    if min(args.runs, args.max_tokens, args.rank, args.syncs) < 1:
        parser.error("--runs, --max-tokens, --rank and --syncs must be at least 1")

    from proofgym.training import prefer_passive_waiting

    prefer_passive_waiting()  # before torch is imported, as the proofgym command does

    import httpx
    import torch

    from proofgym.model_server import GenerationBackend, create_model_app, load_model

    load_before = os.getloadavg()
    loaded = load_model(args.model)
    reference = copy.deepcopy(loaded.model)
    engine = GenerationBackend(loaded, max_batch_size=len(QUESTIONS), threads=args.threads)
    work = Path(tempfile.mkdtemp(prefix="serve-model-adapters-"))
    trainer = make_adapter(reference, work / "adapter", args.rank, seed=1)
    base, half = loaded.name, len(QUESTIONS) // 2
    rows = {"base": [base] * len(QUESTIONS), "adapter": ["a"] * len(QUESTIONS),
            "mixed": [base] * half + ["a"] * (len(QUESTIONS) - half)}
    measured: dict[str, list[tuple[float, float, int]]] = {name: [] for name in rows}
    with ThreadedServer(create_model_app(engine, max_tokens_limit=args.max_tokens, enable_lora=True),
                        what="serve-model --enable-lora") as server, \
            httpx.Client(base_url=server.url, timeout=600) as http:
        http.post("/v1/load_lora_adapter", json={"lora_name": "a", "lora_path": str(work / "adapter")}) \
            .raise_for_status()
        for run in range(args.runs + 1):  # run 0 warms up
            for name, models in rows.items():
                result = ask_all(http, models, args.max_tokens)
                if run:
                    measured[name].append(result)

        sync_s, previous = [], "a"
        for k in range(args.syncs):
            started = time.perf_counter()
            folder = work / f"step-{k}"
            trainer.save_pretrained(str(folder))
            name = f"policy-step-{k}"
            http.post("/v1/load_lora_adapter", json={"lora_name": name, "lora_path": str(folder)}).raise_for_status()
            http.post("/v1/unload_lora_adapter", json={"lora_name": previous}).raise_for_status()
            sync_s.append(time.perf_counter() - started)
            previous = name
    engine.close()

    served = copy.deepcopy(reference)
    copy_s = []
    for _ in range(args.syncs):
        started = time.perf_counter()
        with torch.no_grad():
            target = served.state_dict()
            for key, value in reference.state_dict().items():
                target[key].copy_(value)
        copy_s.append(time.perf_counter() - started)

    parameters = sum(p.numel() for p in reference.parameters())
    adapter_parameters = sum(p.numel() for n, p in trainer.named_parameters() if "lora_" in n)
    print(f"model {args.model} ({parameters:,} parameters), adapter rank {args.rank} ({adapter_parameters:,} "
          f"parameters), {len(QUESTIONS)} concurrent greedy requests of max_tokens {args.max_tokens}, torch threads "
          f"{args.threads}; {processor()}; medians of {args.runs} runs after a warm-up run")
    print(f"{'row':<9}{'tokens':>8}{'tokens/s':>11}{'wall s':>9}{'CPU s':>8}{'x base':>9}")
    for name, results in measured.items():
        ratios = [(tokens / wall) / (base_tokens / base_wall) for (wall, _, tokens), (base_wall, _, base_tokens)
                  in zip(results, measured["base"])]
        wall = statistics.median(r[0] for r in results)
        cpu = statistics.median(r[1] for r in results)
        tokens = int(statistics.median(r[2] for r in results))
        rate = statistics.median(r[2] / r[0] for r in results)
        print(f"{name:<9}{tokens:>8}{rate:>11.1f}{wall:>9.2f}{cpu:>8.2f}{statistics.median(ratios):>9.2f}")
    print(f"weight update through the adapter endpoints (save, load, unload the previous): median "
          f"{statistics.median(sync_s) * 1000:.1f} ms of {args.syncs}; in-process state-dict copy of the whole "
          f"model: median {statistics.median(copy_s) * 1000:.1f} ms")
    load_after = os.getloadavg()
    print(f"load average before {load_before[0]:.1f} / {load_before[1]:.1f}, after {load_after[0]:.1f} / "
          f"{load_after[1]:.1f}")


if __name__ == "__main__":
    record("serve_model_adapters", main)
