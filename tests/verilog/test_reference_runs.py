"""The reference-vs-reference run: in the design's own launch when its sample count is not known, then
remembered in the process and on disk (never trusted from a file it cannot vouch for)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from proofgym.core import ErrorKind, Outcome
from proofgym.verilog import JudgeConfig, Sandbox, judge, reference_samples
from proofgym.verilog._reference_cache import ReferenceCache, cache_key

from ._support import AND_DESIGN, OR_DESIGN, and_problem, requires_judge

pytestmark = requires_judge


def _fresh_process_memory(monkeypatch):
    import proofgym.verilog._reference_counts as judge_module

    monkeypatch.setattr(judge_module, "_SAMPLES", {})


def test_a_cold_judge_runs_the_reference_in_the_design_launch(monkeypatch, reference_runs):
    launches = []
    real = Sandbox.run
    monkeypatch.setattr(Sandbox, "run", lambda self, *args, **kwargs: launches.append(1) or real(self, *args, **kwargs))
    problem = and_problem(id="one-launch")
    verdict = judge(problem, AND_DESIGN, config=JudgeConfig(reference_cache_dir=None))
    assert verdict.certified and verdict.evidence["expected_samples"] == 40
    assert len(launches) == 1 and len(reference_runs) == 1
    wrong = judge(problem, OR_DESIGN, config=JudgeConfig(reference_cache_dir=None))
    assert wrong.reason == "mismatches" and len(launches) == 2 and len(reference_runs) == 1


def test_the_reference_does_not_run_for_a_design_the_scan_refuses(reference_runs):
    problem = and_problem(id="refused-before-reference")
    verdict = judge(problem, AND_DESIGN.replace("assign", 'initial $display("x");\n  assign'),
                    config=JudgeConfig(reference_cache_dir=None))
    assert verdict.reason == "forbidden_construct" and verdict.evidence["expected_samples"] is None
    assert reference_runs == []
    assert judge(problem, AND_DESIGN, config=JudgeConfig(reference_cache_dir=None)).certified


def test_counts_found_in_a_launch_and_by_reference_samples_agree(reference_runs):
    in_launch = judge(and_problem(id="agree-a"), AND_DESIGN, config=JudgeConfig(reference_cache_dir=None))
    alone = reference_samples(and_problem(id="agree-b"), config=JudgeConfig(reference_cache_dir=None))
    assert in_launch.evidence["expected_samples"] == alone == 40 and len(reference_runs) == 2


def test_sample_counts_persist_on_disk_for_the_next_process(tmp_path, monkeypatch, reference_runs):
    config = JudgeConfig(reference_cache_dir=str(tmp_path / "counts"))
    problem = and_problem(id="persisted")
    assert judge(problem, AND_DESIGN, config=config).evidence["reference_run"] == "in launch"
    files = list((tmp_path / "counts").iterdir())
    assert len(files) == 1 and json.loads(files[0].read_text())["samples"] == 40
    assert (tmp_path / "counts").stat().st_mode & 0o077 == 0

    _fresh_process_memory(monkeypatch)
    again = judge(problem, AND_DESIGN, config=config)
    assert again.certified and "reference_run" not in again.evidence and len(reference_runs) == 1

    # And in a real new process: no reference run there either.
    fields = {"id": problem.id, "spec": problem.spec, "reference": problem.reference,
              "testbench": problem.testbench, "source": problem.source}
    code = ("from proofgym.verilog import JudgeConfig, Problem, judge\n"
            f"p = Problem(**{fields!r})\n"
            f"v = judge(p, {AND_DESIGN!r}, config=JudgeConfig(reference_cache_dir={str(tmp_path / 'counts')!r}))\n"
            "print(v.outcome.value, v.evidence.get('reference_run'), v.evidence['expected_samples'])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["certified", "None", "40"], done.stderr


def test_a_count_file_that_cannot_be_vouched_for_is_ignored(tmp_path, monkeypatch, reference_runs):
    directory = tmp_path / "counts"
    config = JudgeConfig(reference_cache_dir=str(directory))
    problem = and_problem(id="tampered")
    judge(problem, AND_DESIGN, config=config)
    (path,) = directory.iterdir()
    # Others may write it: not trusted, even with a plausible count.
    path.write_text(json.dumps({"key": path.stem, "samples": 1}))
    os.chmod(path, 0o666)
    _fresh_process_memory(monkeypatch)
    verdict = judge(problem, AND_DESIGN, config=config)
    assert verdict.certified and verdict.evidence["expected_samples"] == 40 and len(reference_runs) == 2
    assert json.loads(path.read_text())["samples"] == 40 and path.stat().st_mode & 0o077 == 0  # rewritten


@pytest.mark.parametrize("content, mode", [
    ('{"key": "KEY", "samples": 40}', 0o644),  # the reference shape, readable by all: fine
    ('{"key": "other", "samples": 40}', 0o600),
    ('{"key": "KEY", "samples": 0}', 0o600),
    ('{"key": "KEY", "samples": true}', 0o600),
    ('{"key": "KEY", "samples": "40"}', 0o600),
    ('["KEY", 40]', 0o600),
    ("not json", 0o600),
    ('{"key": "KEY", "samples": 40}', 0o620),  # group-writable
])
def test_the_cache_reads_back_only_files_it_could_have_written(tmp_path, content, mode):
    cache = ReferenceCache(tmp_path / "counts")
    key = cache_key("problem", 1)
    cache.put(key, 7)
    path = tmp_path / "counts" / f"{key}.json"
    path.write_text(content.replace("KEY", key))
    os.chmod(path, mode)
    expected = 40 if content.startswith('{"key": "KEY", "samples": 40}') and not mode & 0o022 else None
    assert cache.get(key) == expected


def test_the_cache_ignores_symlinks_and_a_directory_others_may_write(tmp_path):
    cache = ReferenceCache(tmp_path / "counts")
    key = cache_key("problem", 2)
    cache.put(key, 9)
    assert cache.get(key) == 9
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({"key": key, "samples": 9}))
    os.replace(tmp_path / "counts" / f"{key}.json", tmp_path / "moved.json")
    (tmp_path / "counts" / f"{key}.json").symlink_to(target)
    assert cache.get(key) is None
    os.chmod(tmp_path / "counts", 0o777)
    cache.put(cache_key("problem", 3), 5)
    assert cache.get(cache_key("problem", 3)) is None
    assert not (tmp_path / "counts" / f"{cache_key('problem', 3)}.json").exists()


def test_an_unwritable_cache_only_means_counting_again(tmp_path, reference_runs):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    verdict = judge(and_problem(id="unwritable-cache"), AND_DESIGN,
                    config=JudgeConfig(reference_cache_dir=str(blocker / "counts")))
    assert verdict.certified and len(reference_runs) == 1


HANGING_TESTBENCH = """
module tb();
  reg a = 0, b = 0;
  wire y_ref, y_dut;
  RefModule good1 (.a(a), .b(b), .y(y_ref));
  TopModule top_module1 (.a(a), .b(b), .y(y_dut));
  always #1 a = ~a;
