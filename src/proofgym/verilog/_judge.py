"""The judge: does a model-written ``TopModule`` pass a problem's testbench? Hardened against reward hacks.

Steps (``docs/verilog-judging.md``, hardening a-e), all in **one** sandbox launch (as ``nobody`` when this
process is root):

1. Python rejects a design that is too long or contains `` `include `` (nothing is run).
2. *preprocess* -- ``iverilog -E`` expands the design's macros in the sandbox, with only the design in
   the job directory; at a checkpoint Python scans the preprocessed text: every ``$`` system task or
   function must be on an allow-list (no file I/O, no output, no simulation control, no plusargs),
   and no compiler directive beyond a few harmless ones may remain. Only then are the testbench and
   the reference written into the job directory (a design could otherwise preprocess them in).
3. *elaborate* -- the preprocessed design alone, ``-tnull -s TopModule``: hierarchical references out of
   the design (``force tb.errors = 0``) fail to resolve.
4. *compile* -- testbench, reference and design with ``-s tb`` (no other root module runs), the
   reference module renamed ``RefModule`` -> a fresh random name in both the reference and the
   testbench, so a design cannot instantiate it.
5. *simulate* -- ``vvp -n`` (``$stop`` ends the run instead of reading stdin; never ``-m``/``-M``) of the
   ``.vvp`` file that step 4 just wrote in the fresh job directory, with dumping off.

A pass needs exactly one ``Mismatches: N in M samples`` line in the simulation output, ``N == 0`` and
``M`` equal to the sample count of a reference-vs-reference run of the same testbench. ``M`` is found
once per problem (per tool versions and limits) and remembered in the process (:mod:`._reference_counts`) and,
unless ``reference_cache_dir`` is ``None``, on disk for later processes (:mod:`._reference_cache`). When it is
not known yet, the reference run is part of the judge's own launch: right after step 2 it is compiled
and simulated in the background, alongside steps 3-5, into log files the design cannot write (it has
no file I/O, step 2), which Python reads once the job has ended. So a cold judge costs one launch, and
a problem with a long simulation does not pay it twice in a row. A ``TIMEOUT`` line from the testbench's own
time limit is not a failure by itself: two VerilogEval testbenches (Prob082, Prob141) reach it in
every run, the reference's included; a run cut short shows in the sample count. Re-judging at submit
time (step e) is the caller's part: a judge call never trusts an earlier one.

Hitting the CPU-time rlimit is a ``timeout``, like the wall clock (``JudgeConfig.timeout_s``).
"""

from __future__ import annotations

import os
import re
import secrets
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proofgym.core import ErrorKind, Outcome, Verdict
from proofgym.verilog._judge_config import JudgeConfig
from proofgym.verilog._lint import forbidden_constructs
from proofgym.verilog._problem import Problem
from proofgym.verilog._reference_counts import known_samples, remember_samples
from proofgym.verilog._sandbox import SandboxResult, SandboxUnavailable, limit_from_status, write_job_file
from proofgym.verilog._toolchain import Toolchain, ToolchainError

VERIFIER_NAME = "verilog"

REFUTATION_REASONS = (
    "syntax_error",
    "forbidden_construct",
    "mismatches",
    "timeout",
    "resource_limit",
    "no_verdict_line",
    "multiple_verdict_lines",
    "sample_count_mismatch",
)
"""The ``Verdict.reason`` of every refuted design."""

# The flags of VerilogEval's own judge.
_FLAGS = ("-Wall", "-Winfloop", "-Wno-timescale", "-g2012")

_VERDICT_LINE = re.compile(r"^Mismatches: (\d+) in (\d+) samples$")
_MEMORY_HINT = re.compile(r"out of memory|bad_alloc|cannot allocate|memory exhausted", re.IGNORECASE)
# What the shell prints when a command dies of a signal.
_SIGNAL_MESSAGE = re.compile(r"^(?:Segmentation fault|Aborted|Killed|Bus error|Illegal instruction|Floating point "
                             r"exception|CPU time limit exceeded|File size limit exceeded)", re.MULTILINE)

_PREPROCESSED_LIMIT = 1 << 20  # characters of the preprocessed design: more is a macro bomb
_MAX_HINTS = 20


