"""The Verilog judge as a :class:`~proofgym.verifiers.Verifier`, and the ``verilog`` verifier kind."""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterable, Mapping, Sequence

from pydantic import Field

from proofgym.core import Claim, ErrorKind, Verdict, invalid
from proofgym.runtime import RuntimeConfig
from proofgym.verifiers import VerifierExample, VerifierKind
from proofgym.verilog._judge import VERIFIER_NAME, ReferenceRunError, judge, reference_samples
from proofgym.verilog._judge_config import JUDGE_VERSION, JudgeConfig
from proofgym.verilog._problem import Problem
from proofgym.verilog._problem_loader import builtin_problems, load_verilogeval


def canonical_design(design: str) -> str:
    """``design`` with ``\\n`` line endings, no trailing whitespace and no leading or trailing blank lines.

    Only changes the compiler ignores (comments stay: they are part of what a model wrote). The judge
    always judges this form, so designs that differ only in such whitespace share one verification.
    """
    lines = design.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n") + "\n"


def design_claim(problem: Problem, design: str) -> Claim:
    """The claim that ``design`` solves ``problem``: what :class:`VerilogVerifier` checks.

    The payload carries the problem's ``content_hash``, so a cached verdict is never reused after the
    problem's testbench or reference changes.
    """
    return Claim(payload={"problem": problem.id, "problem_hash": problem.content_hash,
                          "design": canonical_design(design)})


def source_claim(problem: Problem, source: str, *, compile_only: bool = False) -> Claim:
    """The claim that ``source``, exactly as written (not canonicalised: the judge's log lines then point into it),
    solves ``problem``; with ``compile_only``, only that it compiles with the testbench (nothing is simulated, and
    ``CERTIFIED`` then means it compiled: see :func:`~proofgym.verilog.judge`)."""
    payload: dict[str, Any] = {"problem": problem.id, "problem_hash": problem.content_hash, "design": source}
    if compile_only:
        payload["compile_only"] = True
    return Claim(payload=payload)


class VerilogVerifier:
    """Judges ``Claim(payload={"problem": id, "problem_hash": ..., "design": source})`` (see :func:`design_claim`;
    with ``"compile_only": true`` in the payload, only whether it compiles: :func:`source_claim`).

    ``problems`` maps ids to problems (default: the built-in ones). Construction fails fast, with what to
    install, when Icarus Verilog is missing or bubblewrap cannot start (unless ``config`` allows running
    unsandboxed). ``version`` carries the judge version, the tool versions and the limits.

    The work is CPU-bound (compiler and simulator processes); use it with the runtime's process executor,
    one worker per core and one claim per call (:func:`recommended_runtime_config`). Picklable: reference
    sample counts found by :meth:`prepare` travel to the workers with it.
    """

    name = VERIFIER_NAME
    uses_decision = False

    def __init__(self, problems: Mapping[str, Problem] | None = None, *, config: JudgeConfig | None = None) -> None:
        self.problems = dict(builtin_problems() if problems is None else problems)
        self.config = config or JudgeConfig()
        toolchain = self.config.toolchain()
        toolchain.require_simulator()
        # Raises SandboxUnavailable now rather than turning every claim INVALID later.
        self.sandboxed = self.config.sandbox().sandboxed
        self.version = (f"judge{JUDGE_VERSION};iverilog {toolchain.iverilog_version};vvp {toolchain.vvp_version};"
                        f"limits {self.config.fingerprint()}")
        self._expected: dict[str, int] = {}  # problem content hash -> reference sample count

    def prepare(self, problem_ids: Iterable[str] | None = None, *, max_workers: int | None = None) -> dict[str, str]:
        """Run the reference-vs-reference runs now, in parallel, for ``problem_ids`` (default: all).

        Call it before handing the verifier to a process pool: every worker then starts with the
        sample counts. Without it, a worker finds a problem's count on disk (an earlier process's,
        ``JudgeConfig.reference_cache_dir``) or, the first time it meets the problem, in the judge's
        own launch. Returns ``{id: error}`` for the problems whose reference run failed (their claims
        will be ``INVALID``).
        """
        ids = list(self.problems if problem_ids is None else problem_ids)

        def run(problem_id: str) -> tuple[str, int | str]:
            try:
                return problem_id, reference_samples(self.problems[problem_id], config=self.config)
            except ReferenceRunError as exc:
                return problem_id, str(exc)

        with ThreadPoolExecutor(max_workers or os.cpu_count() or 1) as pool:
            results = list(pool.map(run, ids))
        for problem_id, samples in results:
            if isinstance(samples, int):
                self._expected[self.problems[problem_id].content_hash] = samples
        return {problem_id: error for problem_id, error in results if isinstance(error, str)}

    async def verify_many(self, claims: Sequence[Claim]) -> list[Verdict]:
        # A thread per claim keeps the event loop free (the judge mostly waits on its subprocesses).
        return [await asyncio.to_thread(self.verify, claim) for claim in claims]

    def verify(self, claim: Claim) -> Verdict:
        """Judge one claim (blocking)."""
        payload: Mapping[str, Any] = claim.payload
        problem = self.problems.get(payload.get("problem"))  # type: ignore[arg-type]
        design = payload.get("design")
        if problem is None:
            return invalid(ErrorKind.CRASH, f"unknown Verilog problem {payload.get('problem')!r}")
        if payload.get("problem_hash") != problem.content_hash:
            return invalid(ErrorKind.CRASH, f"the claim was made for another version of problem {problem.id!r} "
                                            "(problem_hash differs); build claims with design_claim()")
        if not isinstance(design, str):
            return invalid(ErrorKind.CRASH, f"claim payload 'design' must be a string, got {type(design).__name__}")
        compile_only = payload.get("compile_only", False)
        if not isinstance(compile_only, bool):
            return invalid(ErrorKind.CRASH, f"claim payload 'compile_only' must be a boolean, got {compile_only!r}")
        return judge(problem, design, config=self.config, expected_samples=self._expected.get(problem.content_hash),
                     compile_only=compile_only)


