"""Bring your own domain, measured: the kernel's decisions per second while a dataset is built from a large CSV
(streamed, bounded memory), and the time from ``domain init`` to the first reward.

It writes ``--rows`` housing applications with the example's own generator (examples/byod/make_data.py) into a
temporary folder, then, in this process:

1. ``init_domain`` (what ``proofgym domain init`` runs): the schema inferred in one streamed pass, the rulebook
   (examples/byod/rules.yaml) merged and validated, every record decided by the kernel in a second pass;
2. ``export_dataset`` into train.jsonl / heldout.jsonl: a pass deciding each record once (the kernel: decisions/s)
   and a pass writing the prompt rows (``--no-write`` skips the files: decisions only);
3. on the 300-row example CSV, from nothing: ``init_domain``, ``load_domain``, a run config naming the folder
   (``verifier: {kind: rulebook, domain: ./housing}``), its reward function, and the reward of one gold completion:
   the time to the first reward.

Printed: the figures, the peak resident set size of the process (``resource.getrusage``: its maximum over the
whole run, the CSV writing included), the CSV's size, the machine's processor and the date.

    python benchmarks/byod_dataset.py [--rows 1000000] [--no-write]
"""

from __future__ import annotations

import argparse
import csv
import datetime
import importlib.util
import platform
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

from proofgym.config import load_run_config
from proofgym.domains import build_example, export_dataset, gold_completion, init_domain, load_domain

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import processor  # noqa: E402  (benchmarks/_machine.py)

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "byod"


def _make_data() -> object:
    spec = importlib.util.spec_from_file_location("byod_make_data", EXAMPLE / "make_data.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_csv(path: Path, rows: int) -> None:
    make = _make_data()
    rng = random.Random(0)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(make.COLUMNS)  # type: ignore[attr-defined]
        for i in range(rows):
            writer.writerow(make.row(rng, i))  # type: ignore[attr-defined]


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def first_reward(tmp: Path) -> tuple[float, float]:
    data = tmp / "example.csv"
    write_csv(data, 300)
    started = time.perf_counter()
    init_domain("housing", data, rules=EXAMPLE / "rules.yaml", description=(EXAMPLE / "rules.txt").read_text(),
                out=tmp / "housing")
    domain = load_domain(tmp / "housing")
    config = tmp / "run.yaml"
    config.write_text("kind: run\nparser: {kind: json_block, decisions: [approve, waitlist, deny], require_facts: "
                      "true}\nverifier: {kind: rulebook, domain: ./housing}\n", encoding="utf-8")
    record = domain.split_records("train")[0]
    row = build_example(domain, record, chat=True)
    with load_run_config(config).reward_function() as reward:
        item = reward.score([row["prompt"]], [gold_completion(domain, record)], [row])[0]
    return time.perf_counter() - started, item.reward


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--no-write", action="store_true", help="decide every record but write no dataset files")
    args = parser.parse_args()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"byod dataset: {args.rows:,} rows; {processor()}; {now}; python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        data = tmp / "records.csv"
        started = time.perf_counter()
        write_csv(data, args.rows)
        print(f"wrote the CSV: {data.stat().st_size / 2**20:.1f} MiB in {time.perf_counter() - started:.1f} s; "
              f"peak RSS so far {peak_rss_mib():.0f} MiB")

        started, cpu = time.perf_counter(), time.process_time()
        summary = init_domain("housing_big", data, rules=EXAMPLE / "rules.yaml",
                              description=(EXAMPLE / "rules.txt").read_text(), out=tmp / "housing_big")
        init_s, init_cpu = time.perf_counter() - started, time.process_time() - cpu
        print(f"domain init (infer the schema, validate, decide every record): {init_s:.1f} s wall, {init_cpu:.1f} s "
              f"CPU ({args.rows / init_s:,.0f} rows/s wall); {summary.train:,} train, {summary.heldout:,} held out; "
              f"branches {len(summary.branches)}")

        started, cpu = time.perf_counter(), time.process_time()
        counts = export_dataset(tmp / "housing_big", None if args.no_write else tmp / "dataset")
        export_s, export_cpu = time.perf_counter() - started, time.process_time() - cpu
        written = "" if args.no_write else "; " + ", ".join(
            f"{side}.jsonl {(tmp / 'dataset' / f'{side}.jsonl').stat().st_size / 2**20:.0f} MiB"
            for side in ("train", "heldout"))
        decided = sum(counts.splits.values())
        print(f"dataset build ({'decisions only' if args.no_write else 'decide, then write the prompt rows'}): "
              f"{export_s:.1f} s wall, {export_cpu:.1f} s CPU: {decided / export_s:,.0f} kernel decisions/s wall "
              f"({decided / export_cpu:,.0f}/s of CPU), every record read twice{written}")
        print(f"peak RSS of the process: {peak_rss_mib():.0f} MiB (for a {data.stat().st_size / 2**20:.0f} MiB CSV)")

        seconds, reward = first_reward(tmp)
        print(f"domain init -> first reward on the 300-row example: {seconds:.2f} s (reward {reward:g})")


if __name__ == "__main__":
    from _record import record

    record("byod_dataset", main)