class ReferenceRunError(RuntimeError):
    """The reference-vs-reference run of a problem failed: the problem (or the toolchain) is broken.

    ``transient`` when trying again may succeed (the sandbox failed to start, the machine was too
    slow for the wall-clock limit); otherwise the failure is remembered for the process's life.
    """

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient


def reference_samples(problem: Problem, *, config: JudgeConfig | None = None) -> int:
    """The sample count ``M`` of the problem's testbench with the reference as the design (sandboxed).

    Found once per problem content, tool versions and limits, and remembered in the process
    (failures included: a broken problem costs one run, not one per design, unless the failure was
    transient) and on disk (counts only; see ``JudgeConfig.reference_cache_dir``); a reference-only
    launch when not known. Raises :class:`ReferenceRunError` when the reference does not compile or
    pass its own testbench, and the toolchain and sandbox errors of :func:`judge`.
    """
    config = config or JudgeConfig()
    toolchain = config.toolchain()
    known = known_samples(problem, config, toolchain)
    if known is None:
        try:
            known = _run_reference(problem, config, toolchain)
        except ReferenceRunError as exc:
            if exc.transient:
                raise
            known = str(exc)
        remember_samples(problem, config, toolchain, known)
    if isinstance(known, str):
        raise ReferenceRunError(known)
    return known


def judge(problem: Problem, design: str, *, config: JudgeConfig | None = None,
          expected_samples: int | None = None, compile_only: bool = False) -> Verdict:
    """Judge ``design`` (Verilog source defining ``TopModule``) against ``problem``'s testbench.

    Returns ``CERTIFIED`` (a pass, ``decision=None``), ``REFUTED`` with ``reason`` in
    :data:`REFUTATION_REASONS`, or ``INVALID`` when the tooling failed (no simulator, no sandbox, the
    reference-vs-reference run failed, or it did not finish in a launch whose wall-clock limit the
    design's run hit too: then the design is not blamed). ``expected_samples`` skips the reference
    run when known (:func:`reference_samples`); otherwise a remembered count is used, or the reference
    runs in this launch. Never raises for anything in ``design``.

    ``compile_only`` stops after step 4 (nothing is simulated, no reference run is needed): ``CERTIFIED``
    then means the design compiles with the testbench (``reason="compiled"``), not that it passes.
    """
    config = config or JudgeConfig()
    start = time.perf_counter()
    toolchain = config.toolchain()
    sandbox = config.sandbox()
    try:
        toolchain.require_simulator()
        sandboxed = sandbox.sandboxed
    except (ToolchainError, SandboxUnavailable) as exc:
        return _invalid(ErrorKind.CRASH, str(exc), start)
    base = {"problem": problem.id, "toolchain": toolchain.versions(), "sandboxed": sandboxed}

    if len(design) > config.max_design_chars:
        return _refuted("resource_limit", f"the design has {len(design)} characters, limit {config.max_design_chars}",
                        {**base, "limit": "design_size"}, start)
    if "`include" in design:
        return _refuted("forbidden_construct", "`include is not allowed in a design",
                        {**base, "constructs": ["`include"]}, start)

    if expected_samples is None and not compile_only:
        known = known_samples(problem, config, toolchain)
        if isinstance(known, str):
            return _invalid(ErrorKind.CRASH, known, start)
        expected_samples = known

    # Not known yet: the reference runs in this launch, alongside the design.
    run = _DesignRun(problem, toolchain, with_reference=expected_samples is None and not compile_only,
                     compile_only=compile_only)
    result = sandbox.run(run.script(), {"design.sv": design}, on_checkpoint=run.checkpoint, on_finish=run.finish)
    timings = {"sandbox_s": result.duration_s, "check_s": run.check_s}
    phases = _split_phases(result.output, run.nonce)
    unfinished = None  # why the reference run did not finish, when the launch ended first
    if run.with_reference:
        try:
            expected_samples = _reference_in_launch(run)
        except ReferenceRunError as exc:
            if not exc.transient:  # a broken problem: no design can be judged against it
                remember_samples(problem, config, toolchain, str(exc))
                return _invalid(ErrorKind.CRASH, str(exc), start, timings)
            # Cut short with the launch. Only a design whose run completed needs the count (and it waited for
            # it); but when the launch ran out of time, the design is not to blame if the reference also ran out.
            unfinished = str(exc)
            if result.timed_out:
                return _invalid(ErrorKind.OUTAGE, unfinished, start, timings)
        if expected_samples is not None:
            remember_samples(problem, config, toolchain, expected_samples)
            base["reference_run"] = "in launch"
    return _decide(run, result, phases, expected_samples, unfinished, config, base, timings, start)


