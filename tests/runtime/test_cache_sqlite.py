import sqlite3
import threading

import pytest

from proofgym.core import Claim, ErrorKind
from proofgym.runtime import RuntimeConfig, SQLiteVerdictCache, VerificationRuntime
from proofgym.testing import FakeVerifier, Fault, certified, invalid_verdict, refuted

from ._support import fault_from_payload, make_claims


def test_roundtrip_and_wal_mode(tmp_path):
    cache = SQLiteVerdictCache(tmp_path / "sub" / "cache.sqlite")
    try:
        verdict = refuted("no", rejected={"age": 17}, evidence={"log": [1, 2]}, timings={"verify_s": 0.5})
        cache.put("k", verdict)
        assert cache.get("k") == verdict
        assert cache.get("missing") is None
        assert cache.journal_mode == "wal"
    finally:
        cache.close()
        cache.close()  # idempotent


def test_invalid_and_unserialisable_verdicts_are_not_stored(tmp_path):
    cache = SQLiteVerdictCache(tmp_path / "c.sqlite")
    try:
        cache.put_many({"bad": invalid_verdict(ErrorKind.OUTAGE), "odd": certified("x", evidence={"o": object()}),
                        "ok": certified("y")})
        assert "bad" not in cache and "odd" not in cache and "ok" in cache
    finally:
        cache.close()


def test_corrupt_row_is_a_miss_and_gets_overwritten(tmp_path):
    path = tmp_path / "c.sqlite"
    claim = Claim("permit", {"a": 1})
    verifier = FakeVerifier()
    with VerificationRuntime(verifier, RuntimeConfig(cache_path=str(path), cache_size=0)) as runtime:
        runtime.verify_many_sync([claim])
        key = runtime.cache_key(claim)
    for garbage in ("{not json", '{"outcome": "bogus"}', "[1, 2]", '{"outcome": "invalid"}'):
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE verdicts SET verdict = ? WHERE key = ?", (garbage, key))
        with VerificationRuntime(verifier, RuntimeConfig(cache_path=str(path), cache_size=0)) as runtime:
            assert runtime.verify_many_sync([claim])[0].certified
            assert runtime.last_batch_metrics().cache_hits_persistent == 0
            assert runtime.persistent_cache.get(key).certified  # re-verified and written back
    assert verifier.claims_verified == 5


def test_persists_across_runtime_instances_and_promotes_to_memory(tmp_path):
    config = RuntimeConfig(cache_path=str(tmp_path / "c.sqlite"))
    first = FakeVerifier()
    with VerificationRuntime(first, config) as runtime:
        expected = runtime.verify_many_sync(make_claims(4))
    second = FakeVerifier()
    with VerificationRuntime(second, config) as runtime:
        assert runtime.verify_many_sync(make_claims(4)) == expected
        assert runtime.last_batch_metrics().cache_hits_persistent == 4
        runtime.verify_many_sync(make_claims(4))
        assert runtime.last_batch_metrics().cache_hits_memory == 4
    assert second.claims_verified == 0


def test_version_bump_and_reasoning(tmp_path):
    config = RuntimeConfig(cache_path=str(tmp_path / "c.sqlite"), cache_size=0)
    with VerificationRuntime(FakeVerifier(version="1"), config) as runtime:
        runtime.verify_many_sync(make_claims(3))
    same = FakeVerifier(version="1")
    with VerificationRuntime(same, config) as runtime:
        runtime.verify_many_sync(make_claims(3, reasoning="other words"))
    assert same.claims_verified == 0
    bumped = FakeVerifier(version="2")
    with VerificationRuntime(bumped, config) as runtime:
        runtime.verify_many_sync(make_claims(3))
    assert bumped.claims_verified == 3


def test_invalid_results_never_reach_sqlite(tmp_path):
    bad = Claim("x", payload={"i": 0, "fault": Fault.INVALID.value})
    good = Claim("y", payload={"i": 1})
    config = RuntimeConfig(cache_path=str(tmp_path / "c.sqlite"), retries=0)
    with VerificationRuntime(FakeVerifier(fault=fault_from_payload), config) as runtime:
        verdicts = runtime.verify_many_sync([bad, good])
        assert verdicts[0].invalid and verdicts[1].certified
        assert runtime.cache_key(bad) not in runtime.persistent_cache
        assert runtime.cache_key(good) in runtime.persistent_cache


def test_usable_from_several_threads(tmp_path):
    cache = SQLiteVerdictCache(tmp_path / "c.sqlite")
    errors = []

    def work(t):
        try:
            for i in range(50):
                cache.put(f"{t}-{i}", certified(str(i)))
                assert cache.get(f"{t}-{i}").decision == str(i)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == [] and len(cache) == 200
    finally:
        cache.close()


def test_cache_argument_and_cache_path_are_exclusive(tmp_path):
    cache = SQLiteVerdictCache(tmp_path / "c.sqlite")
    try:
        with pytest.raises(ValueError, match="cache_path"):
            VerificationRuntime(FakeVerifier(), RuntimeConfig(cache_path=str(tmp_path / "d.sqlite")), cache=cache)
        with VerificationRuntime(FakeVerifier(), cache=cache) as runtime:
            runtime.verify_many_sync(make_claims(1))
        assert len(cache) == 1  # still open: the runtime closes only what it created
    finally:
        cache.close()
