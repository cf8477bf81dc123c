"""The Verilog design environment: write files, compile, simulate against a hidden testbench, submit.

Every check runs the hardened, sandboxed :func:`~proofgym.verilog.judge` on the workspace's current
design (``compile`` only its steps up to compiling with the testbench: nothing is simulated), as a
:class:`~proofgym.verilog.VerilogVerifier` claim through a :class:`~proofgym.runtime.VerificationRuntime`
shared by the environments of one problem set and judge config: its verdict cache (a design judged once is
answered from it in every later episode), circuit breaker and metrics, with
:func:`~proofgym.verilog.recommended_runtime_config`'s limits and the in-process executor (each judge run is
already its own sandboxed process; the environment's step runs on a worker thread); the agent
sees the spec, the port interface and what each check reports about its own design, never the reference
or the testbench.

Rewards. Three positive components, each **paid at most once per episode**, at the first step whose
judge run demonstrates it:

- ``compile``: a judge run got the design through compilation with the testbench (from
  ``compile``, ``simulate`` or ``submit``);
- ``simulate``: a judge run passed (from ``simulate`` or ``submit``);
- ``submit``: ``submit`` passed.

Their weights are normalised to sum to 1 (each is divided by the sum of the three), so an episode's
return is at most 1.0, reached exactly (up to float rounding) by every episode whose submit passes,
less ``step_penalty`` per turn. Re-running a check, on the same design or another, never pays a
component twice, so compile and simulate credit cannot be farmed; and since a passing submit pays
whatever the episode has not been paid yet, the return of a solved episode does not depend on which
checks it ran. ``submit`` always judges the files as they are then (a full judge run, or the runtime's cached
verdict of the same files).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import os
import re
import shutil
import tempfile
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from pydantic import BaseModel, ConfigDict, Field, model_validator

from proofgym.core import Verdict, model_text
from proofgym.envs import Observation, TaskPartition, Tool, ToolCall, ToolEnv, ToolResult
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.judges import RubricSet
from proofgym.verilog._difficulty import Difficulty, problem_difficulty, problem_splits
from proofgym.verilog._judge import judge
from proofgym.verilog._judge_config import JudgeConfig
from proofgym.verilog._rubrics import VERILOG_RUBRICS
from proofgym.verilog._problem import Problem
from proofgym.verilog._problem_loader import builtin_problems, interface, load_verilogeval
from proofgym.verilog._sandbox import SandboxUnavailable
from proofgym.verilog._toolchain import ToolchainError
from proofgym.verilog._verifier import VerilogVerifier, recommended_runtime_config, source_claim

_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
_SUFFIXES = (".v", ".sv")
_COMPONENTS = ("compile", "simulate", "submit")
# Where judge logs point: the design (design.sv, lines of the concatenated files) or the hidden files.
_LOG_LOCATION = re.compile(r"\b(design|tb|ref)\.sv:(\d+)")
_REFERENCE_NAME = re.compile(r"\bRef_[0-9a-f]{16}\b")  # the judge's per-run name of the reference module
_MAX_LOG_LINES = 30


class VerilogRewards(BaseModel):
    """Relative weights of the reward components; divided by their sum, so only the ratios matter."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    compile: float = Field(0.05, ge=0, description="the design compiled with the testbench")
    simulate: float = Field(0.15, ge=0, description="a simulation of the design passed")
    submit: float = Field(0.8, gt=0, description="the submitted design passed")

    def shares(self) -> dict[str, float]:
        """Each component's reward: its weight over the sum of the weights (they sum to 1)."""
        total = self.compile + self.simulate + self.submit
        return {name: getattr(self, name) / total for name in _COMPONENTS}