@dataclass
class _DesignRun:
    """The script of one design's judge launch, what its checkpoint found and, ``with_reference``, how the
    reference-vs-reference run that shared the launch ended (read by :meth:`finish`)."""

    problem: Problem
    toolchain: Toolchain
    with_reference: bool = False
    compile_only: bool = False
    nonce: str = field(default_factory=lambda: secrets.token_hex(12))
    ref_name: str = field(default_factory=lambda: f"Ref_{secrets.token_hex(8)}")
    forbidden: list[str] = field(default_factory=list)
    oversized: int | None = None
    unreadable: str | None = None  # why the preprocessed design could not be read (our failure)
    staged: bool = False  # the design passed the scan, the testbench and reference were staged
    reference_statuses: dict[str, int] = field(default_factory=dict)  # ref_compile/ref_simulate, when finished
    reference_logs: dict[str, str] = field(default_factory=dict)
    check_s: float = 0.0

    def script(self) -> str:
        iverilog, vvp = shlex.quote(self.toolchain.iverilog), shlex.quote(self.toolchain.vvp)  # type: ignore[arg-type]
        flags = " ".join(_FLAGS)
        # The reference run goes on in the background (its own processes, its own rlimits), writing only
        # to its own files; every way out of the script waits for it.
        reference = [
            f"{{ {_reference_compile(iverilog)} >ref_compile.log 2>&1; r=$?; echo $r >ref_compile.status",
            f"  [ $r -eq 0 ] && {{ {_reference_simulate(vvp)} >ref_simulate.log 2>&1; echo $? >ref_simulate.status; }}",
            "} &",
        ] if self.with_reference else []
        return "\n".join([
            _phase(self.nonce, "preprocess", f"{iverilog} -E -o design_pp.sv design.sv"),
            "checkpoint || exit 0",
            *reference,
            _phase(self.nonce, "elaborate", f"{iverilog} {flags} -tnull -s TopModule design_pp.sv"),
            _phase(self.nonce, "compile", f"{iverilog} {flags} -s tb -o sim.vvp tb.sv ref.sv design_pp.sv",
                   last=self.compile_only),
            *([] if self.compile_only else [_phase(self.nonce, "simulate", f"{vvp} -n sim.vvp -none </dev/null",
                                                   last=True)]),
            "wait",
        ])

    def checkpoint(self, job: Path) -> bool:
        """Scan the preprocessed design; stage the testbench and reference only if it is clean."""
        start = time.perf_counter()
        try:
            path = job / "design_pp.sv"
            size = path.stat().st_size
            if size > _PREPROCESSED_LIMIT:
                self.oversized = size
                return False
            self.forbidden = forbidden_constructs(path.read_text(encoding="utf-8", errors="replace"))
            if self.forbidden:
                return False
            for name, text in _reference_files(self.problem, self.ref_name, self.with_reference).items():
                write_job_file(job, name, text)
            self.staged = True
            return True
        except OSError as exc:
            self.unreadable = f"{type(exc).__name__}: {exc}"
            return False
        finally:
            self.check_s = time.perf_counter() - start

    def finish(self, job: Path) -> None:
        """Once the job has ended: how the steps of the reference run that finished ended."""
        if not self.with_reference:
            return
        for name in ("ref_compile", "ref_simulate"):
            try:
                status = (job / f"{name}.status").read_text().strip()
                with open(job / f"{name}.log", "rb") as log:  # its end: the verdict line is last
                    log.seek(max(0, os.fstat(log.fileno()).st_size - _REF_LOG_LIMIT))
                    text = log.read(_REF_LOG_LIMIT).decode("utf-8", errors="replace")
            except OSError:
                return  # it did not finish: the job was stopped first
            if not status.isdigit():
                return
            self.reference_statuses[name], self.reference_logs[name] = int(status), text


