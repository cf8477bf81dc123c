"""Known cases of the built-in ``python`` verifier kind (``VerifierKind.examples``): grant applications, checked by
the grant rules written in Python (:mod:`proofgym.domains.grant_rules`, named by string: imported only when run)."""

from __future__ import annotations

from proofgym.core import Claim
from proofgym.verifiers._registry import VerifierExample

_FACTS = {"age": 34, "annual_income": 30_000, "resident": True, "has_active_grant": False}


def python_examples() -> list[VerifierExample]:
    options = {"function": "proofgym.domains.grant_rules:verify"}
    # 30,000 is the threshold itself: a permit; a minor, or a non-resident, is a deny.
    return [VerifierExample(options, Claim("permit", dict(_FACTS)), Claim("deny", dict(_FACTS))),
            VerifierExample(options, Claim("deny", {**_FACTS, "age": 17}), Claim("permit", {**_FACTS, "age": 17})),
            VerifierExample(options, Claim("deny", {**_FACTS, "resident": False}),
                            Claim("permit", {**_FACTS, "resident": False}))]

