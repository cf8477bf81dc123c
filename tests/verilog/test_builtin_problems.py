"""The built-in Verilog problems (``proofgym/verilog/problems/``), checked with bare Icarus Verilog.

Every problem ``ProbNNN_name`` has a spec (``_prompt.txt``) ending with the exact ``module TopModule (...);``
interface, a reference (``_ref.sv``, module ``RefModule``) and a self-checking testbench (``_test.sv``, top
module ``tb``) that prints exactly one line ``Mismatches: N in M samples``.

These files are trusted, so they are simulated here without the sandbox, the way the judge runs them:
``RefModule`` is renamed to a fresh random name (whole word) in the reference and the testbench, and the
compile names the root with ``-s tb``. For each problem:

* the reference, renamed ``TopModule``, passes: exactly one ``Mismatches: 0 in M samples`` line, M > 0, and
  a warning-free compile under ``-Wall``;
* a hand-written wrong design (``builtin_wrong/``) and generic mutants (all outputs 0, all outputs undriven;
  for clocked designs also the reference clocked on the falling edge and the reference with the other kind
  of reset, synchronous vs asynchronous) are refuted: N > 0 with the same M;
* where one exists, an independently written correct design (``builtin_alt/``) passes, so the testbench
  does not depend on how the reference happens to be written.

When ``proofgym.verilog.judge`` exists, the judge must certify every reference and refute every wrong design.
Everything runs on a thread pool of two workers; the simulation tests skip when Icarus Verilog is absent.
"""

from __future__ import annotations

import importlib.util
import re
import secrets
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from _judge import requires_judge, requires_simulator, simulator_problem

HERE = Path(__file__).resolve().parent
WRONG_DIR = HERE / "builtin_wrong"
ALT_DIR = HERE / "builtin_alt"

MIN_PROBLEMS = 30
MIN_SEQUENTIAL = 10
MISMATCH_LINE = re.compile(r"^Mismatches: (\d+) in (\d+) samples$", re.MULTILINE)
HINT_LINE = re.compile(r"^Hint: Output '(\w+)' has (no|\d+) mismatches", re.MULTILINE)
PORT = re.compile(r"^\s*(input|output)\s+(?:\[(\d+):0\]\s+)?(\w+)\s*,?\s*$")
SIM_TIMEOUT_S = 30
# Generous: the slowest reference-vs-reference run takes well under 0.1 s on an idle machine.
MAX_SIM_S = 5.0


def _problems_dir() -> Path:
    spec = importlib.util.find_spec("proofgym")
    assert spec is not None and spec.submodule_search_locations, "proofgym is not importable"
    return Path(next(iter(spec.submodule_search_locations))) / "verilog" / "problems"


PROBLEMS_DIR = _problems_dir()
PROBLEM_IDS = sorted(p.name[: -len("_prompt.txt")] for p in PROBLEMS_DIR.glob("Prob*_prompt.txt"))

def _read(pid: str, suffix: str) -> str:
    return (PROBLEMS_DIR / f"{pid}{suffix}").read_text(encoding="utf-8")


def _header(text: str, module: str) -> str:
    """``module NAME (...);`` of ``text`` (the port list never holds a ``;``)."""
    found = re.search(rf"\bmodule\s+{module}\b[^;]*;", text)
    assert found is not None, f"no 'module {module}' header"
    return found.group(0)


def _ports(header: str) -> list[tuple[str, int, str]]:
    """``(direction, width, name)`` of each port of a header written one port a line."""
    ports = []
    for line in header.splitlines()[1:-1]:
        found = PORT.match(line)
        assert found is not None, f"unexpected port line {line!r}"
        direction, msb, name = found.groups()
        ports.append((direction, int(msb) + 1 if msb else 1, name))
    return ports


def _is_sequential(pid: str) -> bool:
    return any(name == "clk" for _, _, name in _ports(_header(_read(pid, "_ref.sv"), "RefModule")))


# ---------------------------------------------------------------------------------------------- layout