_DESIGN_PHASES = ("preprocess", "elaborate", "compile", "simulate")
_REF_LOG_LIMIT = 64 << 10


def _reference_compile(iverilog: str) -> str:
    """Compile the testbench with the reference as the design (``ref_top.sv``)."""
    return f"{iverilog} {' '.join(_FLAGS)} -s tb -o ref.vvp tb.sv ref.sv ref_top.sv"


def _reference_simulate(vvp: str) -> str:
    return f"{vvp} -n ref.vvp -none </dev/null"


def _reference_files(problem: Problem, ref_name: str, reference_as_top: bool) -> dict[str, str]:
    """The testbench and the reference (renamed ``ref_name`` in both), and for a reference-vs-reference run
    the reference as ``TopModule``."""
    files = {"tb.sv": _rename_ref(problem.testbench, ref_name), "ref.sv": _rename_ref(problem.reference, ref_name)}
    if reference_as_top:
        files["ref_top.sv"] = _rename_ref(problem.reference, "TopModule")
    return files


def _run_reference(problem: Problem, config: JudgeConfig, toolchain: Toolchain) -> int:
    """A launch of the reference-vs-reference run alone; its sample count."""
    toolchain.require_simulator()
    nonce, ref_name = secrets.token_hex(12), f"Ref_{secrets.token_hex(8)}"
    iverilog, vvp = shlex.quote(toolchain.iverilog), shlex.quote(toolchain.vvp)  # type: ignore[arg-type]
    script = "\n".join([_phase(nonce, "ref_compile", _reference_compile(iverilog)),
                        _phase(nonce, "ref_simulate", _reference_simulate(vvp), last=True)])
    result = config.sandbox().run(script, _reference_files(problem, ref_name, True))
    phases = _split_phases(result.output, nonce)
    if _reference_finished(phases.statuses):
        return _reference_count(problem, phases.statuses, phases.logs)
    what = f"reference run of problem {problem.id!r}"
    if result.timed_out:  # the machine was too slow: another try may do
        raise ReferenceRunError(f"{what} exceeded the wall-clock limit of {config.timeout_s:g} s", transient=True)
    if result.killed_by_limit:
        raise ReferenceRunError(f"{what} hit the {result.killed_by_limit} limit")
    raise ReferenceRunError(f"the sandbox failed to start the {what}: {_tail(result.output, 600)}", transient=True)


def _reference_in_launch(run: _DesignRun) -> int | None:
    """The sample count found by the reference run that shared a design's launch; ``None`` when it never
    started (the design failed to preprocess or the scan refused it). A run the end of the launch cut
    short is a transient failure, whatever stopped the launch: the design may have."""
    if not run.staged:
        return None
    if not _reference_finished(run.reference_statuses):
        raise ReferenceRunError(f"the launch ended before the reference run of problem {run.problem.id!r} did",
                                transient=True)
    return _reference_count(run.problem, run.reference_statuses, run.reference_logs)


def _reference_finished(statuses: dict[str, int]) -> bool:
    return "ref_simulate" in statuses or statuses.get("ref_compile", 0) != 0


def _reference_count(problem: Problem, statuses: dict[str, int], logs: dict[str, str]) -> int:
    """The sample count of a finished reference run; raises :class:`ReferenceRunError` when it failed."""
    what = f"reference run of problem {problem.id!r}"
    for name in ("ref_compile", "ref_simulate"):
        status = statuses.get(name)
        if status != 0:
            raise ReferenceRunError(f"{what} failed at {name.removeprefix('ref_')} (status {status}): "
                                    f"{_tail(logs.get(name, ''), 600)}")
    lines = [m for line in logs["ref_simulate"].splitlines() if (m := _VERDICT_LINE.match(line.strip()))]
    if len(lines) != 1 or int(lines[0].group(1)) != 0:
        raise ReferenceRunError(f"{what} did not pass its own testbench: {_tail(logs['ref_simulate'], 600)}")
    return int(lines[0].group(2))


