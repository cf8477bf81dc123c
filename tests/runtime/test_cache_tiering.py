from proofgym.core import Claim
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.testing import FakeVerifier, Fault, certified

from ._support import fault_from_payload, make_claims


class DictCache:
    """A permissive persistent tier: stores whatever it is given, records every call."""

    def __init__(self):
        self.data, self.gets, self.puts = {}, [], []

    def get_many(self, keys):
        keys = list(keys)
        self.gets.append(keys)
        return {k: self.data[k] for k in keys if k in self.data}

    def put_many(self, items):
        self.puts.append(dict(items))
        self.data.update(items)

    def close(self):
        raise AssertionError("the runtime must not close a cache it was given")


class BrokenCache:
    def get_many(self, keys):
        raise OSError("disk on fire")

    def put_many(self, items):
        raise OSError("disk on fire")

    def close(self):
        pass


def test_memory_is_asked_first_and_the_persistent_tier_only_for_misses():
    tier = DictCache()
    with VerificationRuntime(FakeVerifier(), cache=tier) as runtime:
        runtime.verify_many_sync(make_claims(3))
        runtime.verify_many_sync(make_claims(4))
        keys = [runtime.cache_key(c) for c in make_claims(4)]
    assert tier.gets == [keys[:3], keys[3:]]


def test_persistent_hits_are_promoted_into_memory():
    tier = DictCache()
    with VerificationRuntime(FakeVerifier(), cache=tier) as runtime:
        tier.data[runtime.cache_key(Claim("permit"))] = certified("stored")
        assert runtime.verify_many_sync([Claim("permit")])[0].decision == "stored"
        assert runtime.verify_many_sync([Claim("permit")])[0].decision == "stored"
        assert len(tier.gets) == 1 and runtime.metrics().cache_hits_memory == 1


def test_runtime_never_offers_or_serves_invalid_verdicts():
    tier = DictCache()
    bad = Claim("x", payload={"fault": Fault.INVALID.value})
    verifier = FakeVerifier(fault=fault_from_payload)
    with VerificationRuntime(verifier, RuntimeConfig(retries=0), cache=tier) as runtime:
        runtime.verify_many_sync([bad, Claim("ok")])
        assert all(not v.invalid for put in tier.puts for v in put.values()) and len(tier.data) == 1
        # a foreign INVALID entry in the shared store is ignored, not served
        tier.data[runtime.cache_key(bad)] = runtime.verify_many_sync([bad])[0]
        assert runtime.verify_many_sync([bad])[0].invalid
        assert len(verifier.calls) == 3


def test_broken_persistent_cache_costs_a_verification_not_the_batch():
    verifier = FakeVerifier()
    with VerificationRuntime(verifier, cache=BrokenCache()) as runtime:
        verdicts = runtime.verify_many_sync(make_claims(3))
        assert all(not v.invalid for v in verdicts)
        assert runtime.metrics().cache_errors == 2  # one failed read, one failed write
        assert runtime.verify_many_sync(make_claims(3)) == verdicts  # memory tier still works
    assert verifier.claims_verified == 3


def test_cache_lookup_reads_both_tiers_and_verifies_nothing(tmp_path):
    verifier = FakeVerifier(fault=fault_from_payload)
    bad = Claim("x", payload={"fault": Fault.EXCEPTION.value})
    config = RuntimeConfig(cache_path=str(tmp_path / "c.sqlite"), retries=0)
    with VerificationRuntime(verifier, config) as runtime:
        assert runtime.cache_lookup(Claim("permit")) is None
        runtime.verify_many_sync([Claim("permit"), bad])
        calls = len(verifier.calls)
        assert runtime.cache_lookup(Claim("permit", reasoning="any")).decision == "permit"
        assert runtime.cache_lookup(bad) is None
    with VerificationRuntime(verifier, config) as runtime:  # memory empty: found on disk
        assert runtime.cache_lookup(Claim("permit")).decision == "permit"
    assert len(verifier.calls) == calls
