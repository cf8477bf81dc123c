"""A Ray cluster as users run one: a node where proofgym is not installed gets it through ``[compute.runtime_env]``
(the working tree as ``working_dir``, the package with its entry points as ``py_modules``), and ``proofgym eval`` and
``proofgym train`` (2 RL iterations), each run as a command of its own, survive losing that node mid-run: every
seed's trace once, none lost, none twice.

The node is a third ``ray start`` on loopback, run by an interpreter whose packages are this venv's minus proofgym
(:func:`python_without_proofgym`), without the tests' import path; a Ray task on it shows that ``import proofgym``
fails there. The node is paused (SIGSTOP) as soon as it has stored a trace, so that a rollout is in flight on it,
then killed (SIGKILL of its process group), while the command still runs."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from proofgym.traces import TraceStore

from _ray_cluster import python_without_proofgym, ray_cluster  # noqa: F401  (the session fixture)
from training.rl._run import tiny_toml

from ._support import write_eval_toml

pytestmark = pytest.mark.slow  # two commands on a three-node cluster: about 2 CPU-minutes

REPO = Path(__file__).resolve().parents[2]
PROOFGYM = [sys.executable, "-c", "from proofgym.cli import main; main()"]


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory):
    return python_without_proofgym(tmp_path_factory.mktemp("bare-venv"))


@pytest.fixture
def bare_node(ray_cluster, bare_python):  # noqa: F811
    """A node without proofgym, started for one test (it is killed in it), and its Ray node id."""
    import ray

    node = ray_cluster.add_node("bare", 1, {"bare_node": 1}, python=bare_python)
    try:
        node_id = next(n["NodeID"] for n in ray.nodes() if n["Alive"] and "bare_node" in n["Resources"])

        @ray.remote(num_cpus=0, resources={"bare_node": 0.01})
        def probe():
            import importlib.util
            from importlib import metadata

            return (sys.executable, importlib.util.find_spec("proofgym") is None,
                    list(metadata.entry_points(group="proofgym.envs")))

        executable, missing, entry_points = ray.get(probe.remote(), timeout=120)
        assert executable == str(bare_python) and missing and entry_points == []  # no proofgym on that node
        yield node, node_id
    finally:
        node.kill()
        ray_cluster.wait_for_resource("bare_node", present=False)


def sessions_of(path: Path) -> list:
    try:
        with TraceStore(path, create=False) as store:
            return list(store.iter_sessions())
    except Exception:  # noqa: BLE001 - not created yet, or being written
        return []


def kill_once_it_served(node, node_id: str, traces: Path, command: subprocess.Popen, timeout_s: float = 600.0):
    """Pause the node once a trace it rolled out is stored, then kill it; asserts the command was still running."""
    deadline = time.monotonic() + timeout_s
    while not any(s.metadata.get("ray_node") == node_id for s in sessions_of(traces)):
        assert command.poll() is None, f"the command ended before the node served a rollout:\n{output(command)}"
        assert time.monotonic() < deadline, "the node without proofgym never served a rollout"
        time.sleep(0.1)
    node.pause()
    assert command.poll() is None, "the command ended before the node was lost"
    time.sleep(2.0)  # the driver sends it work that now hangs
    node.kill()


def output(command: subprocess.Popen) -> str:
    out, _ = command.communicate(timeout=600)
    return out


def start(args: list[str]) -> subprocess.Popen:
    # The auth settings of the cluster are in os.environ while the fixture's cluster runs.
    return subprocess.Popen([*PROOFGYM, *args], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def test_an_eval_ships_proofgym_to_a_bare_node_and_survives_losing_it(tmp_path, ray_cluster, bare_node):  # noqa: F811
    node, node_id = bare_node
    seeds = 300
    config = write_eval_toml(tmp_path / "e.toml", {"env_name": "grant_eligibility", "policy_name": "oracle",
                                                   "seeds": f"0-{seeds - 1}", "concurrency": 3,
                                                   "traces": str(tmp_path / "t.db")}, env_config={"chat": True})
    config.write_text(config.read_text() + f'\n[compute]\nray_address = "{ray_cluster.address}"\nworkers = 3\n'
                      f'\n[compute.runtime_env]\nworking_dir = "."\npy_modules = ["proofgym"]\n')
    command = start(["eval", "--config", str(config), "--json-out", str(tmp_path / "r.json")])
    kill_once_it_served(node, node_id, tmp_path / "t.db", command)
    out = output(command)
    assert command.returncode == 0, out
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["mode"] == "ray" and report["summary"]["pass_rate"] == 1.0
    assert sorted(r["seed"] for r in report["results"]) == list(range(seeds))
    assert all(r["status"] == "ok" for r in report["results"])
    sessions = sessions_of(tmp_path / "t.db")
    assert sorted(s.seed for s in sessions) == list(range(seeds))  # each once: none lost, none twice
    assert node_id in {s.metadata["ray_node"] for s in sessions}  # the bare node rolled out before it died


def test_two_rl_iterations_ship_proofgym_to_a_bare_node_and_survive_losing_it(tmp_path, ray_cluster,  # noqa: F811
                                                                               bare_node):
    pytest.importorskip("torch", reason="the RL trainer needs torch (pip install -e '.[train]')")
    node, node_id = bare_node
    config = tmp_path / "rl.toml"
    config.write_text(tiny_toml(rollout={"max_concurrent_rollouts": 4}, training={"batch_size": 4},
                                compute={"ray_address": ray_cluster.address, "workers": 3,
                                         "runtime_env": {"working_dir": ".", "py_modules": ["proofgym"]}}))
    output_dir = tmp_path / "run"
    command = start(["train", "--config", str(config), "--output-dir", str(output_dir)])
    kill_once_it_served(node, node_id, output_dir / "traces.db", command)
    out = output(command)
    assert command.returncode == 0, out
    sessions = sessions_of(output_dir / "traces.db")
    # 2 iterations x 4 seeds x 2 rollouts, and 2 held-out rollouts before and after: each once.
    assert len(sessions) == 2 * 4 * 2 + 2 + 2, out
    assert len({s.correlation_id for s in sessions}) == len(sessions)
    assert all(s.status == "ok" for s in sessions), [s.error for s in sessions]
    assert node_id in {s.metadata["ray_node"] for s in sessions}
