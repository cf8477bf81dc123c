"""Is ``proofgym serve-model`` at least as fast as a bare ``model.generate`` loop for one request, and does it
serve 8 concurrent requests at least twice as fast in all? For each backend: torch (transformers) and, for a GGUF
model with llama-cpp-python installed, llama.cpp. Tokens per second, wall and CPU seconds.

One process: the model is loaded once per engine; the baseline is a bare loop of ``model.generate`` (transformers,
greedy, KV cache, one prompt at a time) over the torch engine's model; each server is ``create_model_app`` over its
backend under real uvicorn on loopback (a thread of this process), sent the same chat messages (the baseline gets
the torch engine's token ids of them), the same ``max_tokens``, ``temperature: 0``, over HTTP (httpx). The same
thread count everywhere (``--threads``: torch's intra-op threads for the baseline and the torch engine, llama.cpp's
threads for its engine) and OpenMP threads that sleep when they wait (``OMP_WAIT_POLICY=PASSIVE``, as every
``proofgym`` command that runs torch sets it). Per run, in this order:

- bare:       the 8 prompts one after another through ``model.generate``;
- <engine> 1: the 8 prompts as 8 requests one after another (one request at a time: the goal is >= 1.0x bare);
- <engine> 8: the 8 prompts as 8 concurrent requests (decoded together: the goal is >= 2x bare, in all);
- with ``--stagger-ms`` > 0, the torch engine only: the 8 prompts sent that far apart, to the server as it is
  (rows join the running batch between steps: continuous batching) and to one whose rows wait for the running batch
  to end (``continuous=False``): wall time and each request's latency.

Printed: each row's generated tokens, tokens per second, wall and CPU seconds (the whole process: server, client
and the engine's threads), medians of ``--runs`` runs after a warm-up run, and its ratio of tokens/s to bare's in
the same run (median of the runs' ratios); how many greedy answers equal bare's token for token; the load average
before and after. The client shares the machine (and this process's GIL) with the server, so its cost is counted in.

    python benchmarks/serve_model.py [--model proofgym:tiny|smollm2|FILE.gguf|...] [--backends torch,llama_cpp] \
        [--runs 3] [--max-tokens 64] [--threads 2] [--batch-window-ms 5] [--stagger-ms 0]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _threaded_server import ThreadedServer  # noqa: E402  (the test suite's uvicorn-in-a-thread helper)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import processor  # noqa: E402  (benchmarks/_machine.py)
from _requests import send_all  # noqa: E402

QUESTIONS = [
    "Is the sky blue on a clear day?",
    "Name three prime numbers.",
    "What is the capital of France?",
    "Write one sentence about the sea.",
    "Applicant: age 30, income 5. Eligible?",
    "Is 17 an even number?",
    "Say hello in Spanish.",
    "What colour is grass?",
]

#: One measurement: wall seconds, CPU seconds of the process, generated tokens, each answer's token ids.
Measure = tuple[float, float, int, list[list[int]]]


def timed(work: Callable[[], list[list[int]]]) -> Measure:
    wall, cpu = time.perf_counter(), time.process_time()
    answers = work()
    return time.perf_counter() - wall, time.process_time() - cpu, sum(len(a) for a in answers), answers


def bare_run(model: Any, prompts: list[list[int]], max_tokens: int, eos: list[int]) -> list[list[int]]:
    """Each prompt's generated token ids (up to and with the first end-of-sequence token) from ``model.generate``,
    one prompt at a time."""
    import torch

    answers = []
    with torch.inference_mode():
        for prompt in prompts:
            ids = torch.tensor([prompt])
            out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_tokens,
                                 do_sample=False, eos_token_id=eos, pad_token_id=eos[0])[0, len(prompt):].tolist()
            end = next((i + 1 for i, token in enumerate(out) if token in eos), len(out))
            answers.append(out[:end])
    return answers


def serve_run(http: Any, bodies: list[dict[str, Any]], concurrent: bool) -> list[list[int]]:
    """Each body's answer token ids, the bodies sent one after another or all at once."""
    answers: list[list[int]] = [[] for _ in bodies]

    def send(i: int) -> None:
        response = http.post("/v1/chat/completions", json=bodies[i])
        response.raise_for_status()
        answers[i] = response.json()["choices"][0]["token_ids"]

    send_all(len(bodies), send, concurrent=concurrent)
    return answers