class VerilogEnvConfig(BaseModel):
    """Configuration of :class:`VerilogEnv`.

    ``problem_set``: ``builtin`` (the problems shipped with proofgym) or a VerilogEval spec-to-rtl folder on
    this machine (such as VerilogEval v2's ``dataset_spec-to-rtl``; read once per version of the folder).
    ``problem_id`` pins every episode to one problem (otherwise seed ``s`` gets problem
    ``s % n`` of the problems sorted by id). ``difficulty`` (``easy``, ``medium`` or ``hard``, measured from
    each reference: :func:`~proofgym.verilog.problem_difficulty`) keeps only the problems of that difficulty:
    seed ``s`` then gets problem ``s % n`` of those. ``split`` and ``index`` (train / val / test, read by
    :func:`~proofgym.envs.make` for every environment) split the problems by problem:
    :func:`~proofgym.verilog.problem_splits`. ``step_penalty`` is charged every turn, in the same
    units as the normalised rewards; validation keeps it small enough that a solved episode always
    outscores an unsolved one. ``max_file_bytes`` (UTF-8) and ``max_files`` bound the workspace;
    the judge separately bounds the whole design (``judge.max_design_chars``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    problem_set: str = Field("builtin", min_length=1)
    problem_id: str | None = None
    difficulty: Difficulty | None = None
    max_turns: int = Field(20, ge=1, le=10_000)
    rewards: VerilogRewards = Field(default_factory=VerilogRewards)
    step_penalty: float = Field(0.0, ge=0, allow_inf_nan=False)
    max_file_bytes: int = Field(64 << 10, ge=1, le=1 << 20)
    max_files: int = Field(8, ge=1, le=64)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)

    @model_validator(mode="after")
    def _solving_always_pays_more(self) -> VerilogEnvConfig:
        # A solved episode returns at least 1 - max_turns * penalty; an unsolved one at most
        # 1 - submit_share - penalty (it took at least one turn).
        submit_share = self.rewards.shares()["submit"]
        if self.step_penalty * (self.max_turns - 1) >= submit_share:
            raise ValueError(
                f"step_penalty ({self.step_penalty}) x (max_turns - 1) must stay below the submit reward "
                f"({submit_share:.4g}), or a slow solved episode could score below a quick unsolved one"
            )
        return self


@dataclass(frozen=True)
class _Design:
    """The workspace's design files, concatenated in name order, and where each file starts."""

    files: tuple[tuple[str, str], ...]

    @property
    def source(self) -> str:
        return "".join(text if text.endswith("\n") or not text else text + "\n" for _, text in self.files)

    @property
    def revision(self) -> str:
        digest = hashlib.sha256()
        for name, text in self.files:
            digest.update(name.encode() + b"\0" + text.encode() + b"\0")
        return digest.hexdigest()

    def locate(self, line: int) -> str:
        """``file:line`` of a line of the concatenated source."""
        start = 1
        for name, text in self.files:
            count = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
            if line < start + count:
                return f"{name}:{line - start + 1}"
            start += count
        return f"design:{line}"


