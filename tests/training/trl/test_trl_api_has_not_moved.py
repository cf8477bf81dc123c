"""Fails loudly when the installed TRL no longer has what the adapter relies on (tested against TRL 1.16.0)."""

import inspect

import pytest

trl = pytest.importorskip("trl")
pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")

from trl import GRPOConfig, GRPOTrainer  # noqa: E402

from proofgym.config import parse_run_config  # noqa: E402
from proofgym.training import grpo_config_kwargs, lora_config  # noqa: E402
from proofgym.training.trl._adapter import GRPO_CONFIG_FIELDS  # noqa: E402


def test_the_pinned_versions_are_installed():
    import peft
    import transformers

    assert trl.__version__ == "1.16.0", "the TRL adapter is tested with trl 1.16.0 (pinned in the 'train' extra)"
    assert transformers.__version__ == "5.24.0"
    assert peft.__version__ == "0.21.2"


def test_every_grpo_config_field_the_builder_sets_still_exists():
    missing = sorted(set(GRPO_CONFIG_FIELDS) - set(GRPOConfig.__dataclass_fields__))
    assert not missing, f"GRPOConfig lost fields the adapter sets: {missing}"


def test_grpo_trainer_still_takes_the_arguments_the_builder_passes():
    parameters = inspect.signature(GRPOTrainer.__init__).parameters
    for name in ("model", "reward_funcs", "args", "train_dataset", "processing_class", "callbacks", "peft_config",
                 "environment_factory", "rollout_func"):
        assert name in parameters, f"GRPOTrainer.__init__ lost {name!r}"


def test_reward_functions_are_still_called_with_the_metric_hooks_and_none_still_abstains():
    source = inspect.getsource(GRPOTrainer._calculate_rewards)
    # The calling convention: keyword prompts/completions/completion_ids plus every dataset column, and the hooks.
    assert "prompts=prompts, completions=completions, completion_ids=completion_ids_list, **reward_kwargs" in source
    assert 'reward_kwargs["log_metric"] = self._log_metric' in source
    assert 'reward_kwargs["log_extra"] = self._log_completion_extra' in source
    assert 'reward_kwargs["environments"] = self.environments' in source
    # None becomes NaN, which the advantage computation leaves out.
    assert "torch.nan" in source
    assert "nanmean" in inspect.getsource(GRPOTrainer._generate_and_score_completions)


def test_the_cpu_config_is_accepted_and_means_what_the_builder_intends():
    run = parse_run_config({
        "verifier": {"kind": "rulebook", "domain": "grant_eligibility"},
        "training": {"model": "proofgym:tiny", "dataset": {"domain": "grant_eligibility"},
                  "grpo": {"group_size": 4, "batch_size": 3, "steps": 7, "learning_rate": 3e-4,
                           "max_completion_length": 40, "kl_beta": 0.02},
                  "lora": {"r": 8, "alpha": 16, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]},
                  "save_every": 5, "output_dir": "out"},
    })
    config = GRPOConfig(**grpo_config_kwargs(run.training, cuda=False))
    # 3 prompts x 4 completions, generated once per optimisation step.
    assert config.per_device_train_batch_size == 12
    assert config.generation_batch_size == 12
    assert config.num_generations == 4 and config.steps_per_generation == 1
    assert config.max_steps == 7 and config.learning_rate == 3e-4 and config.beta == 0.02
    assert config.max_completion_length == 40
    assert not config.bf16 and not config.fp16 and not config.gradient_checkpointing and not config.use_vllm
    assert config.save_strategy == "steps" and config.save_steps == 5
    assert config.remove_unused_columns is False and config.logging_steps == 1
    lora = lora_config(run.training)
    assert (lora.r, lora.lora_alpha, lora.lora_dropout) == (8, 16, 0.0)
    assert set(lora.target_modules) == {"q_proj", "v_proj"} and lora.task_type == "CAUSAL_LM"


def test_gpu_only_settings_are_refused_on_cpu():
    run = parse_run_config({"verifier": {"kind": "rulebook", "domain": "grant_eligibility"},
                            "training": {"model": "m", "dataset": {"domain": "grant_eligibility"}, "use_vllm": True}})
    with pytest.raises(ValueError, match="use_vllm: true needs a CUDA GPU"):
        grpo_config_kwargs(run.training, cuda=False)
    auto = run.training.model_copy(update={"use_vllm": "auto"})
    assert grpo_config_kwargs(auto, cuda=False)["use_vllm"] is False
    assert grpo_config_kwargs(auto, cuda=True, vllm_available=True)["use_vllm"] is True
    assert grpo_config_kwargs(auto, cuda=True, vllm_available=False)["use_vllm"] is False
