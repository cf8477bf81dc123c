from proofgym.core import Claim
from proofgym.runtime import VerificationRuntime
from proofgym.testing import FakeVerifier


def key(claim, **verifier_options):
    with VerificationRuntime(FakeVerifier(**verifier_options)) as runtime:
        return runtime.cache_key(claim)


def test_reasoning_does_not_enter_the_key():
    assert key(Claim("permit", {"a": 1}, reasoning="one")) == key(Claim("permit", {"a": 1}, reasoning="two"))


def test_key_covers_decision_facts_payload():
    base = key(Claim("permit", {"a": 1}, {"p": 1}))
    assert base != key(Claim("deny", {"a": 1}, {"p": 1}))
    assert base != key(Claim("permit", {"a": 2}, {"p": 1}))
    assert base != key(Claim("permit", {"a": 1}, {"p": 2}))


def test_key_covers_verifier_name_and_version():
    claim = Claim("permit", {"a": 1})
    assert key(claim) != key(claim, version="2")
    assert key(claim) != key(claim, name="other")


def test_decision_ignored_when_verifier_does_not_use_it():
    assert key(Claim("permit", {"a": 1}), uses_decision=False) == key(Claim("deny", {"a": 1}), uses_decision=False)


def test_key_is_stable_and_independent_of_fact_order():
    assert key(Claim("permit", {"a": 1, "b": 2})) == key(Claim("permit", {"b": 2, "a": 1}))
    assert len(key(Claim())) == 64
