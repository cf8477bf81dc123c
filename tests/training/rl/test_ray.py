"""``proofgym train --ray ADDRESS`` / ``[compute] ray_address``: the trainer's rollouts on a real two-node local Ray
cluster, each actor with a task app of its own, every session in the run's one trace store."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.config import ConfigError
from proofgym.traces import TraceStore

from _ray_cluster import ray_cluster  # noqa: F401  (the session fixture)

from ._run import tiny_config

runner = CliRunner()


def test_the_ray_address_is_checked_and_needs_a_local_environment(tmp_path):
    config = tiny_config(tmp_path / "run")
    assert config.compute is None and config.on_ray("auto").compute.ray_address == "auto"
    with pytest.raises(ConfigError, match=r"--ray: compute.ray_address: expected 'auto'"):
        config.on_ray("not an address")
    remote = tiny_config(tmp_path / "run", services={"task_url": "http://127.0.0.1:9"})
    with pytest.raises(ConfigError, match="services.task_url must be local:ENV"):
        remote.on_ray("auto")
    # The hosted trainer's GPU keys beside the Ray ones are recorded, the Ray ones are not "no effect".
    data = config.model_dump(exclude_unset=True) | {"compute": {"ray_address": "auto", "gpu_type": "H100"}}
    notes = type(config).model_validate(data).machine_notes()
    assert len(notes) == 1 and "compute.gpu_type" in notes[0] and "ray_address" not in notes[0]


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
    config = tiny_config(output, training={"iterations_per_epoch": 1, "batch_size": 2, "group_size": 2},
                         rollout={"max_concurrent_rollouts": 4}).on_ray(ray_cluster.address)
    notes: list[str] = []
    result = RLTrainer(config, on_note=notes.append).run()
    assert result.iterations == 1
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
    assert not (output / "task_app.log").exists()  # no local task app: the actors served the environment
