"""The math verifier's three outcomes: certified = equal to gold, refuted = parsed and different (or not math at
all), invalid = could not verify (no gold, a gold that does not parse, a timeout); evidence shows both forms."""

from __future__ import annotations

import pickle

import pytest

pytest.importorskip("math_verify", reason="the math verifier needs Math-Verify: pip install 'proofgym[math]'")

from proofgym.core import Claim, ErrorKind, Outcome  # noqa: E402
from proofgym.math import MathVerifier, MathVerifierOptions, math_claim  # noqa: E402
from proofgym.verifiers import VerifierOptionsError, build_verifier, verifier_kind, verifier_kinds  # noqa: E402


@pytest.fixture(scope="module")
def verifier() -> MathVerifier:
    return MathVerifier()


def test_certified_shows_both_parsed_forms(verifier):
    verdict = verifier.verify(math_claim("\\frac{1}{2}", "0.5"))
    assert verdict.outcome is Outcome.CERTIFIED
    assert verdict.evidence["gold_parsed"][0] == "1/2" and verdict.evidence["answer_parsed"] == ["1/2", "\\frac{1}{2}"]
    verdict.to_json()  # JSON-native evidence


def test_refuted_shows_both_parsed_forms(verifier):
    verdict = verifier.verify(math_claim("7", "8"))
    assert verdict.outcome is Outcome.REFUTED
    assert verdict.evidence["gold_parsed"][0] == "7" and verdict.evidence["answer_parsed"][0] == "8"
    assert verdict.evidence["equal"] is False


@pytest.mark.parametrize("answer", ["}{", "\\frac{1}{", "", "\\boxed{"])
def test_an_answer_that_is_not_math_is_wrong_not_unverifiable(verifier, answer):
    verdict = verifier.verify(math_claim("7", answer))
    assert verdict.outcome is Outcome.REFUTED, verdict
    assert verdict.evidence["answer_parsed"] == []


@pytest.mark.parametrize(("payload", "words"), [
    ({"gold": None, "answer": "1"}, "no gold answer"),
    ({"answer": "1"}, "no gold answer"),
    ({"gold": 7, "answer": "1"}, "must be strings"),
    ({"gold": "7", "answer": None}, "must be strings"),
    ({"gold": "\\frac{", "answer": "1"}, "gold answer"),
    ({"gold": "   ", "answer": "1"}, "gold answer"),
])
def test_a_claim_that_cannot_be_checked_is_invalid(verifier, payload, words):
    verdict = verifier.verify(Claim(payload=payload))
    assert verdict.outcome is Outcome.INVALID and verdict.error_kind is ErrorKind.CRASH
    assert words in verdict.reason


def test_a_comparison_that_raises_is_invalid_never_refuted(verifier, monkeypatch):
    import math_verify

    def broken(*args, **kwargs):
        raise ValueError("signal only works in main thread of the main interpreter")

    monkeypatch.setattr(math_verify, "verify", broken)
    verdict = verifier.verify(math_claim("7", "7"))
    assert verdict.outcome is Outcome.INVALID and "signal only works" in verdict.reason


def test_math_verify_is_always_called_with_its_timeouts_off(verifier, monkeypatch):
    import math_verify

    seen = []
    real_parse, real_verify = math_verify.parse, math_verify.verify
    monkeypatch.setattr(math_verify, "parse", lambda *a, **k: seen.append(("parse", k["parsing_timeout"]))
                        or real_parse(*a, **k))
    monkeypatch.setattr(math_verify, "verify", lambda *a, **k: seen.append(("verify", k["timeout_seconds"]))
                        or real_verify(*a, **k))
    assert verifier.verify(math_claim("12345/7", "12345/7")).certified
    assert ("parse", None) in seen and ("verify", None) in seen
    assert all(timeout is None for _, timeout in seen)


def test_the_verifier_pickles_for_worker_processes(verifier):
    copy = pickle.loads(pickle.dumps(verifier))
    assert copy.version == verifier.version and copy.verify(math_claim("2", "2.0")).certified


def test_the_version_names_the_packages_and_settings():
    version = MathVerifier(MathVerifierOptions(float_rounding=3)).version
    assert "math-verify 0.9.0" in version and "latex2sympy2_extended 1.11.0" in version
    assert "float_rounding=3" in version


def test_the_kind_is_registered_and_its_options_are_strict():
    assert "math" in verifier_kinds()
    assert isinstance(build_verifier("math", {"float_rounding": 4}), MathVerifier)
    with pytest.raises(VerifierOptionsError, match="timeout"):
        build_verifier("math", {"timeout_seconds": 5})
    with pytest.raises(VerifierOptionsError, match="float_rounding"):
        build_verifier("math", {"float_rounding": "6"})
    examples = verifier_kind("math").examples()
    built = build_verifier("math", examples[0].options)
    assert built.verify(examples[0].right).certified and not built.verify(examples[0].wrong).certified