endmodule
"""


def test_a_reference_run_cut_short_is_invalid_and_tried_again(monkeypatch, reference_runs):
    import proofgym.verilog._judge as judge_module

    tries = []
    real = judge_module._reference_in_launch
    monkeypatch.setattr(judge_module, "_reference_in_launch", lambda *args: tries.append(1) or real(*args))
    problem = and_problem(HANGING_TESTBENCH, id="hanging-reference")
    config = JudgeConfig(timeout_s=1.0, cpu_s=1, reference_cache_dir=None)
    for _ in range(2):  # a transient failure is not remembered: the second judge tries the reference again
        verdict = judge(problem, AND_DESIGN, config=config)
        assert verdict.outcome is Outcome.INVALID and verdict.error_kind is ErrorKind.OUTAGE
        assert "before the reference run" in verdict.reason
    assert len(tries) == 2 and reference_runs == []


def test_the_default_cache_is_under_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = JudgeConfig().reference_cache()
    assert cache is not None and cache.directory == Path(tmp_path) / "proofgym" / "verilog"
    assert JudgeConfig(reference_cache_dir=None).reference_cache() is None
    assert JudgeConfig(reference_cache_dir=None).fingerprint() == JudgeConfig().fingerprint()


def test_a_hanging_design_is_refuted_not_excused_when_the_reference_shares_its_launch(reference_runs):
    """The reference runs beside the design; a design that hangs does not take it down with it."""
    hanging = AND_DESIGN.replace("assign y = a & b;", "reg x = 0; initial forever x = ~x;\n  assign y = a & b;")
    verdict = judge(and_problem(id="hanging-design"), hanging,
                    config=JudgeConfig(timeout_s=2.0, cpu_s=2, reference_cache_dir=None))
    assert verdict.outcome is Outcome.REFUTED and verdict.reason == "timeout"
    assert verdict.evidence["reference_run"] == "in launch" and reference_runs == ["hanging-design"]


def test_a_flooding_design_is_refuted_even_though_the_flood_stops_the_reference_too(reference_runs):
    wires = "\n".join(f"assign implicit{i} = 1'b0;" for i in range(3000))  # thousands of compiler warnings
    flooding = AND_DESIGN.replace("assign y = a & b;", wires + "\n  assign y = a & b;")
    verdict = judge(and_problem(id="flooding-design"), flooding,
                    config=JudgeConfig(output_kib=16, reference_cache_dir=None))
    assert verdict.outcome is Outcome.REFUTED and verdict.reason == "resource_limit"
    assert verdict.evidence["limit"] == "output"