def test_the_set_is_big_and_broad_enough():
    assert len(PROBLEM_IDS) >= MIN_PROBLEMS, PROBLEM_IDS
    numbers = [int(pid[4:7]) for pid in PROBLEM_IDS]
    assert numbers == list(range(1, len(numbers) + 1)), "problem numbers must run 001, 002, ... without gaps"
    sequential = [pid for pid in PROBLEM_IDS if _is_sequential(pid)]
    assert len(sequential) >= MIN_SEQUENTIAL
    assert len(PROBLEM_IDS) - len(sequential) >= MIN_SEQUENTIAL
    assert sum("fsm" in _read(pid, "_prompt.txt").lower() or "state machine" in _read(pid, "_prompt.txt").lower()
               for pid in sequential) >= 4
    assert any("fifo" in pid for pid in PROBLEM_IDS)
    # Nothing else lives in the folder.
    expected = {f"{pid}{suffix}" for pid in PROBLEM_IDS for suffix in ("_prompt.txt", "_ref.sv", "_test.sv")}
    assert {p.name for p in PROBLEMS_DIR.iterdir()} == expected


@pytest.mark.parametrize("pid", PROBLEM_IDS)
def test_files_follow_the_layout(pid):
    assert re.fullmatch(r"Prob\d{3}_[a-z][a-z0-9]*(_[a-z0-9]+)*", pid)
    prompt, ref, test = _read(pid, "_prompt.txt"), _read(pid, "_ref.sv"), _read(pid, "_test.sv")

    # The spec ends with the exact interface, which is the reference's header renamed TopModule.
    interface = "module TopModule" + _header(ref, "RefModule")[len("module RefModule"):]
    assert prompt.rstrip().endswith(interface), "the prompt must end with the reference's interface"
    assert prompt.count("module TopModule") == 1
    ports = _ports(interface)
    assert any(d == "output" for d, _, _ in ports) and len({n for _, _, n in ports}) == len(ports)
    for _, _, name in ports:
        assert re.search(rf"\b{name}\b", prompt[: -len(interface)]), f"the spec never mentions port {name}"
    if _is_sequential(pid):
        assert "rising" in prompt and "reset" in prompt

    # The reference: one module, RefModule, nothing but hardware.
    assert re.findall(r"^\s*module\s+(\w+)", ref, re.MULTILINE) == ["RefModule"]
    assert "`" not in ref and "TopModule" not in ref
    assert set(re.findall(r"\$\w+", ref)) <= {"$signed", "$unsigned"}

    # The testbench: the usual shape, one final line, no file or system access.
    assert test.startswith("`timescale 1 ps/1 ps\n")
    assert re.findall(r"^module\s+(\w+)", test, re.MULTILINE) == ["stimulus_gen", "tb"]
    assert len(re.findall(r"\bRefModule\s+good1\b", test)) == 1
    assert len(re.findall(r"\bTopModule\s+top_module1\b", test)) == 1
    assert test.count('$display("Mismatches: %0d in %0d samples", errors, samples);') == 1
    assert test.count("Mismatches:") == 1
    assert "$finish" in test
    for banned in ("$fopen", "$fwrite", "$dump", "$readmem", "$writemem", "$system", "`include", "`define",
                   "$test$plusargs", "$value$plusargs"):
        assert banned not in test, banned
    for direction, _, name in ports:
        assert (f".{name}({name}_ref)" if direction == "output" else f".{name}({name})") in test, name
    # Every output is compared and has its own hint line.
    for direction, _, name in ports:
        if direction == "output":
            assert f"match_{name}" in test and f'"{name}", errors_{name}' in test

    assert (WRONG_DIR / f"{pid}_wrong.sv").is_file(), "every problem needs a wrong design for the tests"


# ------------------------------------------------------------------------------------------ simulation


@dataclass(frozen=True)
class SimResult:
    compile_rc: int
    compile_output: str
    output: str
    seconds: float

    @property
    def counts(self) -> list[tuple[int, int]]:
        return [(int(n), int(m)) for n, m in MISMATCH_LINE.findall(self.output)]

    def describe(self) -> str:
        return f"compile rc={self.compile_rc}\n{self.compile_output}\n--- simulation ---\n{self.output[-3000:]}"


def _rename(text: str, old: str, new: str) -> str:
    return re.sub(rf"\b{old}\b", new, text)


