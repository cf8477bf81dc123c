"""A hand-made corpus of equivalent and non-equivalent answer forms: every equivalent form is certified, every
non-equivalent one refuted, and each verdict's evidence shows both parsed forms."""

from __future__ import annotations

import pytest

pytest.importorskip("math_verify", reason="the math verifier needs Math-Verify: pip install 'proofgym[math]'")

from proofgym.core import Outcome  # noqa: E402
from proofgym.math import MathVerifier, math_claim  # noqa: E402

#: (gold, answer, what the form is)
EQUIVALENT = [
    ("\\frac{1}{2}", "1/2", "fraction"),
    ("\\frac{1}{2}", "\\dfrac12", "fraction"),
    ("\\frac{1}{2}", "0.5", "decimal"),
    ("\\frac{1}{2}", "0.50", "decimal"),
    ("138/583", "\\frac{138}{583}", "fraction"),
    ("$741/928$", "\\tfrac{741}{928}", "fraction"),
    ("\\frac{1}{3}", "0.333333", "decimal to the rounding"),
    ("3", "3.0", "decimal"),
    ("-4", "-4.000", "decimal"),
    ("2\\pi", "6.283185307", "decimal"),
    ("\\sqrt{2}/2", "\\frac{1}{\\sqrt{2}}", "LaTeX"),
    ("x^2+2x+1", "(x+1)^2", "LaTeX"),
    ("\\frac{\\sqrt{3}}{3}", "\\frac{1}{\\sqrt{3}}", "LaTeX"),
    ("-15.0 + 3.0i", "-15+3i", "complex"),
    ("\\{1, 2, 3\\}", "\\{3, 2, 1\\}", "set"),
    ("-3.625, 0.0", "-29/8, 0", "set of roots"),
    ("[1, 2)", "[1,2)", "interval"),
    ("(0, \\infty)", "(0,\\infty)", "interval"),
    ("(-\\infty, 3]", "(-\\infty, 3]", "interval"),
    ("5", "5 \\text{ cm}", "units"),
    ("5\\text{ meters}", "5", "units"),
    ("20", "\\$20", "currency"),
    ("50\\%", "50%", "percent"),
    ("0.25", "25\\%", "percent"),
    ("1000000", "1,000,000", "thousands separators"),
    ("1000000", "1{,}000{,}000", "thousands separators"),
    ("1234", "1,234", "thousands separators"),
    ("x = 3", "3", "equation"),
]

NOT_EQUIVALENT = [
    ("\\frac{1}{2}", "0.6", "fraction"),
    ("\\frac{1}{2}", "2", "fraction"),
    ("138/583", "139/583", "fraction"),
    ("\\frac{1}{3}", "0.33", "decimal past the rounding"),
    ("3", "3.01", "decimal"),
    ("-4", "4", "sign"),
    ("\\sqrt{2}", "2", "LaTeX"),
    ("x + 1", "x + 2", "LaTeX"),
    ("\\{1, 2\\}", "\\{1, 3\\}", "set"),
    ("3", "\\{3, 4\\}", "set holding the answer"),
    ("3", "3, 4", "list holding the answer"),
    ("-3.625, 0.0", "-3.625", "a root missing"),
    ("-3.625, 0.0", "-3.625, 0, 5", "a root too many"),
    ("[1, 2)", "[1, 2]", "interval"),
    ("(0, \\infty)", "[0, \\infty)", "interval"),
    ("3", "[3, 4]", "interval holding the answer"),
    ("5", "6 \\text{ cm}", "units"),
    ("1234", "1,235", "thousands separators"),
    ("1000000", "100000", "thousands separators"),
    ("0.25", "26\\%", "percent"),
    ("3", "x", "a variable"),
    ("3", "3 = 4", "a false equation"),
    ("42", "forty-two", "words"),
]


@pytest.fixture(scope="module")
def verifier() -> MathVerifier:
    return MathVerifier()


@pytest.mark.parametrize(("gold", "answer", "form"), EQUIVALENT, ids=[f"{f}:{a}" for _, a, f in EQUIVALENT])
def test_an_equivalent_form_is_certified(verifier, gold, answer, form):
    verdict = verifier.verify(math_claim(gold, answer))
    assert verdict.outcome is Outcome.CERTIFIED, verdict
    assert verdict.evidence["gold"] == gold and verdict.evidence["answer"] == answer
    assert verdict.evidence["gold_parsed"] and verdict.evidence["answer_parsed"] and verdict.evidence["equal"]


@pytest.mark.parametrize(("gold", "answer", "form"), NOT_EQUIVALENT,
                         ids=[f"{f}:{a}" for _, a, f in NOT_EQUIVALENT])
def test_a_different_answer_is_refuted_never_invalid(verifier, gold, answer, form):
    verdict = verifier.verify(math_claim(gold, answer))
    assert verdict.outcome is Outcome.REFUTED, verdict
    assert verdict.evidence["gold_parsed"] and "answer_parsed" in verdict.evidence


def test_the_corpus_covers_every_form_the_issue_names():
    forms = " ".join(form for _, _, form in EQUIVALENT + NOT_EQUIVALENT)
    for needed in ("fraction", "decimal", "LaTeX", "set", "interval", "units", "percent", "thousands separators"):
        assert needed in forms
