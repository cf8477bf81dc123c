"""Does ``proofgym serve-model`` cost little over a bare ``model.generate`` loop, and does batching pay? (tokens/s)

One process: the model is loaded once; the baseline is a bare loop of ``model.generate`` (greedy, KV cache, one
prompt at a time); the server is ``create_model_app`` over the same model under real uvicorn on loopback (a
thread of this process), sent the same prompts (the chat template's token ids the baseline is given too), the
same ``max_tokens``, ``temperature: 0``, over HTTP (httpx). Per run:

- bare:     the 8 prompts one after another through ``model.generate``;
- serve 1:  the 8 prompts as 8 requests one after another (batch 1: the server's own cost per request);
- serve 8:  the 8 prompts as 8 concurrent requests (decoded together in one batch);
- staggered: the 8 prompts sent ``--stagger-ms`` apart (as rollouts' turns arrive), to the server as it is (rows
  join the running batch between steps: continuous batching) and to one whose rows wait for the running batch to
  end (``continuous=False``): wall time and each request's latency, median over requests and runs.

Printed: generated tokens per second, the median of ``--runs`` runs (after a warm-up), and each against the bare
loop: serve 1's overhead (goal: at most 10 %), serve 8's speed-up over doing the prompts one by one (goal: > 1).
The client shares the machine (and this process's GIL) with the server, so its cost is counted in.

    python benchmarks/serve_model.py [--model proofgym:tiny|smollm2|...] [--runs 3] [--max-tokens 64] \
        [--threads 2] [--batch-window-ms 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _threaded_server import ThreadedServer  # noqa: E402  (the test suite's uvicorn-in-a-thread helper)

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


def bare_run(model, prompts: list[list[int]], max_tokens: int, eos: list[int]) -> tuple[float, int]:
    """(seconds, generated tokens) of ``model.generate`` over ``prompts`` one at a time."""
    import torch

    tokens = 0
    started = time.perf_counter()
    with torch.inference_mode():
        for prompt in prompts:
            ids = torch.tensor([prompt])
            out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_tokens,
                                 do_sample=False, eos_token_id=eos, pad_token_id=eos[0])[0, len(prompt):].tolist()
            tokens += next((i + 1 for i, token in enumerate(out) if token in eos), len(out))
    return time.perf_counter() - started, tokens


def serve_run(http, bodies: list[dict], concurrent: bool) -> tuple[float, int]:
    """(seconds, generated tokens) of ``bodies`` sent one after another or all at once."""
    counts = [0] * len(bodies)

    def send(i: int) -> None:
        response = http.post("/v1/chat/completions", json=bodies[i])
        response.raise_for_status()
        counts[i] = response.json()["usage"]["completion_tokens"]

    started = time.perf_counter()
    if concurrent:
        threads = [threading.Thread(target=send, args=(i,)) for i in range(len(bodies))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    else:
        for i in range(len(bodies)):
            send(i)
    return time.perf_counter() - started, sum(counts)


def staggered_run(http, bodies: list[dict], gap_s: float) -> tuple[float, int, list[float]]:
    """(seconds, generated tokens, each request's latency) of ``bodies`` sent ``gap_s`` apart."""
    counts, latencies = [0] * len(bodies), [0.0] * len(bodies)

    def send(i: int) -> None:
        sent = time.perf_counter()
        response = http.post("/v1/chat/completions", json=bodies[i])
        response.raise_for_status()
        latencies[i] = time.perf_counter() - sent
        counts[i] = response.json()["usage"]["completion_tokens"]

    started = time.perf_counter()
    threads = []
    for i in range(len(bodies)):
        threads.append(threading.Thread(target=send, args=(i,)))
        threads[-1].start()
        time.sleep(gap_s)
    for thread in threads:
        thread.join()
    return time.perf_counter() - started, sum(counts), latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="proofgym:tiny")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-window-ms", type=float, default=5.0)
    parser.add_argument("--stagger-ms", type=float, default=100.0, help="gap between the staggered requests")
    args = parser.parse_args()

    import httpx
    import torch

    from proofgym.model_server import GenerationBackend, create_model_app, load_model

    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    loaded = load_model(args.model)
    print(f"{args.model}: loaded in {time.perf_counter() - started:.1f} s, {args.threads} threads, "
          f"max_tokens {args.max_tokens}, greedy, {len(QUESTIONS)} prompts, median of {args.runs} runs")
    backend = GenerationBackend(loaded, max_batch_size=len(QUESTIONS), batch_window_ms=args.batch_window_ms,
                                threads=args.threads)
    messages = [[{"role": "user", "content": question}] for question in QUESTIONS]
    prompts = [backend.encode(backend.render(m)) for m in messages]
    bodies = [{"messages": m, "max_tokens": args.max_tokens, "temperature": 0} for m in messages]
    app = create_model_app(backend, max_tokens_limit=args.max_tokens)
    results: dict[str, list[tuple[float, int]]] = {"bare": [], "serve 1": [], "serve 8": []}
    waiting = GenerationBackend(loaded, max_batch_size=len(QUESTIONS), batch_window_ms=args.batch_window_ms,
                                threads=args.threads, continuous=False)
    staggered: dict[str, list[tuple[float, int, list[float]]]] = {"continuous": [], "waiting": []}
    with ThreadedServer(app, what="serve-model") as server, httpx.Client(base_url=server.url, timeout=600) as http, \
            ThreadedServer(create_model_app(waiting, max_tokens_limit=args.max_tokens), what="serve-model") as other, \
            httpx.Client(base_url=other.url, timeout=600) as other_http:
        for run in range(args.runs + 1):  # the first is a warm-up
            rows = {"bare": bare_run(loaded.model, prompts, args.max_tokens, backend.eos_token_ids),
                    "serve 1": serve_run(http, bodies, concurrent=False),
                    "serve 8": serve_run(http, bodies, concurrent=True)}
            gaps = {"continuous": staggered_run(http, bodies, args.stagger_ms / 1000),
                    "waiting": staggered_run(other_http, bodies, args.stagger_ms / 1000)}
            if run:
                for name, row in rows.items():
                    results[name].append(row)
                for name, gap in gaps.items():
                    staggered[name].append(gap)
    backend.close()
    waiting.close()
    rate = {name: statistics.median(tokens / seconds for seconds, tokens in rows) for name, rows in results.items()}
    tokens = {name: statistics.median(tokens for _, tokens in rows) for name, rows in results.items()}
    print(f"{'':10} {'tokens':>7} {'tokens/s':>9}  vs bare")
    print(f"{'bare':10} {tokens['bare']:7.0f} {rate['bare']:9.1f}")
    print(f"{'serve 1':10} {tokens['serve 1']:7.0f} {rate['serve 1']:9.1f}  overhead "
          f"{(rate['bare'] / rate['serve 1'] - 1) * 100:+.1f} % (goal <= 10 %)")
    print(f"{'serve 8':10} {tokens['serve 8']:7.0f} {rate['serve 8']:9.1f}  x{rate['serve 8'] / rate['bare']:.2f} "
          f"(goal > 1)")
    print(f"batches decoded: {backend.batches_decoded}, rows: {backend.rows_decoded}")
    wall = {name: statistics.median(seconds for seconds, _, _ in runs) for name, runs in staggered.items()}
    latency = {name: statistics.median(x for _, _, each in runs for x in each) for name, runs in staggered.items()}
    print(f"staggered, {len(QUESTIONS)} requests {args.stagger_ms:g} ms apart: wall {wall['waiting']:.2f} s with rows "
          f"waiting for the running batch, {wall['continuous']:.2f} s joining it "
          f"(x{wall['waiting'] / wall['continuous']:.2f}); "
          f"median latency {latency['waiting']:.2f} s vs {latency['continuous']:.2f} s "
          f"(x{latency['waiting'] / latency['continuous']:.2f})")


if __name__ == "__main__":
    main()