class VerilogEnv(ToolEnv):
    """Design a Verilog module from a spec, with ``write_file``, ``compile``, ``simulate`` and ``submit``.

    One instance per rollout. ``problems`` defaults to the built-in problems. Each ``reset`` makes a
    fresh private workspace (a new temporary directory, removed by the next ``reset`` and by
    ``close``). Rewards and their anti-farming rule are in this module's docstring; ``info`` of every
    step carries ``tool``, ``revision`` (a hash of the design files), ``verdict``
    (``Verdict.to_dict()`` of the judge run, or ``None``), ``outcome``, ``reason`` (the verdict's, on
    judged steps) and ``paid`` (the components paid so far). An episode whose submit verdict is
    ``invalid`` (the judge could not run: say, ``iverilog not installed``) ends with no submit reward
    and carries no signal: a trainer should drop it, not score it as a failure.
    """

    def __init__(self, problems: Iterable[Problem] | Mapping[str, Problem] | None = None, *,
                 config: VerilogEnvConfig | None = None) -> None:
        self.config = config or VerilogEnvConfig()
        super().__init__(_tools(self.config), max_turns=self.config.max_turns, step_penalty=self.config.step_penalty)
        if problems is None:
            problems = builtin_problems() if self.config.problem_set == "builtin" else \
                _problem_folder(self.config.problem_set)
        elif self.config.problem_set != "builtin":
            raise ValueError("problem_set: give problems or a problem_set folder, not both")
        if isinstance(problems, Mapping):
            problems = problems.values()
        by_id: dict[str, Problem] = {}
        for problem in problems:
            if problem.id in by_id:
                raise ValueError(f"two problems have the id {problem.id!r}")
            by_id[problem.id] = problem
        if not by_id:
            raise ValueError("VerilogEnv needs at least one problem")
        if self.config.problem_id is not None and self.config.problem_id not in by_id:
            raise ValueError(f"problem_id {self.config.problem_id!r} is not among the {len(by_id)} problems")
        self._problems = [by_id[key] for key in sorted(by_id)]
        self._splits = problem_splits(self._problems)
        # The problems episodes draw from: the pinned one, else those of the difficulty asked for (all: None).
        self._pool = _pool(self._problems, self.config.problem_id, self.config.difficulty)
        # Which shared runtime judges this environment's designs: its judge config and problem set (fixed).
        self._runtime_key = (self.config.judge.model_dump_json(), *sorted(p.content_hash for p in self._problems))
        self._interfaces = {problem.id: interface(problem) for problem in self._problems}
        self._shares = self.config.rewards.shares()
        self._problem: Problem | None = None
        self._workspace: str | None = None
        self._cleanup: weakref.finalize[..., Any] | None = None
        # The design files as written to the workspace (this environment is their only writer): the
        # design is read from here, not scanned and read back from disk on every step.
        self._files: dict[str, str] = {}
        self._paid: set[str] = set()
        self._last_check: tuple[str, Verdict] | None = None  # the last full judge run, by design revision
        self._last_compile: tuple[str, Verdict] | None = None  # the last compile-only run, by design revision

    @property
    def rubrics(self) -> RubricSet:
        """The rubrics this environment declares (:data:`~proofgym.verilog._rubrics.VERILOG_RUBRICS`: compilation
        success and process efficiency per decision, tests passed and design quality for the outcome), which a
        task app's judges score when they are on."""
        return VERILOG_RUBRICS

    @property
    def problem(self) -> Problem:
        """The current episode's problem (for tests and tooling; never shown to the agent)."""
        if self._problem is None:
            raise RuntimeError("no episode yet: call reset() first")
        return self._problem

    @property
    def problems(self) -> list[Problem]:
        """The problems this environment's episodes draw from, in the order seeds pick them (``s % n``)."""
        return list(self._pool)

    @property
    def seed_partition(self) -> TaskPartition:
        """Train / val / test by problem (:func:`~proofgym.verilog.problem_splits`, over all of this environment's
        problems, so a problem's split does not change with ``difficulty``)."""
        return TaskPartition(tuple(self._splits[problem.id] for problem in self._pool))

    @property
    def workspace(self) -> str | None:
        """The current episode's private directory of design files (``None`` before ``reset`` and after ``close``)."""
        return self._workspace

    def oracle_actions(self, seed: int) -> list[Any]:
        """The known-good answer to episode ``seed``: write the problem's reference design, renamed to
        ``TopModule``, then submit (resets the episode)."""
        self.reset(seed)
        design = re.sub(r"\bRefModule\b", "TopModule", self.problem.reference)
        return [{"tool": "write_file", "args": {"path": "top.v", "content": design}}, {"tool": "submit", "args": {}}]

    def _reset(self, seed: int) -> Observation:
        self._problem = self._pool[seed % len(self._pool)]
        self._remove_workspace()
        self._workspace = tempfile.mkdtemp(prefix="proofgym-verilog-env-")
        # Removed even if the caller never closes the environment.
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._workspace, ignore_errors=True)
        self._files = {}
        self._paid = set()
        self._last_check = self._last_compile = None
        return self._first_observation()

    def _close(self) -> None:
        self._remove_workspace()

    def _remove_workspace(self) -> None:
        if self._cleanup is not None:
            self._cleanup()
        self._workspace = self._cleanup = None

    def _first_observation(self) -> Observation:
        problem, config = self.problem, self.config
        ports = self._interfaces[problem.id]
        instructions = (
            "Design the Verilog module described below. It must be named TopModule and have exactly the "
            "ports of the interface given.\n\n"
            "Tools (call one per turn):\n"
            f"- write_file(path, content): write a .v or .sv file in your workspace; a plain file name such as "
            f"'top.v', at most {config.max_files} files of {config.max_file_bytes} bytes each. All files "
            "together, in name order, are your design.\n"
            "- compile(): check that the design compiles against the testbench's ports.\n"
            "- simulate(): run the hidden testbench on the design and report mismatches with the expected outputs.\n"
            "- submit(): judge the current design and end the episode.\n"
            'Example call: {"tool": "write_file", "args": {"path": "top.v", "content": "module TopModule(...); '
            '... endmodule"}}\n'
            "The design may not use file I/O, $display or other output, $finish/$stop, or `include.\n"
            f"You have {config.max_turns} turns."
        )
        text = f"{instructions}\n\n## Specification\n{problem.spec.strip()}\n\n## Interface\n{ports}\n"
        data = {"problem_id": problem.id, "difficulty": problem_difficulty(problem), "spec": problem.spec,
                "interface": ports, "instructions": instructions,
                "tools": list(self._tools), "max_turns": config.max_turns}
        return Observation(text, data)

    def _call_tool(self, call: ToolCall) -> ToolResult:
        if call.name == "write_file":
            return self._write_file(call.args["path"], call.args["content"])
        design = self._design()
        if call.name == "submit":
            verdict = self._judge(design.source)
        elif call.name == "compile":
            verdict = self._compile(design)
        else:
            verdict = self._check(design)
        compiled = _compiled(verdict)
        demonstrated = {"compile"} if compiled else set()
        # compile reports (and pays for) only the compile step, even when a full judge run of the same
        # revision answers it: a larger reward would tell the agent what its report does not.
        if verdict.certified and call.name != "compile":
            demonstrated |= {"simulate", "submit"} if call.name == "submit" else {"simulate"}
        rewards = {name: self._shares[name] for name in _COMPONENTS if name in demonstrated - self._paid}
        self._paid |= demonstrated
        report = _report(call.name, verdict, compiled, design)
        info = {"tool": call.name, "revision": design.revision, "verdict": verdict.to_dict(),
                "outcome": verdict.outcome.value, "reason": verdict.reason, "paid": sorted(self._paid)}
        return ToolResult(report, rewards, done=call.name == "submit", info=info)

    def _check(self, design: _Design) -> Verdict:
        """The full judge's verdict on ``design`` for simulate, run once per revision.

        A compile-only run of the same revision that found the design does not compile answers too:
        the full run would stop at the same step. Invalid verdicts are not kept: the next check retries.
        """
        revision = design.revision
        for last in (self._last_check, self._last_compile):
            if last is not None and last[0] == revision and (last is self._last_check or not _compiled(last[1])):
                return last[1]
        verdict = self._judge(design.source)
        self._last_check = None if verdict.invalid else (revision, verdict)
        return verdict

    def _compile(self, design: _Design) -> Verdict:
        """Whether ``design`` compiles with the testbench: a compile-only judge run (nothing simulated),
        once per revision, or the full run of the same revision when simulate already ran one."""
        revision = design.revision
        for last in (self._last_check, self._last_compile):
            if last is not None and last[0] == revision:
                return last[1]
        verdict = self._judge(design.source, compile_only=True)
        self._last_compile = None if verdict.invalid else (revision, verdict)
        return verdict

    def _judge(self, source: str, *, compile_only: bool = False) -> Verdict:
        """The judge's verdict on ``source`` through the shared runtime; without a toolchain or sandbox (the
        verifier cannot be built), the judge's own ``INVALID`` verdict saying what is missing."""
        runtime = _shared_runtime(self._problems, self.config.judge, self._runtime_key)
        if runtime is None:
            return judge(self.problem, source, config=self.config.judge, compile_only=compile_only)
        return runtime.verify_many_sync([source_claim(self.problem, source, compile_only=compile_only)])[0]

    def _write_file(self, path: str, content: str) -> ToolResult:
        refusal = _path_refusal(path)  # a plain ASCII name: a surrogate or NUL in it is refused there
        content = model_text(content)  # the one rule for model text: what is judged, hashed and shown
        if refusal is None:
            size = len(content.encode("utf-8"))
            if size > self.config.max_file_bytes:
                refusal = f"the content has {size} bytes, more than the limit of {self.config.max_file_bytes}"
        names = self._file_names()
        if refusal is None and path not in names and len(names) >= self.config.max_files:
            refusal = f"the workspace already holds the maximum of {self.config.max_files} files; overwrite one"
        if refusal is None:
            target = os.path.join(self._workspace_dir, path)
            try:
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            except OSError as exc:  # nothing was opened, so nothing changed
                refusal = f"could not write the file ({exc.strerror or 'I/O error'})"
            else:
                try:
                    with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                        handle.write(content)
                except OSError as exc:  # a partial file is no design file: drop it
                    refusal = f"could not write the file ({exc.strerror or 'I/O error'})"
                    self._files.pop(path, None)
                    with contextlib.suppress(OSError):
                        os.unlink(target)
                else:
                    self._files[path] = content
        design = self._design()
        info = {"tool": "write_file", "revision": design.revision, "verdict": None, "outcome": None,
                "paid": sorted(self._paid)}
        files = [name for name, _ in design.files]
        if refusal is not None:
            message = f"write_file {path!r} refused: {refusal}"  # the schema caps the path at 64 characters
            return ToolResult(Observation(f"Error: {message}", {"tool": "write_file", "error": message,
                                                                "files": files}), info={**info, "error": message})
        text = f"Wrote {path} ({size} bytes). Design files: {', '.join(files)}."
        return ToolResult(Observation(text, {"tool": "write_file", "path": path, "bytes": size, "files": files}),
                          info=info)

    @property
    def _workspace_dir(self) -> str:
        assert self._workspace is not None  # steps only run between reset and close
        return self._workspace

    def _file_names(self) -> list[str]:
        return sorted(self._files)

    def _design(self) -> _Design:
        return _Design(tuple((name, self._files[name]) for name in sorted(self._files)))


