"""Invariants every registered verifier kind meets, plugins' included (they run for a kind as soon as it is
registered): its known right claims are certified and its known wrong ones are not, through the runtime."""

import asyncio

import pytest

from proofgym.core import Outcome
from proofgym.runtime import VerificationRuntime
from proofgym.verifiers import build_verifier, verifier_kind, verifier_kinds

#: Kinds that cannot run offline, and where they are tested instead.
HOSTED = {"ambertrace": "a hosted backend: tests/ambertrace replays its recorded payloads"}


def certifies(verdict, claim):
    """The verdict certifies the claim's decision (a kind that derives the decision from the facts, rather than
    checking the claimed one, certifies what it derived: the claim is right only when they agree)."""
    return verdict.outcome is Outcome.CERTIFIED and verdict.decision in (None, claim.decision)


@pytest.mark.parametrize("kind", verifier_kinds())
def test_right_claims_are_certified_and_wrong_ones_are_not(kind):
    if kind in HOSTED:
        pytest.skip(HOSTED[kind])
    examples = verifier_kind(kind).examples
    assert examples is not None, f"verifier kind {kind!r} ships no examples (VerifierKind.examples)"
    cases = list(examples())
    assert cases, f"verifier kind {kind!r}: examples() returned no case"
    for case in cases:
        try:
            verifier = build_verifier(kind, case.options)
        except Exception as exc:  # a kind whose tools are missing says so when it is built
            if "not installed" in str(exc):
                pytest.skip(f"verifier kind {kind!r}: {exc}")
            raise
        runtime = VerificationRuntime(verifier)
        try:
            right, wrong = asyncio.run(runtime.verify_many([case.right, case.wrong]))
        finally:
            runtime.close()
        if right.outcome is Outcome.INVALID and "not installed" in right.reason:
            pytest.skip(f"verifier kind {kind!r}: {right.reason}")
        assert certifies(right, case.right), (kind, case.right, right)
        assert not certifies(wrong, case.wrong) and wrong.outcome is not Outcome.INVALID, (kind, case.wrong, wrong)
