"""A certificate over facts that are not the record's is worth nothing: lying must not beat an honest mistake."""

from proofgym.core import Claim
from proofgym.rewards import DefaultRewardShaper
from proofgym.testing import certified

SOURCE = {"age": 45, "annual_income": 52000}
REF = {"gold": "deny", "source_facts": SOURCE}


def test_invented_facts_that_get_certified_score_below_an_honest_wrong_answer():
    shaper = DefaultRewardShaper()
    honest_wrong = shaper.shape(certified("deny"), Claim("permit", SOURCE), REF)
    lying = shaper.shape(certified("permit", components={"graded": 1.0}),
                         Claim("permit", {**SOURCE, "annual_income": 25000}), REF)
    assert lying.components["certified"] == 0 and lying.components["graded"] == 0
    assert lying.reward < honest_wrong.reward
    assert "not credited" in lying.reason
