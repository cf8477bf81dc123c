"""The memory verdict cache is bounded by (estimated) bytes as well as entries, and says how big it is: in the
runtime's metrics and in a task app's ``/info``. A task app's default fits a worker (64 MiB, not 0.9 GB)."""

from __future__ import annotations

import tracemalloc

import pytest
from fastapi.testclient import TestClient

from proofgym.core import Claim, Outcome, Verdict
from proofgym.domains import default_run_config
from proofgym.runtime import LRUVerdictCache, RuntimeConfig, VerificationRuntime
from proofgym.runtime._cache import estimated_bytes
from proofgym.taskapp import create_app
from proofgym.testing import FakeVerifier


def _verdict(i: int, evidence_chars: int = 4000) -> Verdict:
    return Verdict(Outcome.CERTIFIED, decision="permit", evidence={"proof": [f"step {i}" + "x" * evidence_chars]})


def test_entries_stay_within_the_byte_bound_and_the_oldest_go_first():
    per_entry = estimated_bytes(_verdict(0))
    cache = LRUVerdictCache(max_entries=100_000, max_bytes=50 * per_entry)
    for i in range(500):
        cache.put(f"k{i}", _verdict(i))
    assert 45 <= cache.limit <= 50 and len(cache) == cache.limit and cache.evictions == 500 - cache.limit
    assert "k499" in cache and "k440" not in cache
    assert cache.approx_bytes <= 50 * per_entry * 1.01


def test_the_entry_bound_still_holds_when_bytes_allow_more():
    cache = LRUVerdictCache(max_entries=10, max_bytes=1 << 30)
    for i in range(30):
        cache.put(f"k{i}", _verdict(i, 10))
    assert len(cache) == 10 and cache.limit == 10


def test_the_estimate_is_within_a_factor_of_two_of_the_measured_memory():
    """Real rulebook verdicts (the kernel's proofs), kept only by the cache: tracemalloc's count vs the estimate."""
    reward_fn = default_run_config("grant_eligibility").reward_function()
    with reward_fn:
        runtime = reward_fn.runtime
        claims = [Claim(decision="permit", facts={"age": 18 + i % 60, "annual_income": 10_000 + i, "resident": True,
                                                  "has_active_grant": False}) for i in range(600)]
        runtime.verify_many_sync(claims[:1])  # the kernel and the loop are built before measuring
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            runtime.verify_many_sync(claims[1:])
            kept = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        cache = runtime.memory_cache
        assert len(cache) == 600
        per_entry_measured, per_entry_estimated = kept / 599, cache.approx_bytes / len(cache)
    assert 0.5 < per_entry_estimated / per_entry_measured < 2, (per_entry_estimated, per_entry_measured)


def test_the_runtime_reports_its_cache_in_the_metrics():
    config = RuntimeConfig(cache_size=1000, cache_max_mb=1)
    with VerificationRuntime(FakeVerifier(), config) as runtime:
        runtime.verify_many_sync([Claim(decision="permit", facts={"n": i}) for i in range(20)])
        metrics = runtime.metrics()
    assert metrics.cache_entries == 20 and metrics.cache_bytes > 0 and metrics.cache_max_bytes == 1 << 20
    assert metrics.to_dict()["cache_bytes"] == metrics.cache_bytes


def test_a_config_may_drop_the_byte_bound_and_bad_bounds_are_refused():
    assert RuntimeConfig(cache_max_mb=None).cache_max_mb is None
    with pytest.raises(ValueError):
        RuntimeConfig(cache_max_mb=0)
    with pytest.raises(ValueError):
        LRUVerdictCache(10, max_bytes=0)


def test_the_task_app_default_fits_a_worker_and_info_reports_the_cache(tmp_path):
    runtime = default_run_config("grant_eligibility").runtime
    assert runtime.cache_max_mb == 64
    app = create_app("grant_eligibility", store=tmp_path / "traces.db")
    with TestClient(app) as client:
        body = {"run_id": "cache", "env": {"seed": 5}, "policy": {"policy_name": "oracle"}}
        assert client.post("/rollout", json=body).status_code == 200
        usage = client.get("/info").json()["verification_cache"]
    grant = [entry for entry in usage if entry["domain"] == "grant_eligibility"]
    assert grant and grant[0]["entries"] >= 1 and grant[0]["approx_bytes"] > 0
    assert grant[0]["max_bytes"] == 64 << 20