def _problem_folder(folder: str) -> tuple[Problem, ...]:
    """The problems of a VerilogEval folder, read once per version of it; ``ValueError`` naming ``problem_set``."""
    path = Path(folder).expanduser().resolve()
    try:
        version = path.stat().st_mtime_ns
    except OSError:
        raise ValueError(f"problem_set: {folder!r} is neither 'builtin' nor an existing folder") from None
    return _read_problem_folder(str(path), version)


@functools.lru_cache(maxsize=8)
def _read_problem_folder(folder: str, version: int) -> tuple[Problem, ...]:
    try:
        return tuple(load_verilogeval(folder))
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"problem_set: {exc}") from None


def _pool(problems: list[Problem], problem_id: str | None, difficulty: str | None) -> list[Problem]:
    """The problems an environment's seeds pick from; ``ValueError`` naming the key when none is left."""
    pool = [p for p in problems if problem_id in (None, p.id) and difficulty in (None, problem_difficulty(p))]
    if pool:
        return pool
    if problem_id is not None:
        found = problem_difficulty(next(p for p in problems if p.id == problem_id))
        raise ValueError(f"difficulty: problem_id {problem_id!r} is {found}, not {difficulty}")
    raise ValueError(f"difficulty: none of the {len(problems)} problems is {difficulty}")


