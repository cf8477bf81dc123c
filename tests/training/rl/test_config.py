"""The RL config: the reference's files read as written, unknown keys named, machine keys recorded once."""

from __future__ import annotations

from pathlib import Path

import pytest

from proofgym.config import ConfigError
from proofgym.training.rl import is_rl_config, load_rl_config, parse_rl_config

FIXTURES = Path(__file__).parent / "fixtures"
CONFIGS = Path(__file__).parents[3] / "configs"


def _minimal(**sections):
    data = {"services": {"task_url": "local:fact_finding"}, "model": {"base": "proofgym:tiny"},
            "rollout": {"env_name": "fact_finding"}}
    for key, value in sections.items():
        data.setdefault(key, {}).update(value)
    return data


@pytest.mark.parametrize("name", ["verilog_rl_lora.toml", "crafter_rl_stepwise_hosted_judge.toml"])
def test_reference_configs_are_accepted_as_written(name):
    config = load_rl_config(FIXTURES / name)
    assert config.algorithm.variety == "gspo"
    assert config.training.group_size == 4 and config.training.weight_sync_interval == 1
    assert config.step_rewards_enabled and config.rollout.step_rewards.mode == "decision_stepwise"
    assert set(config.rubric_levels()) == {"event", "outcome"}
    assert config.concurrency == min(config.rollout.max_concurrent_rollouts, config.training.async_semaphore_max)


def test_blend_weights_come_from_rubric_weights_or_judge_reward_blend():
    verilog = load_rl_config(FIXTURES / "verilog_rl_lora.toml")
    crafter = load_rl_config(FIXTURES / "crafter_rl_stepwise_hosted_judge.toml")
    assert (verilog.blend_weights.env, verilog.blend_weights.event, verilog.blend_weights.outcome) == (0.3, 0.3, 0.4)
    assert (crafter.blend_weights.env, crafter.blend_weights.event, crafter.blend_weights.outcome) == (0.2, 0.4, 0.4)


def test_machine_keys_are_recorded_in_one_line():
    notes = load_rl_config(FIXTURES / "verilog_rl_lora.toml").machine_notes()
    assert len(notes) == 1
    for key in ("compute.gpu_count", "topology.gpus_for_vllm", "vllm.max_model_len", "reference.placement",
                "training.weight_sync.targets", "judge.options.weights"):
        assert key in notes[0]
    assert parse_rl_config(_minimal()).machine_notes() == []


@pytest.mark.parametrize("section,key", [("training", "group_sise"), ("rollout", "max_turn"), ("lora", "rank"),
                                         ("algorithm", "varity"), ("rubric", "wieghts")])
def test_unknown_key_is_named(section, key):
    with pytest.raises(ConfigError) as error:
        parse_rl_config(_minimal(**{section: {key: 1}}), source="rl.toml")
    assert f"{section}.{key}" in str(error.value) and "rl.toml" in str(error.value)


@pytest.mark.parametrize("sections,where", [
    ({"training": {"group_size": 1}}, "training.group_size"),
    ({"training": {"learning_rate": -1}}, "training.learning_rate"),
    ({"training": {"updates_per_batch": 0}}, "training.updates_per_batch"),
    ({"algorithm": {"variety": "ppo"}}, "algorithm.variety"),
    ({"services": {"task_url": "ftp://x"}}, "services.task_url"),
    ({"services": {"task_url": "local:"}}, "services.task_url"),
    ({"evaluation": {"seeds": [1, 1]}}, "evaluation.seeds"),
    ({"model": {"trainer_mode": "qlora"}}, "model.trainer_mode"),
    ({"rollout": {"ops": ["agent", "judge"]}}, "rollout.ops"),
    ({"evaluation": {"stop_at": 1.5}}, "evaluation.stop_at"),
    ({"training": {"lr_warmup_iterations": -1}}, "training.lr_warmup_iterations"),
    ({"training": {"overlap_rollouts": "yes please"}}, "training.overlap_rollouts"),
    ({"training": {"cpu_threads": 0}}, "training.cpu_threads"),
])
def test_bad_values_are_named(sections, where):
    with pytest.raises(ConfigError) as error:
        parse_rl_config(_minimal(**sections))
    assert where in str(error.value)


def test_training_seeds_may_not_overlap_evaluation_seeds():
    with pytest.raises(ConfigError, match="held-out"):
        parse_rl_config(_minimal(training={"train_seeds": [3, 4]}, evaluation={"seeds": [4, 5]}))


def test_model_base_or_source_exactly_one():
    with pytest.raises(ConfigError, match="exactly one"):
        parse_rl_config(_minimal(model={"source": "x"}))


def test_task_url_local_names_the_environment():
    config = parse_rl_config(_minimal())
    assert config.services.local_env == "fact_finding"
    assert parse_rl_config(_minimal(services={"task_url": "http://h:1"})).services.local_env is None


def test_shipped_rl_configs_parse_and_are_dispatched_to_the_rl_trainer():
    for path in sorted((CONFIGS / "rl").glob("*.toml")):
        load_rl_config(path)
        assert is_rl_config(path)
    assert not is_rl_config(CONFIGS / "run" / "train_grant_tiny.yaml")


def test_a_registered_rubric_set_is_blended_with_the_files_weights():
    from proofgym.training.rl import RLTrainer

    blended = RLTrainer(parse_rl_config(_minimal(rubric={"enabled": True, "set": "fact_finding",
                                                          "weights": {"env": 0.0, "event": 0.0, "outcome": 1.0}})))
    assert blended._rubrics().weights.model_dump() == {"env": 0.0, "event": 0.0, "outcome": 1.0}
    own = RLTrainer(parse_rl_config(_minimal(rubric={"enabled": True, "set": "fact_finding"})))
    assert own._rubrics().weights.model_dump() == {"env": 0.0, "event": 0.2, "outcome": 1.0}  # the set's blend
