from proofgym import Claim


def test_reasoning_does_not_change_the_key():
    a = Claim("permit", {"age": 30, "resident": True}, reasoning="because")
    b = Claim("permit", {"resident": True, "age": 30}, reasoning="something else entirely")
    assert a.key() == b.key()


def test_decision_and_facts_change_the_key():
    base = Claim("permit", {"age": 30})
    assert base.key() != Claim("deny", {"age": 30}).key()
    assert base.key() != Claim("permit", {"age": 31}).key()
    assert base.key(include_decision=False) == Claim("deny", {"age": 30}).key(include_decision=False)


def test_fact_value_unwraps_confidence_objects():
    claim = Claim("permit", {"age": {"value": 30, "confidence": 0.9}, "resident": True})
    assert claim.fact_value("age") == 30 and claim.fact_value("resident") is True