@dataclass
class _Phases:
    statuses: dict[str, int]  # phase -> exit status, for the phases that finished
    logs: dict[str, str]  # phase -> its output; the phase that was running when the job ended included
    last: str | None  # the last phase of the design (not the reference's) that finished


def _split_phases(output: str, nonce: str) -> _Phases:
    statuses: dict[str, int] = {}
    logs: dict[str, str] = {}
    pending: list[str] = []
    last = None
    for line in output.splitlines():
        parts = line.split(" ")
        if len(parts) == 3 and parts[0] == nonce and parts[2].isdigit():
            name = parts[1]
            statuses[name], logs[name] = int(parts[2]), "\n".join(pending)
            pending = []
            if name in _DESIGN_PHASES:
                last = name
        else:
            pending.append(line)
    if pending:
        logs["running"] = "\n".join(pending)
    return _Phases(statuses, logs, last)


def _decide(run: _DesignRun, result: SandboxResult, phases: _Phases, expected: int | None, unfinished: str | None,
            config: JudgeConfig, base: dict[str, Any], timings: dict[str, float], start: float) -> Verdict:
    logs = {name: _clean(text, config.max_log_chars) for name, text in phases.logs.items()}
    evidence: dict[str, Any] = {**base, "phase": phases.last, "expected_samples": expected,
                                "duration_s": result.duration_s}

    def refuted(reason: str, detail: str, **extra: Any) -> Verdict:
        return _refuted(reason, detail, {**evidence, **extra}, start, timings)

    if phases.last is None and result.killed_by_limit is None:
        # Not one phase finished and no limit hit: bubblewrap itself failed to set up the sandbox.
        return _invalid(ErrorKind.OUTAGE, f"the sandbox failed to start the job: {_tail(result.output, 600)}",
                        start, timings)
    if result.killed_by_limit in ("wall_time", "cpu"):
        return refuted("timeout", f"the job exceeded its {'wall-clock' if result.timed_out else 'CPU'} time limit "
                       f"during {_next_phase(phases.last)}", limit=result.killed_by_limit, log=logs.get("running", ""))
    if result.killed_by_limit is not None:
        return refuted("resource_limit", f"the job exceeded its {result.killed_by_limit} limit during "
                       f"{_next_phase(phases.last)}", limit=result.killed_by_limit, log=logs.get("running", ""))
    if phases.statuses.get("preprocess") != 0:
        return _failed_phase("preprocess", phases, logs, refuted, start, timings)
    if run.unreadable is not None:
        return _invalid(ErrorKind.CRASH, f"the checkpoint failed: {run.unreadable}", start, timings)
    if run.oversized is not None:
        return refuted("resource_limit", f"the preprocessed design has {run.oversized} bytes, limit "
                       f"{_PREPROCESSED_LIMIT}", limit="design_size")
    if run.forbidden:
        return refuted("forbidden_construct", "the design uses " + ", ".join(run.forbidden), constructs=run.forbidden)
    for name in ("elaborate", "compile"):
        if phases.statuses.get(name) != 0:
            return _failed_phase(name, phases, logs, refuted, start, timings)
    if run.compile_only:
        return Verdict(Outcome.CERTIFIED, evidence={**evidence, "reason": "compiled", "compile_log": logs["compile"],
                                                    "detail": "the design compiles with the testbench"},
                       timings=_timings(start, timings), reason="compiled")
    sim_log = phases.logs.get("simulate", "")
    sim_evidence = {"sim_log": logs.get("simulate", ""),
                    "hints": [line.strip() for line in sim_log.splitlines() if line.startswith("Hint:")][:_MAX_HINTS]}
    if phases.statuses.get("simulate") != 0:
        return _failed_phase("simulate", phases, logs, refuted, start, timings)
    verdict_lines = [m for line in sim_log.splitlines() if (m := _VERDICT_LINE.match(line.strip()))]
    if not verdict_lines:
        return refuted("no_verdict_line", "the simulation printed no 'Mismatches: N in M samples' line", **sim_evidence)
    if len(verdict_lines) > 1:
        return refuted("multiple_verdict_lines", f"the simulation printed {len(verdict_lines)} verdict lines",
                       **sim_evidence)
    mismatches, samples = int(verdict_lines[0].group(1)), int(verdict_lines[0].group(2))
    counts = {"mismatches": mismatches, "samples": samples, **sim_evidence}
    if expected is None:  # the design's run completed, but the launch ended before the reference run did
        return _invalid(ErrorKind.OUTAGE, unfinished or "no reference sample count to compare with", start, timings)
    if samples != expected:
        return refuted("sample_count_mismatch", f"{samples} samples, the reference run has {expected}", **counts)
    graded = {"graded": 1.0 - mismatches / samples if samples else 0.0} if config.partial_credit else {}
    if mismatches:
        return _refuted("mismatches", f"{mismatches} mismatches in {samples} samples",
                        {**evidence, **counts}, start, timings, graded)
    return Verdict(Outcome.CERTIFIED, evidence={**evidence, "reason": "pass", "detail": "no mismatches", **counts},
                   components=graded, timings=_timings(start, timings), reason="pass")


