"""How fast is the sandboxed Verilog judge, and what does the sandbox cost?

Every row runs through a fresh :class:`~proofgym.runtime.VerificationRuntime` (cold verdict cache) with
the process executor and ``--workers`` workers (one claim per call, :func:`recommended_runtime_config`);
the workers are started before the clock starts (a one-time cost of any training run).

- ``refs cold``: the 156 VerilogEval v2 reference solutions, nothing known in advance (an empty
  reference-count cache): each worker also runs the reference-vs-reference simulation of every problem
  it meets, in the same sandbox launch as the design.
- ``refs``: the same, with the reference sample counts found beforehand by ``VerilogVerifier.prepare``
  (timed apart: once per problem set, in practice once per training run).
- ``refs disk``: the same, the counts found by an earlier process and kept on disk
  (``JudgeConfig.reference_cache_dir``): what a restarted training run gets without ``prepare``.
- ``grpo``: one GRPO step of 256 submissions, ``--problems`` problems x ``--group`` samples, with the
  repetition of a converging policy: per group the reference three times (twice with only whitespace
  changed), the reference with an output inverted twice, a syntax error, and the reference and the
  inverted one each with a comment added: 5 distinct designs of 8.

Each row runs sandboxed (bubblewrap) and bare (the same commands without bubblewrap, same workers):
``overhead = sandboxed / bare - 1``. Each figure is the median of ``--runs`` runs. Goals (2 cores): the
full reference set under 12 s; sandbox overhead under 25 %.

    python benchmarks/verilog_judge.py [--runs 3] [--workers 2] [--dataset ../shared/datasets/verilog-eval-v2]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from proofgym.core import Claim
from proofgym.runtime import VerificationRuntime
from proofgym.verilog import (
    JudgeConfig,
    Problem,
    VerilogVerifier,
    design_claim,
    detect_toolchain,
    interface,
    load_verilogeval,
    recommended_runtime_config,
)

SANDBOXED = JudgeConfig(reference_cache_dir=None)
BARE = JudgeConfig(bwrap=None, allow_unsandboxed=True, reference_cache_dir=None)


def reference_design(problem: Problem) -> str:
    return re.sub(r"\bRefModule\b", "TopModule", problem.reference)


def inverted_design(problem: Problem) -> str:
    """The reference wrapped so that its first output is inverted (a wrong design that compiles)."""
    header = interface(problem)
    body = re.sub(r"//[^\n]*", "", header[header.index("(") + 1 : header.rindex(")")])
    ports, direction, width = [], "input", ""
    for item in filter(None, (part.strip() for part in body.split(","))):
        found = re.search(r"\b(input|output)\b", item)
        if found:
            direction = found.group(1)
            ranged = re.search(r"\[[^\]]*\]", item)
            width = ranged.group(0) if ranged else ""
        ports.append((direction, width, re.findall(r"[A-Za-z_]\w*", item)[-1]))
    target, target_width = next((name, w) for d, w, name in ports if d == "output")
    connections = ", ".join(f".{n}({n}_i)" if n == target else f".{n}({n})" for _, _, n in ports)
    return (re.sub(r"\bRefModule\b", "Inner", problem.reference) + re.sub(r"\b(reg|logic)\b", "", header)
            + f"\n  wire {target_width} {target}_i;\n  Inner inner ({connections});\n"
            f"  assign {target} = ~{target}_i;\nendmodule\n")


def grpo_claims(problems: list[Problem]) -> list[Claim]:
    claims = []
    for problem in problems:
        ref, wrong = reference_design(problem), inverted_design(problem)
        group = [ref, ref + "\n\n", ref.replace("\n", "  \r\n"), wrong, wrong,
                 ref.replace("endmodule", "  wire ;\nendmodule", 1), "// v2\n" + ref, "// v2\n" + wrong]
        claims += [design_claim(problem, design) for design in group]
    return claims


def run_row(problems: dict[str, Problem], claims: list[Claim], config: JudgeConfig, workers: int,
            prepare: bool, cache_dir: str | None = None) -> dict[str, float]:
    verifier = VerilogVerifier(problems, config=config.model_copy(update={"reference_cache_dir": cache_dir}))
    if prepare:
        verifier.prepare(max_workers=workers)
    with VerificationRuntime(verifier, recommended_runtime_config(config, workers=workers)) as runtime:
        # Start every worker (claims for an unknown problem are answered at once and never cached).
        runtime.verify_many_sync([Claim(payload={"problem": f"warm-up {i}"}) for i in range(workers)])
        start = time.perf_counter()
        verdicts = runtime.verify_many_sync(claims)
        wall = time.perf_counter() - start
        sent = runtime.last_batch_metrics().to_dict()["claims_sent"]
    sandbox_times = [v.timings["sandbox_s"] for v in verdicts if "sandbox_s" in v.timings]
    return {"wall_s": wall, "judged": sent, "passed": sum(v.certified for v in verdicts),
            "invalid": sum(v.invalid for v in verdicts), "launch_s": statistics.median(sandbox_times)}


def _walls(results: list[dict[str, float]]) -> str:
    return ", ".join(f"{r['wall_s']:.2f}" for r in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (the median is printed)")
    parser.add_argument("--workers", type=int, default=2, help="process-executor workers")
    parser.add_argument("--problems", type=int, default=32, help="problems in the GRPO step")
    parser.add_argument("--group", type=int, default=8, help="samples per problem (fixed pattern of 8)")
    parser.add_argument("--dataset", type=Path,
                        default=Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets" / "verilog-eval-v2")
    args = parser.parse_args()
    if args.group != 8:
        sys.exit("--group: the repetition pattern has 8 samples per problem")
    toolchain = detect_toolchain()
    print(toolchain.describe().replace("\n", "; "))
    problems = {p.id: p for p in load_verilogeval(args.dataset)}
    refs = [design_claim(p, reference_design(p)) for p in problems.values()]
    # Every n-th problem that iverilog 11 can judge, for a spread of sizes.
    judgeable = [p for p in problems.values()
                 if p.id not in {"Prob099_m2014_q6c", "Prob151_review2015_fsm", "Prob156_review2015_fancytimer"}]
    step = judgeable[:: max(1, len(judgeable) // args.problems)][: args.problems]
    grpo = grpo_claims(step)
    print(f"{len(refs)} references; GRPO step: {len(step)} problems x {args.group} = {len(grpo)} submissions; "
          f"{args.workers} workers; median of {args.runs} runs\n")

    start = time.perf_counter()
    counts = tempfile.TemporaryDirectory(prefix="proofgym-bench-counts-")  # for the "refs disk" row
    broken = VerilogVerifier(problems, config=SANDBOXED.model_copy(update={"reference_cache_dir": counts.name})
                             ).prepare(max_workers=args.workers)
    print(f"prepare: reference-vs-reference runs of {len(problems)} problems, sandboxed, {args.workers} threads: "
          f"{time.perf_counter() - start:.2f} s (failed: {', '.join(sorted(broken))})\n")

    summary = {}
    rows = (("refs cold", refs, False, "empty"), ("refs", refs, True, None), ("refs disk", refs, False, counts.name),
            ("grpo", grpo, True, None))
    for name, claims, prepare, cache in rows:
        runs: dict[str, list[dict[str, float]]] = {"sandboxed": [], "bare": []}
        for run in range(args.runs):
            # Alternate which mode goes first, so that drift in the machine's load cancels out.
            modes = (("sandboxed", SANDBOXED), ("bare", BARE))
            for mode, config in modes if run % 2 == 0 else modes[::-1]:
                with tempfile.TemporaryDirectory(prefix="proofgym-bench-cold-") as empty:
                    cache_dir = empty if cache == "empty" else cache
                    runs[mode].append(run_row(problems, claims, config, args.workers, prepare, cache_dir))
        sb, bare = ({key: statistics.median(r[key] for r in runs[mode]) for key in runs[mode][0]}
                    for mode in ("sandboxed", "bare"))
        overhead = statistics.median(s["wall_s"] / b["wall_s"] - 1 for s, b in zip(runs["sandboxed"], runs["bare"]))
        summary[name] = (sb, bare, overhead, len(claims))
        print(f"  {name:<10} judged {sb['judged']:3.0f} of {len(claims)}, passed {sb['passed']:3.0f}, "
              f"invalid {sb['invalid']:.0f}; sandboxed runs {_walls(runs['sandboxed'])} s; "
              f"bare {_walls(runs['bare'])} s")
    print()
    print(f"{'row':<10} {'sandboxed s':>11} {'bare s':>7} {'overhead':>8} {'designs/s':>9} {'median launch ms':>20}")
    for name, (sb, bare, overhead, n) in summary.items():
        print(f"{name:<10} {sb['wall_s']:>11.2f} {bare['wall_s']:>7.2f} {overhead:>8.1%} {n / sb['wall_s']:>9.1f} "
              f"{sb['launch_s'] * 1000:>9.1f} / {bare['launch_s'] * 1000:<8.1f}")
    cold_s = summary["refs cold"][0]["wall_s"]
    worst = max(summary[name][2] for name in ("refs", "grpo"))
    print(f"\ngoal: full reference set under 12 s sandboxed, fully cold: {cold_s:.2f} s "
          f"({'met' if cold_s < 12 else 'MISSED'}); with prepared counts {summary['refs'][0]['wall_s']:.2f} s, "
          f"with counts on disk {summary['refs disk'][0]['wall_s']:.2f} s")
    print(f"goal: sandbox overhead under 25 %: worst of refs and grpo {worst:.1%} "
          f"({'met' if worst < 0.25 else 'MISSED'})")
    counts.cleanup()


if __name__ == "__main__":
    from _record import record

    record("verilog_judge", main)
