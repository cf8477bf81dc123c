"""``proofgym eval --ray ADDRESS``: rollouts as Ray actors over a real two-node local cluster, traces in one store."""

from __future__ import annotations

import json
import threading

import pytest
from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.evaluation import ComputeSection, EvaluationSection, load_eval_config, run_eval
from proofgym.traces import TraceStore

from _ray_cluster import ray_cluster  # noqa: F401  (the session fixture)
from traces.conftest import postgres_server  # noqa: F401  (a throwaway local Postgres, or skip)

from ._support import write_eval_toml

runner = CliRunner()
SEEDS = 12


def grant_eval(path, traces, seeds=f"0-{SEEDS - 1}", concurrency=2):
    return write_eval_toml(path, {"env_name": "grant_eligibility", "policy_name": "oracle", "seeds": seeds,
                                  "concurrency": concurrency, "traces": str(traces)}, env_config={"chat": True})


def outcomes(results):
    return [(r["seed"], r["status"], r["outcome_score"], r["total_return"], r["task_id"]) for r in results]


def test_compute_and_ray_addresses_are_validated(tmp_path):
    config = grant_eval(tmp_path / "e.toml", tmp_path / "t.db")
    result = runner.invoke(app, ["eval", "--config", str(config), "--ray", "not an address"])
    assert result.exit_code == 2 and "--ray" in result.output and "host:port" in result.output
    config.write_text(config.read_text() + '\n[compute]\nray_address = "http://x"\n')
    result = runner.invoke(app, ["eval", "--config", str(config)])
    assert result.exit_code == 2 and "compute.ray_address" in result.output
    assert ComputeSection(ray_address="auto").num_cpus == 1.0


def test_an_eval_on_ray_spreads_over_both_nodes_and_matches_in_process(tmp_path, ray_cluster):
    here = grant_eval(tmp_path / "here.toml", tmp_path / "here.db")
    assert runner.invoke(app, ["eval", "--config", str(here), "--json-out", str(tmp_path / "here.json")]).exit_code == 0
    there = grant_eval(tmp_path / "there.toml", tmp_path / "there.db")
    result = runner.invoke(app, ["eval", "--config", str(there), "--ray", ray_cluster.address,
                                 "--json-out", str(tmp_path / "there.json")])
    assert result.exit_code == 0, result.output
    assert f"on the Ray cluster at {ray_cluster.address}" in " ".join(result.output.split())
    expected = json.loads((tmp_path / "here.json").read_text())
    got = json.loads((tmp_path / "there.json").read_text())
    assert got["mode"] == "ray" and got["summary"]["pass_rate"] == 1.0
    assert outcomes(got["results"]) == outcomes(expected["results"])
    with TraceStore(tmp_path / "there.db", create=False) as store:  # SQLite: the driver is the one writer
        sessions = list(store.iter_sessions())
    assert len(sessions) == SEEDS
    assert len({s.metadata["ray_node"] for s in sessions}) == 2  # both nodes rolled out


def test_both_nodes_write_their_traces_to_postgres(tmp_path, ray_cluster, postgres_server):
    # Built here, not read from a file: config files refuse URLs with a user name in them.
    config = EvaluationSection(env_name="grant_eligibility", policy_name="oracle", seeds=list(range(SEEDS)),
                               concurrency=2, traces=postgres_server, env_config={"chat": True})
    compute = ComputeSection(ray_address=ray_cluster.address, workers=2)
    report = run_eval(config, compute=compute)
    assert report.ok == SEEDS and report.summary()["pass_rate"] == 1.0
    with TraceStore(postgres_server) as store:
        sessions = list(store.iter_sessions(run_id=report.run_id))
        [run] = [r for r in store.list_runs() if r.run_id == report.run_id]
    assert sorted(s.seed for s in sessions) == list(range(SEEDS))  # each once: no copy from the driver
    assert len({s.metadata["ray_node"] for s in sessions}) == 2
    assert run.status == "ok" and run.n_sessions == SEEDS


@pytest.mark.slow
def test_killing_a_node_mid_eval_loses_no_rollout_and_stores_none_twice(tmp_path, ray_cluster):
    import ray

    doomed = ray_cluster.add_node("doomed-eval", 1, {"doomed_eval_node": 1})
    try:
        node_id = next(n["NodeID"] for n in ray.nodes() if n["Alive"] and "doomed_eval_node" in n["Resources"])
        seeds = 120
        config = load_eval_config(grant_eval(tmp_path / "e.toml", tmp_path / "t.db", seeds=f"0-{seeds - 1}",
                                             concurrency=3))
        seen: list[int] = []
        killed = threading.Event()

        def on_result(result):
            seen.append(result.seed)
            if len(seen) == 20 and not killed.is_set():
                killed.set()
                threading.Thread(target=doomed.kill).start()

        report = run_eval(config, compute=ComputeSection(ray_address=ray_cluster.address, workers=3),
                          on_result=on_result)
        assert killed.is_set()
        assert report.ok == seeds and report.failed == 0 and report.summary()["pass_rate"] == 1.0
        with TraceStore(tmp_path / "t.db", create=False) as store:
            sessions = list(store.iter_sessions())
        assert sorted(s.seed for s in sessions) == list(range(seeds))
        assert node_id in {s.metadata["ray_node"] for s in sessions}  # the node did work before it died
    finally:
        doomed.kill()


def test_custom_resources_place_every_actor_on_the_nodes_that_declare_them(tmp_path, ray_cluster):
    import ray

    second = next(n["NodeID"] for n in ray.nodes() if n["Alive"] and "second_node" in n["Resources"])
    config = load_eval_config(grant_eval(tmp_path / "e.toml", tmp_path / "t.db", seeds="0-5"))
    compute = ComputeSection(ray_address=ray_cluster.address, resources={"second_node": 0.5}, num_cpus=0.5)
    report = run_eval(config, compute=compute)
    assert report.ok == 6
    with TraceStore(tmp_path / "t.db", create=False) as store:
        assert {s.metadata["ray_node"] for s in store.iter_sessions()} == {second}
