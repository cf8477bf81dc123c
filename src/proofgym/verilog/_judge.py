"""The judge: does a model-written ``TopModule`` pass a problem's testbench? Hardened against reward hacks.

Steps (``../shared/brief/VERILOG.md``, hardening a-e), all in **one** sandbox launch:

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
``M`` equal to the sample count of a reference-vs-reference run of the same testbench (run once per
problem and process, sandboxed too). A ``TIMEOUT`` line from the testbench's own time limit is not a
failure by itself: two VerilogEval testbenches (Prob082, Prob141) reach it in every run, the
reference's included; a run cut short shows in the sample count. Re-judging at submit time (step e)
is the caller's part: a judge call never trusts an earlier one.

Hitting the CPU-time rlimit is a ``timeout``, like the wall clock (``JudgeConfig.timeout_s``).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import shlex
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from proofgym.core import ErrorKind, Outcome, Verdict
from proofgym.verilog._problem import Problem
from proofgym.verilog._sandbox import Sandbox, SandboxLimits, SandboxResult, SandboxUnavailable, limit_from_status
from proofgym.verilog._toolchain import Toolchain, ToolchainError, detect_toolchain

JUDGE_VERSION = "1"
"""Bump when the same design could be judged differently (new checks, new outcome rules)."""

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

# Pure functions only: nothing that reads or writes files, prints, reads plusargs, stops or finishes
# the simulation, or reaches outside the design ($root, $unit).
ALLOWED_SYSTEM_FUNCTIONS = frozenset({
    "$signed", "$unsigned", "$clog2", "$bits", "$size", "$left", "$right", "$low", "$high", "$increment",
    "$dimensions", "$unpacked_dimensions", "$countones", "$countbits", "$onehot", "$onehot0", "$isunknown",
    "$time", "$stime", "$realtime", "$random", "$urandom", "$urandom_range",
    "$itor", "$rtoi", "$bitstoreal", "$realtobits", "$bitstoshortreal", "$shortrealtobits",
    "$ln", "$log10", "$exp", "$sqrt", "$pow", "$floor", "$ceil",
    "$sin", "$cos", "$tan", "$asin", "$acos", "$atan", "$atan2", "$hypot",
    "$sinh", "$cosh", "$tanh", "$asinh", "$acosh", "$atanh",
    "$past", "$rose", "$fell", "$stable",
})
"""``$`` names a design may use. Everything else (``$fopen``, ``$display``, ``$finish``...) is forbidden."""

# Directives `iverilog -E` leaves in its output for the compiler; none of them reaches outside the design.
ALLOWED_DIRECTIVES = frozenset({
    "timescale", "default_nettype", "resetall", "celldefine", "endcelldefine", "unconnected_drive",
    "nounconnected_drive",
})

# Where a comment, a string or an escaped identifier (which may hold comment openers) can begin.
_OPENER = re.compile(r'//|/\*|"|\\')
_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')
_ESCAPED_IDENTIFIER = re.compile(r"\\\S*")
_SYSTEM_NAME = re.compile(r"(?<![A-Za-z0-9_$])\$[A-Za-z0-9_$]*")
_DIRECTIVE = re.compile(r"`\s*([A-Za-z_][A-Za-z0-9_$]*)")
_VERDICT_LINE = re.compile(r"^Mismatches: (\d+) in (\d+) samples$")
_MEMORY_HINT = re.compile(r"out of memory|bad_alloc|cannot allocate|memory exhausted", re.IGNORECASE)
# What the shell prints when a command dies of a signal.
_SIGNAL_MESSAGE = re.compile(r"^(?:Segmentation fault|Aborted|Killed|Bus error|Illegal instruction|Floating point "
                             r"exception|CPU time limit exceeded|File size limit exceeded)", re.MULTILINE)

_PREPROCESSED_LIMIT = 1 << 20  # characters of the preprocessed design: more is a macro bomb
_MAX_HINTS = 20


class JudgeConfig(BaseModel):
    """Limits and options of the judge; every field that can change a verdict enters the verifier's version.

    ``timeout_s`` bounds one sandbox launch (wall clock); ``cpu_s``, ``memory_mib`` (address space),
    ``file_size_mib`` and ``open_files`` are rlimits of every process in it; ``output_kib`` caps
    stdout+stderr (the job is killed beyond it). ``partial_credit`` adds ``components["graded"] =
    1 - N/M`` to verdicts of complete runs (1.0 on a pass); the default reward shaper weighs graded
    credit below every pass tier, so a failing design never outscores a passing one.
    ``allow_unsandboxed`` lets the judge run designs *without* bubblewrap when it cannot start
    (logged loudly); ``bwrap=None`` never uses it (requires ``allow_unsandboxed``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: float = Field(30.0, gt=0, le=3600, description="wall-clock limit of one sandbox launch")
    cpu_s: int = Field(20, ge=1, le=3600, description="CPU seconds per process")
    memory_mib: int = Field(2048, ge=64, description="address space per process")
    file_size_mib: int = Field(16, ge=1, description="largest file a process may write")
    open_files: int = Field(64, ge=16, description="open files per process")
    output_kib: int = Field(64, ge=4, description="stdout+stderr kept per launch; more kills the job")
    max_design_chars: int = Field(100_000, ge=1, description="longest design accepted")
    max_log_chars: int = Field(4000, ge=200, description="longest log excerpt kept in a verdict's evidence")
    partial_credit: bool = Field(False, description="add components['graded'] = 1 - mismatches/samples")
    allow_unsandboxed: bool = Field(False, description="run without bubblewrap when it cannot start (unsafe)")
    bwrap: str | None = Field("bwrap", description="bubblewrap program; None: no sandbox (unsafe)")
    iverilog: str = "iverilog"
    vvp: str = "vvp"

    @model_validator(mode="after")
    def _explicit_opt_out(self) -> JudgeConfig:
        if self.bwrap is None and not self.allow_unsandboxed:
            raise ValueError("bwrap=None runs model-written code without a sandbox; set allow_unsandboxed=True too")
        return self

    def sandbox(self) -> Sandbox:
        """The sandbox these limits describe."""
        limits = SandboxLimits(
            wall_s=self.timeout_s, cpu_s=self.cpu_s, memory_bytes=self.memory_mib << 20,
            file_size_bytes=self.file_size_mib << 20, open_files=self.open_files, output_bytes=self.output_kib << 10,
        )
        return Sandbox(bwrap=self.bwrap, limits=limits, allow_unsandboxed=self.allow_unsandboxed)

    def toolchain(self) -> Toolchain:
        return detect_toolchain(self.iverilog, self.vvp, self.bwrap)

    def fingerprint(self) -> str:
        """A short hash of the fields that can change a verdict (not the sandbox choice or tool paths)."""
        fields = self.model_dump(exclude={"allow_unsandboxed", "bwrap", "iverilog", "vvp"})
        return hashlib.sha256(repr(sorted(fields.items())).encode()).hexdigest()[:12]


class ReferenceRunError(RuntimeError):
    """The reference-vs-reference run of a problem failed: the problem (or the toolchain) is broken.

    ``transient`` when trying again may succeed (the sandbox failed to start, the machine was too
    slow for the wall-clock limit); otherwise the failure is remembered for the process's life.
    """

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient


def forbidden_constructs(preprocessed: str) -> list[str]:
    """The ``$`` names and compiler directives in preprocessed Verilog that a design may not use, sorted.

    Comments are skipped; strings and escaped identifiers are scanned too (harmless there, but never
    a way to hide code from this scan).
    """
    code = _without_comments(preprocessed)
    found = {name for name in _SYSTEM_NAME.findall(code) if name != "$" and name not in ALLOWED_SYSTEM_FUNCTIONS}
    found |= {f"`{name}" for name in _DIRECTIVE.findall(code) if name not in ALLOWED_DIRECTIVES}
    return sorted(found)


def _without_comments(text: str) -> str:
    """``text`` with its comments blanked, in linear time (a design controls the text, so no backtracking).

    Scanned left to right as the compiler's lexer does: a string or an escaped identifier is kept
    whole, so a ``//`` or ``/*`` inside one opens nothing. An unterminated block comment or string is
    scanned as code: the compiler rejects the design anyway, and nothing gets hidden.
    """
    parts: list[str] = []
    position = 0
    last_close = text.rfind("*/")
    while (opener := _OPENER.search(text, position)) is not None:
        start, token = opener.start(), opener.group()
        if token == "//":
            end = text.find("\n", start)
            parts += [text[position:start], " "]
            position = len(text) if end < 0 else end
        elif token == "/*":
            end = text.find("*/", start + 2) if last_close >= start + 2 else -1
            if end < 0:
                parts.append(text[position : start + 2])
                position = start + 2
            else:
                parts += [text[position:start], " "]
                position = end + 2
        else:
            whole = (_STRING if token == '"' else _ESCAPED_IDENTIFIER).match(text, start)
            end = whole.end() if whole is not None else start + 1
            parts.append(text[position:end])
            position = end
    parts.append(text[position:])
    return "".join(parts)


def reference_samples(problem: Problem, *, config: JudgeConfig | None = None) -> int:
    """The sample count ``M`` of the problem's testbench with the reference as the design (sandboxed).

    Memoised per process by problem content, tool versions and limits, failures included (a broken
    problem costs one run, not one per design), unless transient. Raises :class:`ReferenceRunError`
    when the reference does not compile or pass its own testbench, and the toolchain and sandbox
    errors of :func:`judge`.
    """
    config = config or JudgeConfig()
    toolchain = config.toolchain()
    key = (problem.content_hash, toolchain.iverilog_version, toolchain.vvp_version, config.fingerprint())
    with _SAMPLES_LOCK:
        known = _SAMPLES.get(key)
    if known is None:
        try:
            known = _run_reference(problem, config, toolchain)
        except ReferenceRunError as exc:
            if exc.transient:
                raise
            known = str(exc)
        with _SAMPLES_LOCK:
            _SAMPLES[key] = known
    if isinstance(known, str):
        raise ReferenceRunError(known)
    return known


# Sample counts (or why there is none) by problem hash, tool versions and limits.
_SAMPLES: dict[tuple[Any, ...], int | str] = {}
_SAMPLES_LOCK = threading.Lock()


def judge(problem: Problem, design: str, *, config: JudgeConfig | None = None,
          expected_samples: int | None = None) -> Verdict:
    """Judge ``design`` (Verilog source defining ``TopModule``) against ``problem``'s testbench.

    Returns ``CERTIFIED`` (a pass, ``decision=None``), ``REFUTED`` with ``reason`` in
    :data:`REFUTATION_REASONS`, or ``INVALID`` when the tooling failed (no simulator, no sandbox, the
    reference-vs-reference run failed). ``expected_samples`` skips the reference run when known
    (:func:`reference_samples`). Never raises for anything in ``design``.
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

    timings: dict[str, float] = {}
    if expected_samples is None:
        before = time.perf_counter()
        try:
            expected_samples = reference_samples(problem, config=config)
        except ReferenceRunError as exc:
            return _invalid(ErrorKind.OUTAGE if exc.transient else ErrorKind.CRASH, str(exc), start)
        timings["reference_s"] = time.perf_counter() - before

    run = _DesignRun(problem, toolchain)
    result = sandbox.run(run.script(), {"design.sv": design}, on_checkpoint=run.checkpoint)
    timings.update(sandbox_s=result.duration_s, check_s=run.check_s)
    return _decide(run, result, expected_samples, config, base, timings, start)


@dataclass
class _DesignRun:
    """The script of one design's judge launch, and what its checkpoint found."""

    problem: Problem
    toolchain: Toolchain
    nonce: str = field(default_factory=lambda: secrets.token_hex(12))
    ref_name: str = field(default_factory=lambda: f"Ref_{secrets.token_hex(8)}")
    forbidden: list[str] = field(default_factory=list)
    oversized: int | None = None
    unreadable: str | None = None  # why the preprocessed design could not be read (our failure)
    check_s: float = 0.0

    def script(self) -> str:
        iverilog, vvp = shlex.quote(self.toolchain.iverilog), shlex.quote(self.toolchain.vvp)  # type: ignore[arg-type]
        flags = " ".join(_FLAGS)
        return "\n".join([
            _phase(self.nonce, "preprocess", f"{iverilog} -E -o design_pp.sv design.sv"),
            "checkpoint || exit 0",
            _phase(self.nonce, "elaborate", f"{iverilog} {flags} -tnull -s TopModule design_pp.sv"),
            _phase(self.nonce, "compile", f"{iverilog} {flags} -s tb -o sim.vvp tb.sv ref.sv design_pp.sv"),
            _phase(self.nonce, "simulate", f"{vvp} -n sim.vvp -none </dev/null", last=True),
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
            (job / "tb.sv").write_text(_rename_ref(self.problem.testbench, self.ref_name), encoding="utf-8")
            (job / "ref.sv").write_text(_rename_ref(self.problem.reference, self.ref_name), encoding="utf-8")
            return True
        except OSError as exc:
            self.unreadable = f"{type(exc).__name__}: {exc}"
            return False
        finally:
            self.check_s = time.perf_counter() - start


def _run_reference(problem: Problem, config: JudgeConfig, toolchain: Toolchain) -> int:
    toolchain.require_simulator()
    nonce, ref_name = secrets.token_hex(12), f"Ref_{secrets.token_hex(8)}"
    iverilog, vvp = shlex.quote(toolchain.iverilog), shlex.quote(toolchain.vvp)  # type: ignore[arg-type]
    script = "\n".join([
        _phase(nonce, "compile", f"{iverilog} {' '.join(_FLAGS)} -s tb -o sim.vvp tb.sv ref.sv top.sv"),
        _phase(nonce, "simulate", f"{vvp} -n sim.vvp -none </dev/null", last=True),
    ])
    files = {
        "tb.sv": _rename_ref(problem.testbench, ref_name),
        "ref.sv": _rename_ref(problem.reference, ref_name),
        "top.sv": _rename_ref(problem.reference, "TopModule"),
    }
    result = config.sandbox().run(script, files)
    phases = _split_phases(result.output, nonce)
    what = f"reference run of problem {problem.id!r}"
    if result.timed_out:
        raise ReferenceRunError(f"{what} exceeded the wall-clock limit of {config.timeout_s:g} s", transient=True)
    if result.killed_by_limit:
        raise ReferenceRunError(f"{what} hit the {result.killed_by_limit} limit")
    if phases.last is None:
        raise ReferenceRunError(f"the sandbox failed to start the {what}: {_tail(result.output, 600)}", transient=True)
    for name in ("compile", "simulate"):
        status = phases.statuses.get(name)
        if status != 0:
            log = _tail(phases.logs.get(name, result.output), 600)
            raise ReferenceRunError(f"{what} failed at {name} (status {status}): {log}")
    lines = [m for line in phases.logs["simulate"].splitlines() if (m := _VERDICT_LINE.match(line.strip()))]
    if len(lines) != 1 or int(lines[0].group(1)) != 0:
        raise ReferenceRunError(f"{what} did not pass its own testbench: {_tail(phases.logs['simulate'], 600)}")
    return int(lines[0].group(2))


@dataclass
class _Phases:
    statuses: dict[str, int]  # phase -> exit status, for the phases that finished
    logs: dict[str, str]  # phase -> its output; the phase that was running when the job ended included
    last: str | None  # the last phase that finished


def _split_phases(output: str, nonce: str) -> _Phases:
    statuses: dict[str, int] = {}
    logs: dict[str, str] = {}
    pending: list[str] = []
    last = None
    for line in output.splitlines():
        parts = line.split(" ")
        if len(parts) == 3 and parts[0] == nonce and parts[2].isdigit():
            last = parts[1]
            statuses[last], logs[last] = int(parts[2]), "\n".join(pending)
            pending = []
        else:
            pending.append(line)
    if pending:
        logs["running"] = "\n".join(pending)
    return _Phases(statuses, logs, last)


def _decide(run: _DesignRun, result: SandboxResult, expected: int, config: JudgeConfig, base: dict[str, Any],
            timings: dict[str, float], start: float) -> Verdict:
    phases = _split_phases(result.output, run.nonce)
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
    if samples != expected:
        return refuted("sample_count_mismatch", f"{samples} samples, the reference run has {expected}", **counts)
    graded = {"graded": 1.0 - mismatches / samples if samples else 0.0} if config.partial_credit else {}
    if mismatches:
        return _refuted("mismatches", f"{mismatches} mismatches in {samples} samples",
                        {**evidence, **counts}, start, timings, graded)
    return Verdict(Outcome.CERTIFIED, evidence={**evidence, "reason": "pass", "detail": "no mismatches", **counts},
                   components=graded, timings=_timings(start, timings), reason="pass")


def _failed_phase(name: str, phases: _Phases, logs: dict[str, str], refuted: Any, start: float,
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
    report = f'r=$?; echo "{nonce} {name} $r"'
    return f"{command}\n{report}" if last else f"{command}\n{report}; [ $r -eq 0 ] || exit 0"


def _next_phase(last: str | None) -> str:
    order = ["preprocess", "elaborate", "compile", "simulate"]
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