_RUNTIMES: dict[tuple[str, ...], VerificationRuntime] = {}
_RUNTIMES_LOCK = threading.Lock()


def _shared_runtime(problems: list[Problem], config: JudgeConfig, key: tuple[str, ...]) -> VerificationRuntime | None:
    """The runtime of this problem set and judge config (``key`` names both) and of the toolchain (the tools found
    on PATH now), built on first use and kept for the process's life (closed at exit); ``None`` while the verifier
    cannot be built (no toolchain, no sandbox): nothing is kept then, so a toolchain installed later is found."""
    key = (*key, repr(config.toolchain()))
    with _RUNTIMES_LOCK:
        runtime = _RUNTIMES.get(key)
        if runtime is None:
            try:
                verifier = VerilogVerifier({problem.id: problem for problem in problems}, config=config)
            except (ToolchainError, SandboxUnavailable):
                return None
            settings = recommended_runtime_config(config).model_dump(exclude={"executor", "workers"})
            runtime = _RUNTIMES[key] = VerificationRuntime(verifier, RuntimeConfig(**settings))
        return runtime


@atexit.register
def _close_runtimes() -> None:
    with _RUNTIMES_LOCK:
        runtimes = list(_RUNTIMES.values())
        _RUNTIMES.clear()
    for runtime in runtimes:
        runtime.close()


def _path_refusal(path: str) -> str | None:
    """Why ``path`` is not a design file name the workspace accepts, or ``None`` when it is."""
    if path.startswith(("/", "\\")):
        return "absolute paths are not allowed; use a plain file name such as 'top.v'"
    if "/" in path or "\\" in path or ".." in path:
        return "the path must be a plain file name in the workspace, such as 'top.v' (no directories, no '..')"
    if not path.endswith(_SUFFIXES):
        return "only .v and .sv files can be written"
    if not _FILE_NAME.fullmatch(path):
        return "a file name has at most 64 characters: letters, digits, '_', '-' and '.', not starting with '.' or '-'"
    return None


