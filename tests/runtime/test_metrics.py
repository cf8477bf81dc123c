import json

from proofgym.core import Claim
from proofgym.runtime import RuntimeConfig, RuntimeMetrics, VerificationRuntime
from proofgym.runtime._metrics import LATENCY_RESERVOIR, MetricsRecorder
from proofgym.testing import FakeVerifier, Fault

from ._support import decide, fault_from_payload, make_claims


def test_metrics_count_what_happened(tmp_path):
    claims = make_claims(6)  # 0 and 3 refuted, the rest certified
    claims += [claims[1], claims[2]]  # two duplicates
    claims += [Claim("t", payload={"i": 100, "fault": Fault.TRANSIENT.value}),
               Claim("c", payload={"i": 101, "fault": Fault.EXCEPTION.value}),
               Claim("h", payload={"i": 102, "fault": Fault.HANG.value})]
    config = RuntimeConfig(batch_size=1, retries=1, timeout_s=0.05, backoff_base_s=0.001, backoff_max_s=0.001,
                           cache_path=str(tmp_path / "c.sqlite"))
    with VerificationRuntime(FakeVerifier(decide=decide, fault=fault_from_payload), config) as runtime:
        runtime.verify_many_sync(claims)
        first = runtime.last_batch_metrics()
        assert (first.claims, first.certified, first.refuted, first.invalid) == (11, 6, 2, 3)
        assert first.invalid_by_kind == {"crash": 1, "outage": 1, "timeout": 1}
        assert first.dedup_saves == 2
        assert first.verifier_calls == 6 + 2 + 1 + 2 and first.claims_sent == 11  # retries: transient and hang
        assert first.retries == 2 and first.timeouts == 2
        assert first.cache_hits_memory == first.cache_hits_persistent == 0
        assert 0 <= first.latency_p50_s <= first.latency_p95_s and first.latency_p95_s >= 0.05
        assert first.verify_wall_s > 0 and first.batches == 1 and first.breaker_state == "closed"

        runtime.verify_many_sync(make_claims(6))
        second = runtime.last_batch_metrics()
        assert second.cache_hits_memory == 6 and second.verifier_calls == 0 and second.latency_p50_s is None

        total = runtime.metrics()
        assert total.claims == 17 == total.certified + total.refuted + total.invalid
        assert total.batches == 2 and total.cache_hits_memory == 6 and total.dedup_saves == 2
        assert total.verifier_calls == first.verifier_calls and total.invalid_by_kind == first.invalid_by_kind
        assert total.verify_wall_s == first.verify_wall_s + second.verify_wall_s

    # A new runtime on the same file: hits come from SQLite first, then from memory.
    with VerificationRuntime(FakeVerifier(decide=decide), config) as runtime:
        runtime.verify_many_sync(make_claims(6))
        assert runtime.last_batch_metrics().cache_hits_persistent == 6
        runtime.verify_many_sync(make_claims(6))
        assert runtime.last_batch_metrics().cache_hits_memory == 6
        assert runtime.metrics().verifier_calls == 0


def test_to_dict_is_json_ready_and_complete():
    with VerificationRuntime(FakeVerifier()) as runtime:
        runtime.verify_many_sync(make_claims(3))
        data = runtime.metrics().to_dict()
    json.dumps(data)
    assert set(data) == set(RuntimeMetrics.__dataclass_fields__)
    assert data["claims"] == 3 and data["invalid_by_kind"] == {}


def test_fresh_runtime_reports_zeroes():
    with VerificationRuntime(FakeVerifier()) as runtime:
        metrics = runtime.metrics()
    assert metrics.claims == 0 and metrics.latency_p50_s is None
    assert metrics == RuntimeMetrics(cache_max_bytes=256 << 20)  # the memory tier's default bound, empty


def test_latency_reservoir_is_bounded_to_the_latest_calls():
    recorder = MetricsRecorder()
    batch = recorder.batch()
    for _ in range(500):
        batch.latency(100.0)  # old and slow: pushed out of the reservoir
    for i in range(LATENCY_RESERVOIR):
        batch.latency(i / LATENCY_RESERVOIR)
    snapshot = recorder.snapshot("closed")
    assert snapshot.latency_p95_s < 1.0
    assert abs(snapshot.latency_p50_s - 0.5) < 0.01
