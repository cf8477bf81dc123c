"""Math-Verify as a :class:`~proofgym.verifiers.Verifier`, and the ``math`` verifier kind.

Math-Verify's own timeouts use ``SIGALRM``, which raises off the main thread (and a broad ``except`` around it then
scores every answer 0). So they are always off here (``None``), and the wall-clock limit is the runtime's: run the
verifier on the process executor (or Ray), which kills a worker whose call runs past ``runtime.timeout_s``, and the
claim is ``INVALID`` (timeout), never wrong. See :func:`math_runtime_config`.
"""

from __future__ import annotations

import functools
import os
from importlib import metadata
from typing import Any, Mapping, Sequence, cast

from pydantic import BaseModel, ConfigDict, Field

from proofgym.core import Claim, ErrorKind, Outcome, Verdict, invalid
from proofgym.runtime import RuntimeConfig
from proofgym.verifiers import VerifierExample, VerifierKind

VERIFIER_NAME = "math"
MATH_INSTALL_HINT = "pip install 'proofgym[math]' (math-verify==0.9.0, latex2sympy2_extended==1.11.0)"
# How much of each parsed form the evidence shows.
_EVIDENCE_CHARS = 200
_GOLD_CACHE = 4096


class MathVerifierOptions(BaseModel):
    """Run-config options of the ``math`` verifier kind: Math-Verify's comparison settings (never its timeouts)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    float_rounding: int = Field(6, ge=0, le=30, description="decimal places floats are rounded to before comparing")
    numeric_precision: int = Field(15, ge=1, le=100, description="significant digits of numeric evaluation")
    strict: bool = Field(True, description="variables must match and sets are not tuples")
    allow_set_relation_comp: bool = Field(False, description="compare a set with a relation (1 < x < 2 vs (1, 2))")


def math_claim(gold: str | None, answer: str) -> Claim:
    """The claim that ``answer`` equals the gold answer ``gold``: what :class:`MathVerifier` checks (``gold``
    ``None``: no known problem, which it answers ``INVALID``)."""
    return Claim(payload={"gold": gold, "answer": answer})


def balanced(text: str) -> bool:
    """Whether every ``{`` of ``text`` closes and no ``}`` closes nothing (``\\{`` and ``\\}`` are literal)."""
    depth, index = 0, 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            return False
        index += 1
    return depth == 0


class MathVerifier:
    """Certifies ``Claim(payload={"gold": ..., "answer": ...})`` (see :func:`~proofgym.math.math_claim`) when the
    answer equals the gold answer by Math-Verify, refutes it when the answer parsed and differs, or when it does not
    parse as math (the policy's answer is then wrong, not unverifiable). ``INVALID`` when the claim has no gold
    answer or the gold answer does not parse (a set-up error), or when Math-Verify raises while comparing.

    The evidence shows both texts and both parsed forms (``gold_parsed``, ``answer_parsed``: Math-Verify's SymPy
    objects as text, then the extracted strings). Math-Verify is always called with its timeouts off; the runtime's
    executor enforces the wall clock (:func:`math_runtime_config`). Picklable, and stateless apart from a
    per-process cache of parsed gold answers (a GRPO group shares one gold).
    """

    name = VERIFIER_NAME
    uses_decision = False

    def __init__(self, options: MathVerifierOptions | None = None) -> None:
        self.options = options or MathVerifierOptions()
        _math_verify()  # fails now, with the install command, rather than turning every claim INVALID later
        settings = ",".join(f"{key}={value}" for key, value in self.options.model_dump().items())
        self.version = (f"math-verify {metadata.version('math-verify')};"
                        f"latex2sympy2_extended {metadata.version('latex2sympy2_extended')};{settings}")

    def warm_up(self) -> None:
        """Import and exercise what a check needs (Math-Verify, SymPy, the LaTeX parser: seconds on a busy machine),
        so a process executor's worker pays it at start-up, not inside a call's timeout."""
        math_verify = _math_verify()
        half, point_five = (math_verify.parse(text, parsing_timeout=None) for text in ("$\\frac{1}{2}$", "$0.5$"))
        math_verify.verify(half, point_five, timeout_seconds=None)

    async def verify_many(self, claims: Sequence[Claim]) -> list[Verdict]:
        # CPU-bound and short: run inline; the process executor gives each call its own worker.
        return [self.verify(claim) for claim in claims]

    def verify(self, claim: Claim) -> Verdict:
        """Verify one claim (blocking; no time limit of its own)."""
        payload: Mapping[str, Any] = claim.payload
        gold, answer = payload.get("gold"), payload.get("answer")
        if gold is None:
            return invalid(ErrorKind.CRASH, "no gold answer: the prompt names no known problem "
                                            "(expected a <!-- problem: ID --> marker of the parser's problem set)")
        if not isinstance(gold, str) or not isinstance(answer, str):
            return invalid(ErrorKind.CRASH, "claim payload 'gold' and 'answer' must be strings, got "
                                            f"{type(gold).__name__} and {type(answer).__name__}")
        math_verify = _math_verify()
        options = self.options
        if not gold.strip() or not balanced(gold):
            return invalid(ErrorKind.CRASH, f"the gold answer {gold[:80]!r} is blank or its braces do not balance")
        try:
            gold_parsed = _parse_gold(gold)
        except Exception as exc:  # noqa: BLE001 - Math-Verify's own errors: the gold answer is unusable
            return invalid(ErrorKind.CRASH, f"the gold answer {gold[:80]!r} raised in parsing: "
                                            f"{type(exc).__name__}: {str(exc)[:200]}")
        if not gold_parsed:
            return invalid(ErrorKind.CRASH, f"the gold answer {gold[:80]!r} does not parse as math")
        evidence: dict[str, Any] = {"gold": gold[:_EVIDENCE_CHARS], "answer": answer[:_EVIDENCE_CHARS],
                                    "gold_parsed": _shown(gold_parsed)}
        if not balanced(answer):
            return Verdict(Outcome.REFUTED, evidence={**evidence, "answer_parsed": []},
                           reason="the answer's braces do not balance")
        try:
            answer_parsed = math_verify.parse(_as_box(answer), parsing_timeout=None, raise_on_error=True)
        except Exception as exc:  # noqa: BLE001 - the policy's text is not math: a wrong answer
            return Verdict(Outcome.REFUTED, evidence={**evidence, "answer_parsed": []},
                           reason=f"the answer does not parse as math ({type(exc).__name__})")
        evidence["answer_parsed"] = _shown(answer_parsed)
        if not answer_parsed:
            return Verdict(Outcome.REFUTED, evidence=evidence, reason="the answer does not parse as math")
        try:
            equal = math_verify.verify(gold_parsed, answer_parsed, float_rounding=options.float_rounding,
                                       numeric_precision=options.numeric_precision, strict=options.strict,
                                       allow_set_relation_comp=options.allow_set_relation_comp,
                                       timeout_seconds=None, raise_on_error=True)
        except Exception as exc:  # noqa: BLE001 - the comparison itself failed: could not verify, never wrong
            return invalid(ErrorKind.CRASH, f"Math-Verify raised comparing the answer with the gold answer: "
                                            f"{type(exc).__name__}: {str(exc)[:200]}")
        evidence["equal"] = bool(equal)
        if equal:
            return Verdict(Outcome.CERTIFIED, evidence=evidence, reason="the answer equals the gold answer")
        return Verdict(Outcome.REFUTED, evidence=evidence, reason="the answer differs from the gold answer")


def _math_verify() -> Any:
    try:
        import math_verify
        import math_verify.grader
        import math_verify.parser
    except ImportError as exc:  # what failed to import, too: a module on sys.path may stand in for the package
        raise ImportError(f"the math verifier needs Math-Verify: {MATH_INSTALL_HINT} ({exc})") from exc
    # Its one-time warning that timeouts are off asks the caller to bring a timeout: the executor is that timeout.
    math_verify.grader.TIMEOUT_WARNING_SHOWN = math_verify.parser.TIMEOUT_WARNING_SHOWN = True
    return math_verify


@functools.lru_cache(maxsize=_GOLD_CACHE)
def _parse_gold(gold: str) -> list[Any]:
    return cast(list[Any], _math_verify().parse(_as_box(gold), parsing_timeout=None, raise_on_error=True))


def _as_box(text: str) -> str:
    """``text`` as the one boxed answer Math-Verify extracts first (its delimiters ``$...$`` dropped)."""
    text = text.strip()
    while len(text) >= 2 and text.startswith("$") and text.endswith("$"):
        text = text[1:-1].strip()
    return "\\boxed{" + text + "}"


def _shown(parsed: list[Any]) -> list[str]:
    return [str(item)[:_EVIDENCE_CHARS] for item in parsed]


def math_runtime_config(*, workers: int | None = None, **overrides: Any) -> RuntimeConfig:
    """A :class:`~proofgym.runtime.RuntimeConfig` for :class:`MathVerifier`: the process executor (its worker is
    killed at ``timeout_s``: the only timeout Math-Verify gets), one worker per core, batches of 8 (a verification
    takes milliseconds, and a hang costs the batch one bisection), and a 20 s limit that covers a worker's start-up
    (importing SymPy and the LaTeX grammar, seconds on a busy machine), which the first call a worker serves pays."""
    workers = workers or os.cpu_count() or 1
    settings: dict[str, Any] = {"executor": "process", "workers": workers, "max_concurrency": workers,
                                "batch_size": 8, "timeout_s": 20.0, "retries": 1}
    return RuntimeConfig(**{**settings, **overrides})


def build_math_verifier(options: MathVerifierOptions) -> MathVerifier:
    return MathVerifier(options)


def math_examples() -> list[VerifierExample]:
    """Known cases: ``0.5`` is the gold ``\\frac{1}{2}``, ``0.6`` is not."""
    return [VerifierExample({}, math_claim("\\frac{1}{2}", "0.5"), math_claim("\\frac{1}{2}", "0.6"))]


#: The ``math`` verifier kind, registered through the ``proofgym.verifiers`` entry point (pyproject.toml).
MATH_VERIFIER = VerifierKind(MathVerifierOptions, build_math_verifier, math_examples)