def simulate(pid: str, design: str) -> SimResult:
    """Compile and run ``pid``'s testbench against ``design`` the way the judge does, without a sandbox."""
    fresh = f"Ref_{secrets.token_hex(6)}"
    test = _rename(_read(pid, "_test.sv"), "RefModule", fresh)
    ref = _rename(_read(pid, "_ref.sv"), "RefModule", fresh)
    with tempfile.TemporaryDirectory(prefix="pg_builtin_") as tmp:
        work = Path(tmp)
        for name, text in (("test.sv", test), ("ref.sv", ref), ("design.sv", design)):
            (work / name).write_text(text, encoding="utf-8")
        started = time.perf_counter()
        compiled = subprocess.run(
            ["iverilog", "-g2012", "-Wall", "-Wno-timescale", "-s", "tb", "-o", "sim.vvp",
             "test.sv", "ref.sv", "design.sv"],
            cwd=work, capture_output=True, text=True, timeout=SIM_TIMEOUT_S, stdin=subprocess.DEVNULL,
        )
        output = ""
        if compiled.returncode == 0:
            ran = subprocess.run(["vvp", "-n", "sim.vvp"], cwd=work, capture_output=True, text=True,
                                 timeout=SIM_TIMEOUT_S, stdin=subprocess.DEVNULL)
            output = ran.stdout + ran.stderr
        seconds = time.perf_counter() - started
    return SimResult(compiled.returncode, compiled.stdout + compiled.stderr, output, seconds)


def _reference_as_top(pid: str) -> str:
    return _rename(_read(pid, "_ref.sv"), "RefModule", "TopModule")


def _interface(pid: str) -> str:
    return "module TopModule" + _header(_read(pid, "_ref.sv"), "RefModule")[len("module RefModule"):]


def mutants(pid: str) -> dict[str, str]:
    """Designs that must be refuted: the hand-written wrong one plus generic ones derived from the reference."""
    interface = _interface(pid)
    outputs = [(w, n) for d, w, n in _ports(interface) if d == "output"]
    found = {
        "wrong": (WRONG_DIR / f"{pid}_wrong.sv").read_text(encoding="utf-8"),
        "outputs_zero": interface + "\n" + "".join(f"  assign {n} = {w}'d0;\n" for w, n in outputs) + "endmodule\n",
        "outputs_undriven": interface + "\nendmodule\n",
    }
    if _is_sequential(pid):
        ref = _reference_as_top(pid)
        found["negedge_clock"] = ref.replace("posedge clk", "negedge clk")
        if "posedge areset" in ref:
            swapped = re.sub(r"(\s+or\s+|,\s*)posedge areset", "", ref)
        else:
            swapped = ref.replace("always @(posedge clk)", "always @(posedge clk or posedge reset)")
        assert swapped != ref, pid
        found["other_reset_kind"] = swapped
    return found


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, str], SimResult]:
    """Every simulation of this module, run once on two workers: ``(pid, case) -> result``."""
    if simulator_problem() is not None:
        pytest.skip(simulator_problem())
    jobs: dict[tuple[str, str], str] = {}
    for pid in PROBLEM_IDS:
        jobs[(pid, "reference")] = _reference_as_top(pid)
        alt = ALT_DIR / f"{pid}_alt.sv"
        if alt.is_file():
            jobs[(pid, "alternative")] = alt.read_text(encoding="utf-8")
        for name, design in mutants(pid).items():
            jobs[(pid, name)] = design
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {key: pool.submit(simulate, key[0], design) for key, design in jobs.items()}
        done = {key: future.result() for key, future in futures.items()}
    print(f"\n{len(done)} simulations of {len(PROBLEM_IDS)} built-in problems in "
          f"{time.perf_counter() - started:.2f} s on 2 workers")
    return done


@requires_simulator
@pytest.mark.parametrize("pid", PROBLEM_IDS)
def test_reference_passes_its_testbench(results, pid):
    result = results[(pid, "reference")]
    assert result.compile_rc == 0 and result.compile_output == "", result.describe()
    assert len(result.counts) == 1, result.describe()
    (mismatches, samples), = result.counts
    assert mismatches == 0 and samples > 0, result.describe()
    assert "TIMEOUT" not in result.output
    outputs = [n for d, _, n in _ports(_interface(pid)) if d == "output"]
    assert HINT_LINE.findall(result.output) == [(n, "no") for n in outputs], result.describe()
    assert result.seconds < MAX_SIM_S


