import pytest

from proofgym.core import Claim
from proofgym.parsers import FormatError, ParseLimits, ParseResult


def test_exactly_one_of_claim_and_error():
    assert ParseResult(claim=Claim(decision="x")).ok
    assert not ParseResult(error=FormatError("empty", "the response is empty")).ok
    with pytest.raises(ValueError):
        ParseResult()
    with pytest.raises(ValueError):
        ParseResult(claim=Claim(), error=FormatError("empty", ""))


def test_limits_defaults():
    assert ParseLimits() == ParseLimits(
        max_completion_chars=20_000, max_json_chars=8_000, max_json_depth=6, max_facts=64, max_string_chars=512
    )


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "10"])
def test_limits_must_be_positive_ints(value):
    with pytest.raises(ValueError):
        ParseLimits(max_json_chars=value)


def test_max_facts_may_be_zero():
    assert ParseLimits(max_facts=0).max_facts == 0