def recommended_runtime_config(config: JudgeConfig | None = None, *, workers: int | None = None,
                               **overrides: Any) -> RuntimeConfig:
    """A :class:`~proofgym.runtime.RuntimeConfig` for :class:`VerilogVerifier`.

    Process executor with one worker per core (more buys nothing: each judge keeps a core busy), one
    claim per call so a slow simulation never holds up the claims batched behind it, and a call
    timeout above the judge's own limits (a reference run plus a judge run), so the judge's
    ``timeout`` verdict, not the runtime's ``INVALID``, reports a hanging design.
    """
    config = config or JudgeConfig()
    workers = workers or os.cpu_count() or 1
    settings: dict[str, Any] = {
        "executor": "process", "workers": workers, "max_concurrency": workers, "batch_size": 1,
        "timeout_s": 2 * config.timeout_s + 10,
    }
    return RuntimeConfig(**{**settings, **overrides})


class VerilogVerifierOptions(JudgeConfig):
    """Run-config options of the ``verilog`` verifier kind: the judge's limits, and which problems."""

    problems: str = Field("builtin", min_length=1, description="'builtin', or a VerilogEval spec-to-rtl folder")


def build_verilog_verifier(options: VerilogVerifierOptions) -> VerilogVerifier:
    if options.problems == "builtin":
        problems = builtin_problems()
        if not problems:
            raise ValueError("verifier kind 'verilog': no built-in problems are installed; "
                             "set problems to a VerilogEval folder")
    else:
        problems = {problem.id: problem for problem in load_verilogeval(options.problems)}
    return VerilogVerifier(problems, config=JudgeConfig(**options.model_dump(exclude={"problems"})))


def verilog_examples() -> list[VerifierExample]:
    """Known cases: the built-in and-gate, solved by ``a & b`` and not by ``a | b``."""
    problem = builtin_problems()["Prob001_and_gate"]
    design = "module TopModule(input a, input b, output out);\n  assign out = a {} b;\nendmodule\n"
    return [VerifierExample({}, design_claim(problem, design.format("&")), design_claim(problem, design.format("|")))]


#: The ``verilog`` verifier kind, registered through the ``proofgym.verifiers`` entry point (pyproject.toml).
VERILOG_VERIFIER = VerifierKind(VerilogVerifierOptions, build_verilog_verifier, verilog_examples)
