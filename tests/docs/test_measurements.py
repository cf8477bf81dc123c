"""Measurements are written by the benchmark scripts (benchmarks/_record.py) and included by the site's measurements
page (the ``measurements`` generator of scripts/docs_reference.py), never typed into prose."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

SCRIPT = '''
import os, subprocess, sys
sys.path.insert(0, {benchmarks!r})
from _record import record

def main():
    if "--help" in sys.argv:  # as argparse does
        print("usage: tiny_bench.py [--n N]")
        raise SystemExit(0)
    print("rate  1,234 /s")
    if "--child" not in sys.argv:  # a child process of a recorded run must not record over it
        subprocess.run([sys.executable, __file__, "--child"], check=True)
    if "--fail" in sys.argv:
        raise SystemExit("failed")

if __name__ == "__main__":
    record("tiny_bench", main)
'''


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "tiny_bench.py"
    script.write_text(SCRIPT.format(benchmarks=str(ROOT / "benchmarks")))
    env = {**os.environ, "PROOFGYM_BENCH_RESULTS": str(tmp_path / "results")}
    env.pop("PROOFGYM_BENCH_RECORDING", None)
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=120, env=env)


def test_a_run_writes_its_figures_machine_date_and_command(tmp_path):
    done = _run(tmp_path, "--n", "3")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("rate  1,234 /s") == 2  # echoed as printed (the child prints too)
    text = (tmp_path / "results" / "tiny_bench.md").read_text()
    assert "tiny_bench.py --n 3`" in text
    assert "rate  1,234 /s" in text
    # benchmarks/ is never put on this process's sys.path: a script there named like a package (math_verify.py,
    # since renamed) stood in for that package in every worker process spawned later (they inherit sys.path).
    spec = importlib.util.spec_from_file_location("benchmarks_machine", ROOT / "benchmarks" / "_machine.py")
    assert spec is not None and spec.loader is not None
    machine = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(machine)

    assert machine.processor() in text and "CPU-s" in text and "load average" in text
    assert re.search(r"\| date \| \d{4}-\d\d-\d\d \d\d:\d\d UTC \|", text)


def test_a_failed_run_writes_nothing(tmp_path):
    done = _run(tmp_path, "--fail")
    assert done.returncode != 0
    assert not (tmp_path / "results" / "tiny_bench.md").exists()


def test_asking_for_help_writes_nothing(tmp_path):
    done = _run(tmp_path, "--help")  # argparse exits 0 after printing its help: not a measurement
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "results" / "tiny_bench.md").exists()


def test_the_measurements_page_includes_every_results_file_and_names_the_rest(tmp_path):
    import docs_reference

    assert _run(tmp_path).returncode == 0
    page = docs_reference.measurements(tmp_path / "results")
    assert "### `tiny_bench`" in page and "rate  1,234 /s" in page
    for name in docs_reference.benchmark_scripts():
        assert f"`benchmarks/{name}.py`" in page  # none of the real scripts recorded into tmp_path


def test_every_benchmark_script_records_its_results():
    for path in sorted((ROOT / "benchmarks").glob("*.py")):
        if not path.name.startswith("_"):
            text = path.read_text()
            assert f'record("{path.stem}", main)' in text or f'record(f"{path.stem}-' in text, path.name


def test_a_page_places_results_under_its_own_topics_and_the_rest_come_after(tmp_path):
    import docs_reference

    assert _run(tmp_path).returncode == 0
    page = "## Topic\n\n<!-- results: tiny_bench demo_seeds -->\n\n<!-- generated: measurements -->\n"
    placed = docs_reference.placed_results(page)
    assert placed == {"tiny_bench", "demo_seeds"}
    topic = docs_reference.results_sections(page, tmp_path / "results")
    assert "rate  1,234 /s" in topic.split("<!-- generated")[0]
    assert "*Not recorded yet in this tree: `python benchmarks/demo_seeds.py` writes it.*" in topic
    rest = docs_reference.measurements(tmp_path / "results", placed=placed)
    assert "rate  1,234 /s" not in rest  # shown once, where the page placed it


def test_every_result_the_measurements_page_places_is_a_benchmark_script_or_its_variant():
    import docs_reference

    scripts = docs_reference.benchmark_scripts()
    placed = docs_reference.placed_results((ROOT / "docs" / "measurements.md").read_text(encoding="utf-8"))
    assert placed and all(name.split("-", 1)[0] in scripts for name in placed), placed - set(scripts)


def test_no_benchmark_script_is_named_like_a_module_it_could_stand_in_for():
    """Run as a script, a benchmark's folder comes first on ``sys.path`` of its process and of the workers it starts
    (Ray's included): benchmarks/math_verify.py stood in for the math_verify package, so its Ray row verified
    nothing and printed a rate of invalid verdicts."""
    import importlib.util

    for path in sorted((ROOT / "benchmarks").glob("*.py")):
        assert importlib.util.find_spec(path.stem) is None or path.stem.startswith("_"), path.name