@requires_simulator
@pytest.mark.parametrize("pid", PROBLEM_IDS)
def test_wrong_designs_are_refuted_on_the_same_samples(results, pid):
    (_, samples), = results[(pid, "reference")].counts
    for case in mutants(pid):
        result = results[(pid, case)]
        assert result.compile_rc == 0, f"{case}: {result.describe()}"
        assert len(result.counts) == 1, f"{case}: {result.describe()}"
        (mismatches, seen), = result.counts
        assert seen == samples, f"{case}: {seen} samples, the reference run had {samples}"
        assert mismatches > 0, f"{case} was not caught: {result.describe()}"
        assert any(count != "no" for _, count in HINT_LINE.findall(result.output)), case


@requires_simulator
@pytest.mark.parametrize("pid", sorted(p.name[: -len("_alt.sv")] for p in ALT_DIR.glob("Prob*_alt.sv")))
def test_independent_correct_designs_pass(results, pid):
    assert pid in PROBLEM_IDS
    result = results[(pid, "alternative")]
    assert result.compile_rc == 0, result.describe()
    assert result.counts == [(0, results[(pid, "reference")].counts[0][1])], result.describe()


# ------------------------------------------------------------------------ the package's own loader and judge


def _optional(module: str):
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


_problems_module = _optional("proofgym.verilog._problem_loader")


@pytest.mark.skipif(_problems_module is None, reason="proofgym.verilog._problem_loader is not there yet")
def test_builtin_problems_loads_every_problem():
    loaded = _problems_module.builtin_problems()
    assert sorted(loaded) == PROBLEM_IDS
    for pid, problem in loaded.items():
        assert problem.source == "builtin"
        assert problem.spec == _read(pid, "_prompt.txt")
        assert problem.spec.rstrip().endswith(_problems_module.interface(problem))


def _judge_module():
    """The module offering ``judge(problem, design)``: the package's public API if there, else ``_judge``."""
    for name in ("proofgym.verilog", "proofgym.verilog._judge"):
        module = _optional(name)
        if module is not None and callable(getattr(module, "judge", None)):
            return module
    return None


_judge = _judge_module()


def _judge_problems() -> dict[str, object]:
    if _problems_module is not None:
        return _problems_module.builtin_problems()
    from proofgym.verilog._problem import Problem

    return {pid: Problem(id=pid, spec=_read(pid, "_prompt.txt"), reference=_read(pid, "_ref.sv"),
                         testbench=_read(pid, "_test.sv")) for pid in PROBLEM_IDS}


@requires_judge
@pytest.mark.skipif(_judge is None, reason="proofgym.verilog.judge is not there yet")
def test_the_judge_certifies_references_and_refutes_wrong_designs(results):
    from proofgym.core import Outcome

    problems = _judge_problems()

    def run(pid: str, case: str, design: str):
        return pid, case, _judge.judge(problems[pid], design)

    jobs = []
    for pid in PROBLEM_IDS:
        jobs.append((pid, "reference", _reference_as_top(pid)))
        jobs.append((pid, "wrong", (WRONG_DIR / f"{pid}_wrong.sv").read_text(encoding="utf-8")))
        alt = ALT_DIR / f"{pid}_alt.sv"
        if alt.is_file():
            jobs.append((pid, "alternative", alt.read_text(encoding="utf-8")))
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=2) as pool:
        verdicts = list(pool.map(lambda job: run(*job), jobs))
    print(f"\njudged {len(jobs)} designs in {time.perf_counter() - started:.2f} s on 2 workers")

    failures = []
    for pid, case, verdict in verdicts:
        (_, samples), = results[(pid, "reference")].counts
        if case == "wrong":
            ok = verdict.outcome == Outcome.REFUTED and verdict.reason == "mismatches"
        else:
            ok = verdict.outcome == Outcome.CERTIFIED
        ok = ok and verdict.evidence.get("samples") == samples
        if not ok:
            failures.append(f"{pid} {case}: {verdict.outcome} {verdict.reason} {verdict.evidence}")
    assert not failures, "\n".join(failures)