def _compiled(verdict: Verdict) -> bool:
    """Whether the judge got the design through compilation with the testbench.

    ``evidence["phase"]`` is the last phase that finished; a phase that finished with an error
    leaves a ``compile_log``. So the design compiled when the simulation finished, or when the
    job stopped after a clean compile (a time or resource limit hit while simulating).
    """
    if verdict.certified:
        return True
    if verdict.invalid:
        return False
    phase = verdict.evidence.get("phase")
    return phase == "simulate" or (phase == "compile" and "compile_log" not in verdict.evidence)


def _report(tool: str, verdict: Verdict, compiled: bool, design: _Design) -> Observation:
    """What the agent learns from a judge run: for ``compile`` only the compile step, never hidden files."""
    evidence = verdict.evidence
    data: dict[str, Any] = {"tool": tool, "outcome": verdict.outcome.value}
    if verdict.invalid:
        text = "The checker could not run (an infrastructure failure, not a problem with your design)."
        if tool != "submit":
            text += " Try again."
        return Observation(text, data)
    if not compiled:
        log = _agent_log(str(evidence.get("compile_log") or ""), design)
        detail = _agent_log(str(evidence.get("detail") or verdict.reason), design)
        data.update(compiled=False, reason=verdict.reason, detail=detail, log=log)
        what = {"compile": "Compile failed", "simulate": "Simulation did not run: the design does not compile",
                "submit": "Submitted design failed: it does not compile"}[tool]
        return Observation(f"{what} ({verdict.reason}):" + (f"\n{log}" if log else f" {detail}"), data)
    if tool == "compile":
        data.update(compiled=True)
        return Observation("Compile succeeded.", data)
    data.update(compiled=True, passed=verdict.certified, reason=verdict.reason)
    counts = ""
    if "mismatches" in evidence and "samples" in evidence:
        data.update(mismatches=evidence["mismatches"], samples=evidence["samples"])
        counts = f"{evidence['mismatches']} mismatches in {evidence['samples']} samples"
    hints = [str(hint) for hint in evidence.get("hints") or ()]
    data["hints"] = hints
    if verdict.certified:
        text = f"{'Submitted design passed' if tool == 'submit' else 'Simulation passed'}: {counts}."
    else:
        what = "Submitted design failed" if tool == "submit" else "Simulation failed"
        summary = counts if verdict.reason == "mismatches" else _agent_log(str(evidence.get("detail", "")), design)
        text = f"{what} ({verdict.reason}): {summary or verdict.reason}."
        if hints:
            text += "\n" + "\n".join(hints)
    return Observation(text, data)


def _agent_log(log: str, design: _Design) -> str:
    """A judge log as the agent may see it: design lines as ``file:line``, the hidden files unnamed."""

    def place(match: re.Match[str]) -> str:
        kind, line = match.group(1), int(match.group(2))
        return design.locate(line) if kind == "design" else "testbench" if kind == "tb" else "reference"

    lines = log.splitlines()[:_MAX_LOG_LINES]
    return _REFERENCE_NAME.sub("RefModule", _LOG_LOCATION.sub(place, "\n".join(lines))).strip()


def _tools(config: VerilogEnvConfig) -> list[Tool]:
    no_arguments = {"type": "object", "properties": {}, "additionalProperties": False}
    return [
        Tool(
            "write_file",
            "Write (or overwrite) a Verilog file in your workspace. All .v/.sv files, in name order, form the design.",
            {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "maxLength": 64,
                             "description": "a plain file name ending in .v or .sv, e.g. 'top.v'"},
                    "content": {"type": "string", "maxLength": config.max_file_bytes,
                                "description": "the file's full text"},
                },
                "required": ["path", "content"],
                "additionalProperties": False,
            },
        ),
        Tool("compile", "Compile the current design against the testbench's ports; reports errors.", no_arguments),
        Tool("simulate", "Simulate the current design with the hidden testbench; reports mismatches.", no_arguments),
        Tool("submit", "Judge the current design and end the episode.", no_arguments),
    ]


def make_verilog_env(*, problems: Iterable[Problem] | Mapping[str, Problem] | None = None,
                     **config: Any) -> VerilogEnv:
    """``make("verilog", **config)``: the config's fields as keyword arguments, plus ``problems``; validated
    strictly (``max_turns=True`` is not a number), the ``rewards`` and ``judge`` sections too."""
    return VerilogEnv(problems, config=VerilogEnvConfig.model_validate(config, strict=True))
