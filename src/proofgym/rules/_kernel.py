"""The embedded rule kernel: fact gate -> engine -> independent proof check -> report."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from proofgym.rules._ast import Rulebook
from proofgym.rules._engine import compile_rulebook
from proofgym.rules._gate import FactGate
from proofgym.rules._report import Reporter

Checker = Callable[[Rulebook, Mapping[str, Any]], "list[str]"]


class RuleKernel:
    """Certifies decisions offline, fail-closed.

    :meth:`query` gates the asserted facts (any rejection: status ``abstain``, no proof), evaluates the compiled
    rulebook into a proof, has the independent checker re-derive it, and returns the report of
    docs/rulebooks.md. ``proof_checked`` is true only when the checker accepted the proof; when it rejects it,
    the status is ``indeterminate`` and ``checker_problems`` says why. ``check=False`` skips the checker (tests
    and benchmarks only: nothing is then certified).
    """

    def __init__(self, rulebook: Rulebook, *, check: bool = True) -> None:
        self.rulebook = rulebook
        self._gate = FactGate(rulebook)
        self._engine = compile_rulebook(rulebook)
        self._reporter = Reporter(rulebook)
        self._checker: Checker | None = None
        if check:
            from proofgym.rules._checker import check_proof

            self._checker = check_proof

    @property
    def hash(self) -> str:
        """The rulebook's content hash."""
        return self.rulebook.content_hash

    def query(self, facts: Mapping[str, Any]) -> dict[str, Any]:
        """The report on these asserted facts (JSON-native)."""
        accepted, rejected, confidences = self._gate(facts)
        if rejected:
            return self._reporter.abstained(accepted, rejected, confidences)
        proof, fired = self._engine.run(accepted)
        problems: list[str] | None = None
        if self._checker is not None:
            try:
                problems = self._checker(self.rulebook, proof)
                if type(problems) is not list:
                    problems = list(problems)
            except Exception as exc:  # a checker that crashes has not accepted the proof: fail closed
                problems = [f"the proof checker failed: {type(exc).__name__}: {exc}"]
        return self._reporter.evaluated(proof, fired, confidences, problems)
