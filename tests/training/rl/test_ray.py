"""``proofgym train --ray ADDRESS`` / ``[compute] ray_address``: the trainer's rollouts on a real two-node local Ray
cluster, each actor with a task app of its own, every session in the run's one trace store."""

from __future__ import annotations

import socket

import pytest
from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.config import ConfigError
from proofgym.traces import TraceStore
from proofgym.training.rl import parse_rl_config

from _ray_cluster import ray_cluster  # noqa: F401  (the session fixture)

from ._run import tiny_config

runner = CliRunner()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_ray_address_is_checked_and_needs_a_local_environment(tmp_path):
    config = tiny_config(tmp_path / "run")
    assert config.compute is None and config.on_ray("auto").compute.ray_address == "auto"
    with pytest.raises(ConfigError, match=r"--ray: compute.ray_address: expected 'auto'"):
        config.on_ray("not an address")
    remote = tiny_config(tmp_path / "run", services={"task_url": "http://127.0.0.1:9"})
    with pytest.raises(ConfigError, match="services.task_url must be local:ENV"):
        remote.on_ray("auto")
    # The hosted trainer's GPU keys beside the Ray ones are recorded, the Ray ones are not "no effect".
    ray_keys = {"ray_address": "auto", "num_gpus": 1, "resources": {"x": 1}, "runtime_env": {"working_dir": "."},
                "policy_port": 8001, "task_app_ports": "20000-20003"}
    data = config.model_dump(exclude_unset=True) | {"compute": {**ray_keys, "gpu_type": "H100"}}
    parsed = type(config).model_validate(data)
    notes = parsed.machine_notes()
    assert len(notes) == 1 and "compute.gpu_type" in notes[0]
    assert not any(key in notes[0] for key in ray_keys)
    assert parsed.compute.task_app_port_range == range(20000, 20004) and parsed.compute.policy_port == 8001
    for key, bad in [("task_app_ports", "20003-20000"), ("task_app_ports", "8000"), ("policy_port", 70000),
                     ("runtime_env", {"working_dir": ".", "pip": ["a"], "uv": ["b"]})]:
        with pytest.raises(ConfigError, match=f"compute.{key}"):
            parse_rl_config(config.model_dump(exclude_unset=True) | {"compute": {"ray_address": "auto", key: bad}})


def test_the_command_names_a_bad_ray_address_and_refuses_it_for_trl_configs(tmp_path):
    toml = tmp_path / "rl.toml"
    toml.write_text('[services]\ntask_url = "local:fact_finding"\n[model]\nbase = "proofgym:tiny"\n'
                    '[rollout]\nenv_name = "fact_finding"\n', encoding="utf-8")
    result = runner.invoke(app, ["train", "--config", str(toml), "--ray", "no such address"])
    assert result.exit_code == 2 and "--ray: compute.ray_address" in " ".join(result.output.split())
    result = runner.invoke(app, ["train", "--config", "configs/run/train_grant_tiny.yaml", "--ray", "auto"])
    assert result.exit_code == 2 and "--ray is for RL configs" in result.output


def test_a_run_on_ray_rolls_out_on_both_nodes_and_stores_every_session_once(tmp_path, ray_cluster):
    pytest.importorskip("torch", reason="the RL trainer needs torch (pip install -e '.[train]')")
    from proofgym.training.rl import RLTrainer

    output = tmp_path / "run"
    policy_port, first = free_port(), free_port()
    config = tiny_config(output, training={"iterations_per_epoch": 1, "batch_size": 2, "group_size": 2},
                         rollout={"max_concurrent_rollouts": 4},
                         compute={"policy_port": policy_port, "task_app_ports": f"{first}-{first + 20}"},
                         ).on_ray(ray_cluster.address)
    notes: list[str] = []
    trainer = RLTrainer(config, on_note=notes.append)
    result = trainer.run()
    assert result.iterations == 1
    assert trainer.server.port == policy_port
    assert any("on the Ray cluster at" in line and "2 actors" in line for line in notes), notes
    with TraceStore(output / "traces.db", create=False) as store:
        sessions = list(store.iter_sessions())
        runs = store.list_runs(counts=False)
    # the driver stored the sessions under the trainer's run, which the run's end marked finished
    assert [(run.run_id, run.kind, run.status, run.ended_at is not None) for run in runs] == [("run", "rl", "ok", True)]
    # 1 iteration x 2 seeds x 2 rollouts, and 2 held-out rollouts before and after: each once, by the driver.
    assert len(sessions) == 2 * 2 + 2 + 2
    assert len({s.correlation_id for s in sessions}) == len(sessions)
    assert all(s.status == "ok" for s in sessions), [s.error for s in sessions]
    assert len({s.metadata["ray_node"] for s in sessions}) == 2  # both nodes rolled out
    assert {s.metadata["ray_task_app_port"] for s in sessions} <= set(range(first, first + 21))
    assert not (output / "task_app.log").exists()  # no local task app: the actors served the environment


def test_a_policy_port_that_is_taken_is_one_error_naming_the_key(tmp_path, ray_cluster):  # noqa: F811
    pytest.importorskip("torch", reason="the RL trainer needs torch (pip install -e '.[train]')")
    from proofgym.training.rl import RLError, RLTrainer

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = tiny_config(tmp_path / "run", compute={"policy_port": port}).on_ray(ray_cluster.address)
        with pytest.raises(RLError, match=rf"^compute.policy_port: cannot listen on 127.0.0.1, ports {port}-{port}:"):
            RLTrainer(config).run()
