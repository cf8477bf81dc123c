"""``runtime.executor: ray`` on a real two-node local Ray cluster: the process pool's contract (identical verdicts,
timeouts that kill the call, errors classified the same, lost workers and nodes retried, never scored)."""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
import time

import pytest

from proofgym.core import Claim, ErrorKind
from proofgym.runtime import RayConfig, RayExecutor, RuntimeConfig, VerificationRuntime
from proofgym.testing import FakeVerifier, Fault

from _judge import requires_judge
from _ray_cluster import ray_cluster  # noqa: F401  (the session fixture)

from ._support import CountingFakeVerifier, decide_in_worker, fault_from_payload, make_claims
from _bounds import CUT_OFF_S

MODES = ("actors", "tasks")
TIMEOUT_S = 15.0  # generous: a call that finds no warm actor pays a Ray worker's start-up, seconds on a loaded machine


def comparable(verdict):
    """A verdict without what legitimately differs between two runs (timings, which worker answered)."""
    evidence = {k: v for k, v in verdict.evidence.items() if k not in ("pid", "unpickled", "duration_s")}
    return dataclasses.replace(verdict, timings={}, evidence=evidence)


def ray_runtime(verifier, mode="actors", **config):
    settings = {"executor": "ray", "ray": RayConfig(mode=mode), "timeout_s": TIMEOUT_S, "retries": 0,
                "cache_size": 0, **config}
    return VerificationRuntime(verifier, RuntimeConfig(**settings))


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_until(predicate, timeout_s=30.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


# -- without a cluster ---------------------------------------------------------------------------------

def test_ray_settings_are_validated_and_name_the_key():
    with pytest.raises(ValueError, match="ray is only used with executor='ray'"):
        RuntimeConfig(ray=RayConfig())
    for bad in ("not an address", "http://head:6379", "head", ""):
        with pytest.raises(ValueError, match="address"):
            RayConfig(address=bad)
    with pytest.raises(ValueError, match="num_cpus"):
        RayConfig(num_cpus=0)
    with pytest.raises(ValueError, match="mode"):
        RayConfig(mode="threads")
    config = RuntimeConfig(executor="ray", workers=4, ray={"address": "10.0.0.1:6379", "num_cpus": 0.5})
    assert config.ray == RayConfig(address="10.0.0.1:6379", num_cpus=0.5, mode="actors")
    assert RayConfig(address="ray://head:10001").address == "ray://head:10001"


def test_a_missing_ray_says_how_to_install_it(monkeypatch):
    from proofgym.runtime import _ray

    monkeypatch.setitem(sys.modules, "ray", None)  # what an environment without Ray looks like to import
    with pytest.raises(ImportError, match=r"pip install 'proofgym\[ray\]'"):
        _ray.import_ray()


# -- on the cluster ------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", [pytest.param("actors", marks=pytest.mark.slow), "tasks"])
def test_rulebook_verdicts_are_identical_to_in_process(ray_cluster, mode):
    from proofgym.domains import get_domain
    from proofgym.rules import RuleKernel, load_rulebook
    from proofgym.domains import RulebookVerifier

    domain = get_domain("grant_eligibility")
    verifier = RulebookVerifier(RuleKernel(load_rulebook(domain.rulebook_path)))
    records = domain.generate(seed=3, n=40)
    claims = [Claim("permit" if i % 2 else "deny", dict(record.facts)) for i, record in enumerate(records)]
    claims.append(Claim("permit", {"age": "not a number"}))  # a gated fact: refuted the same way
    with VerificationRuntime(verifier, RuntimeConfig(cache_size=0)) as here:
        expected = here.verify_many_sync(claims)
    with ray_runtime(verifier, mode, batch_size=8) as there:
        got = there.verify_many_sync(claims)
        metrics = there.metrics()
    assert [comparable(v) for v in got] == [comparable(v) for v in expected]
    assert len({v.outcome for v in got}) >= 2  # certified and refuted alike
    assert metrics.verifier_calls == 6 and metrics.invalid == 0


@requires_judge
def test_verilog_verdicts_are_identical_to_in_process(ray_cluster):
    from proofgym.verilog import VerilogVerifier, builtin_problems, design_claim

    from verilog._support import inverted_output_design, reference_design

    problems = dict(list(builtin_problems().items())[:4])
    verifier = VerilogVerifier(problems)
    claims = []
    for problem in problems.values():
        reference = reference_design(problem)
        claims += [design_claim(problem, reference), design_claim(problem, inverted_output_design(problem)),
                   design_claim(problem, reference.replace("endmodule", "  wire ;\nendmodule", 1))]
    with VerificationRuntime(verifier, RuntimeConfig(cache_size=0, timeout_s=60)) as here:
        expected = here.verify_many_sync(claims)
    with ray_runtime(verifier, "actors", batch_size=1, timeout_s=60) as there:
        got = there.verify_many_sync(claims)
    assert [comparable(v) for v in got] == [comparable(v) for v in expected]
    assert [v.outcome.value for v in got] == ["certified", "refuted", "refuted"] * len(problems)


def test_verifier_state_stays_in_the_actors_and_actors_spread_over_both_nodes(ray_cluster):
    verifier = CountingFakeVerifier(decide=decide_in_worker, latency_s=0.2)  # calls overlap: both actors serve
    with ray_runtime(verifier, "actors", batch_size=1, max_concurrency=2) as runtime:
        executor = runtime.executor
        assert isinstance(executor, RayExecutor) and executor.max_concurrency == 2
        verdicts = []
        for start in range(0, 24, 4):
            verdicts += runtime.verify_many_sync(make_claims(4, start=start))
        assert all(v.certified for v in verdicts)
        # Two actors answered 24 calls, each having unpickled the verifier once.
        assert len({v.evidence["pid"] for v in verdicts}) == 2
        assert {v.evidence["unpickled"] for v in verdicts} == {1}
        assert len(executor.nodes_used()) == 2  # SPREAD: one actor on each node
        pids = {v.evidence["pid"] for v in verdicts}
    assert wait_until(lambda: not any(map(pid_alive, pids)))  # close() killed the actors


def test_tasks_unpickle_the_verifier_per_call(ray_cluster):
    verifier = CountingFakeVerifier(decide=decide_in_worker)
    with ray_runtime(verifier, "tasks", batch_size=1, max_concurrency=1) as runtime:
        verdicts = [runtime.verify_many_sync(make_claims(1, start=i))[0] for i in range(4)]
    by_pid: dict[int, list[int]] = {}
    for verdict in verdicts:
        by_pid.setdefault(verdict.evidence["pid"], []).append(verdict.evidence["unpickled"])
    assert all(counts == sorted(counts) and len(set(counts)) == len(counts) for counts in by_pid.values())
    assert max(v.evidence["unpickled"] for v in verdicts) > 1


@pytest.mark.parametrize("mode", MODES)
def test_failures_in_the_worker_become_the_same_invalid_verdicts_as_in_the_process_pool(ray_cluster, mode):
    verifier = CountingFakeVerifier(decide=decide_in_worker, fault=fault_from_payload)
    claims = [Claim("a", payload={"i": 1, "fault": Fault.EXCEPTION.value}),
              Claim("b", payload={"i": 2, "fault": Fault.TRANSIENT.value}),
              Claim("c", payload={"i": 3, "fault": Fault.GARBAGE.value}),
              Claim("d", payload={"i": 4})]
    with ray_runtime(verifier, mode, retries=1, backoff_base_s=0.001, backoff_max_s=0.001, batch_size=4) as runtime:
        verdicts = runtime.verify_many_sync(claims)
    assert [v.error_kind for v in verdicts] == [ErrorKind.CRASH, ErrorKind.OUTAGE, ErrorKind.MALFORMED, None]
    assert "injected crash" in verdicts[0].reason and "injected transient" in verdicts[1].reason
    assert verdicts[3].certified


@pytest.mark.parametrize("mode", [pytest.param("actors", marks=pytest.mark.slow), "tasks"])
def test_a_hung_call_is_timed_out_and_its_worker_killed(ray_cluster, mode):
    import ray

    verifier = CountingFakeVerifier(decide=decide_in_worker, fault=fault_from_payload)
    # Longer than TIMEOUT_S: the call after the kill pays a new worker's start-up on a loaded machine.
    timeout_s = 6.0
    with ray_runtime(verifier, mode, max_concurrency=1, batch_size=1, timeout_s=timeout_s) as runtime:
        [warm] = runtime.verify_many_sync(make_claims(1))
        assert warm.certified
        start = time.perf_counter()
        [hung] = runtime.verify_many_sync([Claim("h", payload={"i": 1, "fault": Fault.HANG.value})])
        assert hung.error_kind is ErrorKind.TIMEOUT and "timeout_s=6" in hung.reason
        assert time.perf_counter() - start < timeout_s + CUT_OFF_S  # a hang never ends
        if mode == "actors":
            assert wait_until(lambda: not pid_alive(warm.evidence["pid"]))  # the actor was killed
        # The hung call's CPU is free again: the worker running it is gone, not left hanging.
        assert wait_until(lambda: ray.available_resources().get("CPU", 0) >= 1)
        [after] = runtime.verify_many_sync(make_claims(1, start=2))
        assert after.certified


@pytest.mark.slow
def test_an_actor_lost_mid_call_is_a_transient_outage_never_a_score(ray_cluster):
    import ray

    verifier = CountingFakeVerifier(decide=decide_in_worker, fault=fault_from_payload, latency_s=2.0)
    with ray_runtime(verifier, "actors", max_concurrency=1, batch_size=1, timeout_s=30.0) as runtime:
        executor = runtime.executor
        runtime.verify_many_sync(make_claims(1, start=50))  # one warm actor

        def kill_the_actor():
            time.sleep(0.7)
            for actor in list(executor._pool._actors):
                ray.kill(actor.handle, no_restart=True)

        killer = threading.Thread(target=kill_the_actor)
        killer.start()
        [lost] = runtime.verify_many_sync(make_claims(1))
        killer.join()
        assert lost.invalid and lost.error_kind is ErrorKind.OUTAGE and lost.error_kind.transient
        assert "Ray actor lost" in lost.reason
        assert runtime.verify_many_sync(make_claims(1, start=7))[0].certified  # a replacement serves


@pytest.mark.slow
def test_killing_a_node_mid_run_loses_nothing_and_scores_nothing_from_it(ray_cluster):
    import ray

    doomed = ray_cluster.add_node("doomed", 1, {"doomed_node": 1})
    try:
        ray_cluster.wait_for_resource("doomed_node", present=True)
        node_id = next(n["NodeID"] for n in ray.nodes() if n["Alive"] and "doomed_node" in n["Resources"])
        verifier = FakeVerifier(decide=decide_in_worker, latency_s=0.5)
        claims = make_claims(24)
        config = dict(max_concurrency=3, batch_size=1, timeout_s=20.0, retries=3, backoff_base_s=0.05)
        with ray_runtime(verifier, "actors", **config) as runtime:
            executor = runtime.executor
            runtime.verify_many_sync(make_claims(3, start=100))  # starts three actors, one per node (SPREAD)
            assert wait_until(lambda: node_id in executor.nodes_used(), 60)
            killer = threading.Timer(1.2, doomed.kill)
            killer.start()
            verdicts = runtime.verify_many_sync(claims)
            killer.join()
            metrics = runtime.last_batch_metrics()
        assert [v.decision for v in verdicts] == [c.decision for c in claims]
        assert all(v.certified for v in verdicts)  # every item answered by a live node
        assert metrics.retries >= 1 and metrics.invalid == 0
    finally:
        doomed.kill()
