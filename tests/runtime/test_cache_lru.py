import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proofgym.core import Claim, ErrorKind
from proofgym.runtime import LRUVerdictCache, RuntimeConfig, VerificationRuntime
from proofgym.testing import FakeVerifier, Fault, certified, invalid_verdict

from ._support import fault_from_payload, make_claims


def test_lru_keeps_at_most_max_entries_and_evicts_least_recently_used():
    cache = LRUVerdictCache(2)
    cache.put("a", certified("a"))
    cache.put("b", certified("b"))
    assert cache.get("a") is not None  # "a" is now the most recently used
    cache.put("c", certified("c"))
    assert len(cache) == 2 and "b" not in cache and "a" in cache and "c" in cache
    assert cache.evictions == 1


def test_peek_does_not_count_as_a_use():
    cache = LRUVerdictCache(2)
    cache.put("a", certified("a"))
    cache.put("b", certified("b"))
    assert cache.peek("a").decision == "a" and cache.peek("zzz") is None
    cache.put("c", certified("c"))
    assert "a" not in cache and "b" in cache


def test_lru_refuses_invalid_verdicts():
    cache = LRUVerdictCache(4)
    cache.put("x", invalid_verdict(ErrorKind.CRASH, "boom"))
    assert "x" not in cache and cache.get("x") is None


def test_lru_size_must_be_positive():
    with pytest.raises(ValueError):
        LRUVerdictCache(0)


def test_repeat_call_hits_memory_cache():
    verifier = FakeVerifier()
    with VerificationRuntime(verifier) as runtime:
        first = runtime.verify_many_sync(make_claims(5))
        again = runtime.verify_many_sync(make_claims(5, reasoning="different reasoning"))
        assert verifier.claims_verified == 5
        assert again == first
        assert runtime.last_batch_metrics().cache_hits_memory == 5


def test_invalid_verdicts_are_never_cached():
    verifier = FakeVerifier(fault=fault_from_payload)
    bad = Claim(decision="x", payload={"i": 0, "fault": Fault.EXCEPTION.value})
    with VerificationRuntime(verifier, RuntimeConfig(retries=0)) as runtime:
        assert runtime.verify_many_sync([bad])[0].invalid
        assert runtime.verify_many_sync([bad])[0].invalid
        assert len(verifier.calls) == 2
        assert runtime.cache_key(bad) not in runtime.memory_cache


def test_runtime_memory_cache_is_bounded():
    verifier = FakeVerifier()
    with VerificationRuntime(verifier, RuntimeConfig(cache_size=10)) as runtime:
        runtime.verify_many_sync(make_claims(25))
        assert len(runtime.memory_cache) == 10
        assert runtime.metrics().cache_evictions == 15
        runtime.verify_many_sync(make_claims(10, start=15))  # the 10 most recent are still there
        assert verifier.claims_verified == 25


def test_version_bump_misses_the_cache():
    with VerificationRuntime(FakeVerifier(version="1")) as old:
        old.verify_many_sync(make_claims(3))
        old_keys = {old.cache_key(c) for c in make_claims(3)}
    verifier = FakeVerifier(version="2")
    with VerificationRuntime(verifier) as new:
        assert old_keys.isdisjoint(new.cache_key(c) for c in make_claims(3))
        new.verify_many_sync(make_claims(3))
    assert verifier.claims_verified == 3


def test_cache_size_zero_disables_memory_cache():
    verifier = FakeVerifier()
    with VerificationRuntime(verifier, RuntimeConfig(cache_size=0)) as runtime:
        assert runtime.memory_cache is None
        runtime.verify_many_sync(make_claims(2))
        runtime.verify_many_sync(make_claims(2))
    assert verifier.claims_verified == 4


@given(st.integers(1, 5), st.lists(st.tuples(st.sampled_from(["get", "put"]), st.integers(0, 8)), max_size=60))
@settings(max_examples=200, deadline=None)
def test_lru_matches_a_reference_model(size, operations):
    cache, model, evictions = LRUVerdictCache(size), [], 0  # model: keys, least recently used first
    for op, k in operations:
        key = str(k)
        if op == "put":
            cache.put(key, certified(key))
            if key in model:
                model.remove(key)
            model.append(key)
            if len(model) > size:
                model.pop(0)
                evictions += 1
        else:
            hit = cache.get(key)
            assert (hit is not None) == (key in model)
            if hit is not None:
                assert hit.decision == key
                model.remove(key)
                model.append(key)
    assert list(cache._entries) == model and cache.evictions == evictions
