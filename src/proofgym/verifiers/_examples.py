"""Known cases of the built-in verifier kinds (``VerifierKind.examples``): a grant application whose facts permit."""

from __future__ import annotations

from proofgym.core import Claim
from proofgym.verifiers._registry import VerifierExample

_FACTS = {"age": 34, "annual_income": 30_000, "resident": True, "has_active_grant": False}


def _grant_cases(options: dict) -> list[VerifierExample]:
    # 30,000 is the threshold itself: a permit; a minor, or a non-resident, is a deny.
    return [VerifierExample(options, Claim("permit", dict(_FACTS)), Claim("deny", dict(_FACTS))),
            VerifierExample(options, Claim("deny", {**_FACTS, "age": 17}), Claim("permit", {**_FACTS, "age": 17})),
            VerifierExample(options, Claim("deny", {**_FACTS, "resident": False}),
                            Claim("permit", {**_FACTS, "resident": False}))]


def python_examples() -> list[VerifierExample]:
    return _grant_cases({"function": "proofgym.reference_verifiers.grant_rules:verify"})


def rulebook_examples() -> list[VerifierExample]:
    return _grant_cases({"domain": "grant_eligibility"})