def staggered_run(http: Any, bodies: list[dict[str, Any]], gap_s: float) -> tuple[float, list[float]]:
    """(wall seconds, each request's latency) of ``bodies`` sent ``gap_s`` apart."""
    latencies = [0.0] * len(bodies)

    def send(i: int) -> None:
        sent = time.perf_counter()
        http.post("/v1/chat/completions", json=bodies[i]).raise_for_status()
        latencies[i] = time.perf_counter() - sent

    started = time.perf_counter()
    threads = []
    for i in range(len(bodies)):
        threads.append(threading.Thread(target=send, args=(i,)))
        threads[-1].start()
        time.sleep(gap_s)
    for thread in threads:
        thread.join()
    return time.perf_counter() - started, latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="proofgym:tiny")
    parser.add_argument("--backends", default="torch,llama_cpp",
                        help="engines to serve with, comma-separated (llama_cpp: GGUF models, when installed)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2, help="CPU threads of the baseline and of every engine")
    parser.add_argument("--batch-window-ms", type=float, default=5.0)
    parser.add_argument("--stagger-ms", type=float, default=0.0,
                        help="> 0: also send the requests this far apart (continuous batching against waiting)")
    args = parser.parse_args()
    backends = [name.strip() for name in args.backends.split(",") if name.strip()]
    unknown = sorted(set(backends) - {"torch", "llama_cpp"})
    if unknown or not backends:
        parser.error(f"--backends {args.backends!r}: expected torch and/or llama_cpp")

    from proofgym.training import prefer_passive_waiting

    prefer_passive_waiting()  # before torch is imported, as the proofgym command does

    import httpx
    import torch

    from proofgym.model_server import GenerationBackend, LlamaCppBackend, create_model_app, load_model
    from proofgym.model_server._generation import gguf_file
    from proofgym.model_server._llama_cpp import llama_cpp_available

    torch.set_num_threads(args.threads)
    load_before = os.getloadavg()
    started = time.perf_counter()
    loaded = load_model(args.model)
    torch_backend = GenerationBackend(loaded, max_batch_size=len(QUESTIONS), batch_window_ms=args.batch_window_ms,
                                      threads=args.threads)
    engines: dict[str, Any] = {}
    if "torch" in backends:
        engines["torch"] = torch_backend
    if "llama_cpp" in backends:
        if gguf_file(args.model) is None:
            print(f"llama_cpp: skipped, {args.model!r} is no GGUF file")
        elif not llama_cpp_available():
            print("llama_cpp: skipped, llama-cpp-python is not installed (pip install 'proofgym[llama]')")
        else:
            engines["llama_cpp"] = LlamaCppBackend.load(args.model, max_batch_size=len(QUESTIONS),
                                                        batch_window_ms=args.batch_window_ms, threads=args.threads)
    print(f"{args.model}: loaded in {time.perf_counter() - started:.1f} s; {processor()}, {os.cpu_count()} CPUs; "
          f"{args.threads} threads for bare generate and every engine (torch {torch.get_num_threads()}, "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '')}); max_tokens {args.max_tokens}, greedy, "
          f"{len(QUESTIONS)} prompts; median of {args.runs} runs after a warm-up")
    messages = [[{"role": "user", "content": question}] for question in QUESTIONS]
    prompts = [torch_backend.encode(torch_backend.render(m)) for m in messages]
    for name, engine in engines.items():
        if name != "torch":
            same = sum(engine.encode(engine.render(m)) == p for m, p in zip(messages, prompts))
            print(f"{name}: {same}/{len(prompts)} prompts tokenized as the torch engine tokenizes them")
    bodies = [{"messages": m, "max_tokens": args.max_tokens, "temperature": 0} for m in messages]
    rows: dict[str, list[Measure]] = {"bare": []}
    ratios: dict[str, list[float]] = {}
    staggered: dict[str, list[tuple[float, list[float]]]] = {"continuous": [], "waiting": []}
    with_servers: list[Any] = []
    clients: dict[str, Any] = {}
    for name, engine in engines.items():
        server = ThreadedServer(create_model_app(engine, max_tokens_limit=args.max_tokens), what=f"serve-model {name}")
        with_servers.append(server.start())
        clients[name] = httpx.Client(base_url=server.url, timeout=900)
    waiting = None
    if args.stagger_ms > 0:
        waiting = GenerationBackend(loaded, max_batch_size=len(QUESTIONS), batch_window_ms=args.batch_window_ms,
                                    threads=args.threads, continuous=False)
        server = ThreadedServer(create_model_app(waiting, max_tokens_limit=args.max_tokens), what="serve-model wait")
        with_servers.append(server.start())
        clients["waiting"] = httpx.Client(base_url=server.url, timeout=900)
    try:
        for run in range(args.runs + 1):  # the first is a warm-up
            measured = {"bare": timed(lambda: bare_run(loaded.model, prompts, args.max_tokens,
                                                       torch_backend.eos_token_ids))}
            for name in engines:
                measured[f"{name} 1"] = timed(lambda: serve_run(clients[name], bodies, concurrent=False))
                measured[f"{name} 8"] = timed(lambda: serve_run(clients[name], bodies, concurrent=True))
            if waiting is not None:
                gaps = {"continuous": staggered_run(clients["torch"], bodies, args.stagger_ms / 1000),
                        "waiting": staggered_run(clients["waiting"], bodies, args.stagger_ms / 1000)}
            if not run:
                continue
            bare_rate = measured["bare"][2] / measured["bare"][0]
            for key, measure in measured.items():
                rows.setdefault(key, []).append(measure)
                ratios.setdefault(key, []).append(measure[2] / measure[0] / bare_rate)
            if waiting is not None:
                for key, gap in gaps.items():
                    staggered[key].append(gap)
            print(f"run {run}: " + ", ".join(f"{key} {m[2] / m[0]:.1f} tok/s" for key, m in measured.items())
                  + f"; load {os.getloadavg()[0]:.2f}", flush=True)
    finally:
        for client in clients.values():
            client.close()
        for server in with_servers:
            server.stop()
        for engine in [*engines.values(), *([waiting] if waiting is not None else [])]:
            engine.close()
    goals = {"1": ("one request at a time", 1.0), "8": ("8 concurrent", 2.0)}
    print(f"{'':12} {'tokens':>6} {'tokens/s':>9} {'wall s':>7} {'CPU s':>6} {'same as bare':>12}  vs bare")
    bare_answers = rows["bare"][-1][3]
    for key, measures in rows.items():
        tokens = statistics.median(m[2] for m in measures)
        rate = statistics.median(m[2] / m[0] for m in measures)
        wall = statistics.median(m[0] for m in measures)
        cpu = statistics.median(m[1] for m in measures)
        same = sum(a == b for a, b in zip(measures[-1][3], bare_answers))
        line = f"{key:12} {tokens:6.0f} {rate:9.1f} {wall:7.2f} {cpu:6.2f} {same:>7}/{len(bare_answers)}"
        if key != "bare":
            what, goal = goals[key.rsplit(" ", 1)[1]]
            ratio = statistics.median(ratios[key])
            line += f"  x{ratio:.2f} ({what}; goal >= {goal:g}: {'met' if ratio >= goal else 'NOT met'})"
        print(line)
    if "llama_cpp" in engines:
        print(f"llama_cpp engine: {engines['llama_cpp'].prefix_tokens_reused} prompt tokens' KV cells copied from "
              "the last prompt run in the batch (the chat template's system turn)")
    print(f"torch engine: {torch_backend.batches_decoded} batches, {torch_backend.rows_decoded} rows, "
          f"{torch_backend.prefix_tokens_reused} prompt tokens' keys and values reused from the last prompt run")
    if waiting is not None:
        wall_s = {key: statistics.median(wall for wall, _ in runs) for key, runs in staggered.items()}
        latency = {key: statistics.median(x for _, each in runs for x in each) for key, runs in staggered.items()}
        print(f"staggered, {len(QUESTIONS)} requests {args.stagger_ms:g} ms apart (torch): wall "
              f"{wall_s['waiting']:.2f} s with rows waiting for the running batch, {wall_s['continuous']:.2f} s "
              f"joining it (x{wall_s['waiting'] / wall_s['continuous']:.2f}); median latency "
              f"{latency['waiting']:.2f} s vs {latency['continuous']:.2f} s "
              f"(x{latency['waiting'] / latency['continuous']:.2f})")
    print(f"load average (1 min): {load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    from _record import record

    record("serve_model", main)