def _failed_phase(name: str, phases: _Phases, logs: dict[str, str], refuted: Callable[..., Verdict], start: float,
                  timings: dict[str, float]) -> Verdict:
    status = phases.statuses[name]
    log, raw = logs.get(name, ""), phases.logs.get(name, "")
    key = "sim_log" if name == "simulate" else "compile_log"
    if status in (126, 127):  # the shell could not run the tool: our fault, not the design's
        return _invalid(ErrorKind.CRASH, f"{name} could not run in the sandbox (status {status}): {log}", start,
                        timings)
    # iverilog exits with its error count, so a status above 128 is a signal only if the shell said so.
    killed = status > 128 and _SIGNAL_MESSAGE.search(raw) is not None
    limit = limit_from_status(status) if killed else None
    if limit == "cpu":
        return refuted("timeout", f"{name} exceeded its CPU time limit", limit="cpu", **{key: log})
    if _MEMORY_HINT.search(raw):
        limit = "memory"
    if killed or limit is not None or name == "simulate":
        return refuted("resource_limit", f"{name} failed with status {status} (a resource limit or a crash)",
                       limit=limit or "crash", **{key: log})
    return refuted("syntax_error", f"{name} failed: {_first_error(log)}", compile_log=log)


def _phase(nonce: str, name: str, command: str, *, last: bool = False) -> str:
    # A failed phase ends the script, once any background job (the reference run) is done.
    report = f'r=$?; echo "{nonce} {name} $r"'
    return f"{command}\n{report}" if last else f"{command}\n{report}; [ $r -eq 0 ] || {{ wait; exit 0; }}"


def _next_phase(last: str | None) -> str:
    order = _DESIGN_PHASES
    return order[order.index(last) + 1] if last in order[:-1] else "the run" if last else order[0]


def _rename_ref(text: str, name: str) -> str:
    return re.sub(r"\bRefModule\b", name, text)


def _clean(log: str, limit: int) -> str:
    # Error messages name the preprocessed file; the author knows it as design.sv (lines match).
    lines = [line for line in log.splitlines() if line != "VCD info: dumping is suppressed."]
    return _cap("\n".join(lines).replace("design_pp.sv", "design.sv").strip(), limit)


def _first_error(log: str) -> str:
    for line in log.splitlines():
        if "error" in line.lower() or "syntax" in line.lower():
            return line.strip()[:300]
    return (log.strip().splitlines() or ["no message"])[0][:300]


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n... [{len(text) - 2 * half} characters cut] ...\n{text[-half:]}"


def _tail(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def _timings(start: float, timings: dict[str, float] | None = None) -> dict[str, float]:
    return {**(timings or {}), "judge_s": time.perf_counter() - start}


def _refuted(reason: str, detail: str, evidence: dict[str, Any], start: float,
             timings: dict[str, float] | None = None, components: dict[str, float] | None = None) -> Verdict:
    return Verdict(Outcome.REFUTED, evidence={**evidence, "reason": reason, "detail": detail},
                   components=components or {}, timings=_timings(start, timings), reason=reason)


def _invalid(kind: ErrorKind, reason: str, start: float, timings: dict[str, float] | None = None) -> Verdict:
    return Verdict(Outcome.INVALID, error_kind=kind, reason=reason, timings=_timings(start, timings))
