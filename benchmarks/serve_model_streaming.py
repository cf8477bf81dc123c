"""What does streaming (``"stream": true``, server-sent events) cost ``proofgym serve-model``, against the same
requests answered whole, and how soon does the first text arrive? For each backend: torch (transformers) and, for a
GGUF model with llama-cpp-python installed, llama.cpp.

One process: the model is loaded once per engine and served by ``create_model_app`` under real uvicorn on loopback
(a thread of this process); the client is httpx. The same 8 chat prompts as ``benchmarks/serve_model.py``, greedy,
the same ``max_tokens``; per run, in this order, for each engine:

- json 1 / stream 1: the 8 prompts as 8 requests one after another, answered whole / streamed;
- json 8 / stream 8: the 8 prompts as 8 concurrent requests (decoded together), answered whole / streamed.

The baseline is the whole answer (``json``) of the same run. Printed: generated tokens, tokens per second, wall and
CPU seconds (the whole process: server, client, the engine's threads), medians of ``--runs`` runs after a warm-up
run; each streamed row's ratio of tokens/s to its json row's in the same run (median of the runs' ratios; the goal,
ours: >= 0.9, streaming costs at most a tenth); the median latency of a whole answer and the median time to the
first content of a streamed one; how many streamed answers have the whole answers' token ids, and of those how many
have their text too (a greedy answer's token ids can differ where the engine is not deterministic across batches:
llama.cpp's logits move a little with where a row's cells lie, so two whole answers can differ too). The load
average before and after.

    python benchmarks/serve_model_streaming.py [--model smollm2|proofgym:tiny|FILE.gguf|...] \
        [--backends torch,llama_cpp] [--runs 3] [--max-tokens 128] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _threaded_server import ThreadedServer  # noqa: E402  (the test suite's uvicorn-in-a-thread helper)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import processor  # noqa: E402  (benchmarks/_machine.py)
from _requests import send_all  # noqa: E402
from serve_model import QUESTIONS  # noqa: E402  (the prompts of benchmarks/serve_model.py)

#: One request's answer: (text, token ids, seconds to the whole answer or to the first streamed content).
Answer = tuple[str, list[int], float]
#: One row's measurement: wall seconds, CPU seconds of the process, the answers.
Measure = tuple[float, float, list[Answer]]


def whole(http: Any, body: dict[str, Any]) -> Answer:
    sent = time.perf_counter()
    response = http.post("/v1/chat/completions", json=body)
    response.raise_for_status()
    choice = response.json()["choices"][0]
    return choice["message"]["content"], choice["token_ids"], time.perf_counter() - sent


def streamed(http: Any, body: dict[str, Any]) -> Answer:
    sent = time.perf_counter()
    first: float | None = None
    text, ids = [], []
    with http.stream("POST", "/v1/chat/completions", json={**body, "stream": True}) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            for choice in json.loads(line[len("data: "):])["choices"]:
                piece = choice["delta"].get("content") or ""
                if piece and first is None:
                    first = time.perf_counter() - sent
                text.append(piece)
                ids += choice.get("token_ids", [])
    return "".join(text), ids, first if first is not None else time.perf_counter() - sent


def run_row(http: Any, bodies: list[dict[str, Any]], stream: bool, concurrent: bool) -> Measure:
    answers: list[Answer] = [("", [], 0.0)] * len(bodies)
    ask = streamed if stream else whole

    def send(i: int) -> None:
        answers[i] = ask(http, bodies[i])

    wall, cpu = time.perf_counter(), time.process_time()
    send_all(len(bodies), send, concurrent=concurrent)
    return time.perf_counter() - wall, time.process_time() - cpu, answers


def tokens(measure: Measure) -> int:
    return sum(len(ids) for _, ids, _ in measure[2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--backends", default="torch,llama_cpp",
                        help="engines to serve with, comma-separated (llama_cpp: GGUF models, when installed)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2, help="CPU threads of every engine")
    args = parser.parse_args()
    backends = [name.strip() for name in args.backends.split(",") if name.strip()]
    unknown = sorted(set(backends) - {"torch", "llama_cpp"})
    if unknown or not backends:
        parser.error(f"--backends {args.backends!r}: expected torch and/or llama_cpp")
    if args.runs < 1 or args.max_tokens < 1:
        parser.error(f"--runs and --max-tokens must be at least 1, got {args.runs} and {args.max_tokens}")

    from proofgym.training import prefer_passive_waiting

    prefer_passive_waiting()  # before torch is imported, as the proofgym command does

    import httpx

    from proofgym.model_server import GenerationBackend, LlamaCppBackend, create_model_app, load_model
    from proofgym.model_server._generation import gguf_file
    from proofgym.model_server._llama_cpp import llama_cpp_available

    load_before = os.getloadavg()
    started = time.perf_counter()
    engines: dict[str, Any] = {}
    if "torch" in backends:
        engines["torch"] = GenerationBackend(load_model(args.model), max_batch_size=len(QUESTIONS),
                                             threads=args.threads)
    if "llama_cpp" in backends:
        if gguf_file(args.model) is None:
            print(f"llama_cpp: skipped, {args.model!r} is no GGUF file")
        elif not llama_cpp_available():
            print("llama_cpp: skipped, llama-cpp-python is not installed (pip install 'proofgym[llama]')")
        else:
            engines["llama_cpp"] = LlamaCppBackend.load(args.model, max_batch_size=len(QUESTIONS),
                                                        threads=args.threads)
    print(f"{args.model}: loaded in {time.perf_counter() - started:.1f} s; {processor()}, {os.cpu_count()} CPUs; "
          f"{args.threads} threads per engine; max_tokens {args.max_tokens}, greedy, {len(QUESTIONS)} prompts; "
          f"median of {args.runs} runs after a warm-up")
    bodies = [{"messages": [{"role": "user", "content": question}], "max_tokens": args.max_tokens,
               "temperature": 0} for question in QUESTIONS]
    rows: dict[str, list[Measure]] = {}
    ratios: dict[str, list[float]] = {}
    servers, clients = [], {}
    for name, engine in engines.items():
        server = ThreadedServer(create_model_app(engine, max_tokens_limit=args.max_tokens), what=f"serve-model {name}")
        servers.append(server.start())
        clients[name] = httpx.Client(base_url=server.url, timeout=900)
    try:
        for run in range(args.runs + 1):  # the first is a warm-up
            measured: dict[str, Measure] = {}
            for name, http in clients.items():
                for width, concurrent in (("1", False), ("8", True)):
                    measured[f"{name} json {width}"] = run_row(http, bodies, stream=False, concurrent=concurrent)
                    measured[f"{name} stream {width}"] = run_row(http, bodies, stream=True, concurrent=concurrent)
            if not run:
                continue
            for key, measure in measured.items():
                rows.setdefault(key, []).append(measure)
                if " stream " in key:
                    base = measured[key.replace(" stream ", " json ")]
                    ratios.setdefault(key, []).append(tokens(measure) / measure[0] / (tokens(base) / base[0]))
            print(f"run {run}: " + ", ".join(f"{key} {tokens(m) / m[0]:.1f} tok/s" for key, m in measured.items())
                  + f"; load {os.getloadavg()[0]:.2f}", flush=True)
    finally:
        for client in clients.values():
            client.close()
        for server in servers:
            server.stop()
        for engine in engines.values():
            engine.close()
    print(f"{'':20} {'tokens':>6} {'tokens/s':>9} {'wall s':>7} {'CPU s':>6} {'latency s':>9} {'first text s':>12} "
          f"{'same ids':>8} {'text':>7}  vs json")
    for key, measures in rows.items():
        rate = statistics.median(tokens(m) / m[0] for m in measures)
        wall = statistics.median(m[0] for m in measures)
        cpu = statistics.median(m[1] for m in measures)
        seconds = statistics.median(answer[2] for m in measures for answer in m[2])
        line = f"{key:20} {statistics.median(tokens(m) for m in measures):6.0f} {rate:9.1f} {wall:7.2f} {cpu:6.2f} "
        if " stream " in key:
            base = rows[key.replace(" stream ", " json ")]
            pairs = [(mine, theirs) for m, b in zip(measures, base) for mine, theirs in zip(m[2], b[2])]
            same_ids = [(mine, theirs) for mine, theirs in pairs if mine[1] == theirs[1]]
            same_text = sum(mine[0] == theirs[0] for mine, theirs in same_ids)
            ratio = statistics.median(ratios[key])
            line += (f"{'':>9} {seconds:12.3f} {len(same_ids):>3}/{len(pairs)} {same_text:>3}/{len(same_ids)}  "
                     f"x{ratio:.2f} (goal >= 0.9: {'met' if ratio >= 0.9 else 'NOT met'})")
        else:
            line += f"{seconds:9.3f} {'':>12}"
        print(line)
    print(f"load average (1 min): {load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    from _record import record

    record("serve_model_streaming", main)
