"""The training: section of a run config: defaults, validation errors naming the key, shipped configs."""

from pathlib import Path

import pytest

from proofgym.config import TINY_MODEL, ConfigError, load_run_config, parse_run_config

ROOT = Path(__file__).resolve().parents[2]
VERIFIER = {"kind": "rulebook", "domain": "grant_eligibility"}


def _train(**train):
    return parse_run_config({"verifier": VERIFIER, "training": {"model": "m", "dataset": {"domain": "loan"}, **train}})


def test_a_run_config_without_train_section_still_loads():
    assert parse_run_config({"verifier": VERIFIER}).training is None


def test_defaults_are_a_complete_grpo_setup():
    train = _train().training
    assert (train.grpo.group_size, train.grpo.batch_size, train.grpo.kl_beta) == (8, 16, 0.0)
    assert train.lora is None and train.warmup is None and train.use_vllm == "auto"
    assert train.heldout.n == 128 and train.heldout.seed != train.dataset.seed
    assert not train.is_tiny and _train(model=TINY_MODEL).training.is_tiny


@pytest.mark.parametrize("train, message", [
    ({"grpo": {"group_size": 1}}, "training.grpo.group_size: Input should be greater than or equal to 2"),
    ({"grpo": {"lr": 1e-5}}, "training.grpo.lr: unknown key"),
    ({"lora": {"r": 0}}, "training.lora.r: Input should be greater than or equal to 1"),
    ({"lora": {"target_modules": []}}, "training.lora.target_modules: must name at least one module"),
    ({"dataset": {}}, "training.dataset: give exactly one of 'domain'"),
    ({"dataset": {"domain": "loan", "file": "x.jsonl"}}, "training.dataset: give exactly one of"),
    ({"dataset": {"domain": "loan", "prompt_format": "xml"}}, "training.dataset.prompt_format: Input should be"),
    ({"heldout": {"seed": 0}}, "heldout.seed (0) must differ from dataset.seed"),
    ({"dataset": {"file": "rows.jsonl"}}, "the training data is a file, so give heldout.domain or heldout.file"),
    ({"use_vllm": "sometimes"}, "training.use_vllm"),
    ({"model": "  "}, "training.model: must not be blank"),
    ({"precision": "fp8"}, "training.precision: Input should be"),
    ({"dataset": {"domain": "loan", "prompt_format": "compact"}},
     "training.dataset: prompt_format: compact is the demo's prompt, for domain 'grant_eligibility' only"),
    ({"grpo": {"min_lr_ratio": 1.5}}, "training.grpo.min_lr_ratio: Input should be less than or equal to 1"),
    ({"grpo": {"updates_per_generation": 0}}, "training.grpo.updates_per_generation: Input should be greater than"),
    ({"grpo": {"max_sampling_rounds": 0}}, "training.grpo.max_sampling_rounds: Input should be greater than"),
    ({"grpo": {"scale_partial_batches": True}}, "training.grpo: scale_partial_batches: true needs dynamic_sampling"),
    ({"grpo": {"explore_temperature": 2.0}}, "training: grpo.explore_temperature needs a curriculum"),
    ({"grpo": {"explore_temperature": 0.5}},
     "training.grpo.explore_temperature: Input should be greater than or equal"),
    ({"curriculum": {"replay": 1.0}}, "training.curriculum.replay: Input should be less than 1"),
    ({"curriculum": {"mix": -0.1}}, "training.curriculum.mix: Input should be greater than or equal to 0"),
    ({"curriculum": {"keys": "cell"}}, "training.curriculum.keys: unknown key"),
    ({"average_decay": 1.0}, "training.average_decay: Input should be less than 1"),
])
def test_invalid_train_sections_are_refused_with_the_key_path(train, message):
    with pytest.raises(ConfigError) as info:
        _train(**train)
    assert message in str(info.value)


def test_a_file_dataset_with_held_out_rows_from_a_domain_is_fine():
    train = _train(dataset={"file": "rows.jsonl"}, heldout={"domain": "loan", "seed": 0}).training
    assert train.dataset.file == "rows.jsonl" and train.heldout.domain == "loan"
    assert _train(dataset={"file": "rows.jsonl"}, heldout={"n": 0}).training.heldout.n == 0


def test_the_compact_prompt_format_holds_out_the_demos_rows_by_default():
    from proofgym.training._demo import HELDOUT_SEED

    compact = _train(dataset={"domain": "grant_eligibility", "prompt_format": "compact"}).training
    assert (compact.heldout.n, compact.heldout.seed) == (1000, HELDOUT_SEED)
    chosen = _train(dataset={"domain": "grant_eligibility", "prompt_format": "compact"},
                    heldout={"n": 50}).training.heldout
    assert (chosen.n, chosen.seed) == (50, HELDOUT_SEED)
    assert (_train().training.heldout.n, _train().training.heldout.seed) == (128, 1)


def test_curriculum_defaults_and_the_new_grpo_keys():
    train = _train(curriculum={"key": "cell", "replay": 0.25}).training
    assert (train.curriculum.key, train.curriculum.mix, train.curriculum.replay) == ("cell", 0.5, 0.25)
    assert _train().training.curriculum is None
    grpo = _train().training.grpo
    assert (grpo.min_lr_ratio, grpo.updates_per_generation, grpo.dynamic_sampling) == (0.0, 1, False)


@pytest.mark.parametrize("name", ["train_grant_tiny.yaml", "train_qwen_gpu.yaml"])
def test_the_shipped_training_configs_load(name):
    run = load_run_config(ROOT / "configs" / "run" / name)
    assert run.training is not None and run.training.dataset.domain == "grant_eligibility"
    assert run.training.heldout.n > 0


def test_the_tiny_config_needs_nothing_from_a_hub_and_the_gpu_config_uses_lora():
    tiny = load_run_config(ROOT / "configs" / "run" / "train_grant_tiny.yaml").training
    gpu = load_run_config(ROOT / "configs" / "run" / "train_qwen_gpu.yaml").training
    assert tiny.is_tiny and tiny.use_vllm is False and tiny.warmup is not None
    # The demo's task and held-out rows, and what made the compact loop learn it.
    assert tiny.dataset.prompt_format == "compact" and (tiny.heldout.n, tiny.heldout.seed) == (1000, 1_000_000)
    assert tiny.curriculum is not None and tiny.curriculum.key == "cell" and tiny.grpo.dynamic_sampling
    assert gpu.model == "Qwen/Qwen2.5-0.5B-Instruct" and gpu.lora is not None and gpu.use_vllm == "auto"


def test_top_k_and_replay_weighting_are_read_and_checked():
    from proofgym.config._train import CurriculumSection, GRPOSection

    assert GRPOSection().top_k == 0  # TRL's default: the whole vocabulary
    assert GRPOSection(top_k=50).top_k == 50
    with pytest.raises(ValueError, match="top_k"):
        GRPOSection(top_k=-1)
    assert CurriculumSection().replay_weighting == "disagreement"
    with pytest.raises(ValueError, match="replay_weighting"):
        CurriculumSection(replay_weighting="loud")
    tiny = load_run_config(ROOT / "configs" / "run" / "train_grant_tiny.yaml").training
    assert tiny.grpo.top_k == 50 and tiny.curriculum.replay_weighting == "error"


def test_the_tiny_models_shape_is_read_checked_and_only_for_the_tiny_model():
    from proofgym.config._train import TinyModelSection, TrainingSection

    tiny = load_run_config(ROOT / "configs" / "run" / "train_grant_tiny.yaml").training
    assert tiny.tiny_model == TinyModelSection(hidden_size=128, num_layers=3, intermediate_size=384)
    assert tiny.dataset.contrast is True
    with pytest.raises(ValueError, match="multiple of num_heads"):
        TinyModelSection(hidden_size=130)
    with pytest.raises(ValueError, match="hidden_size"):
        TinyModelSection(hidden_size=0)
    base = {"model": "Qwen/Qwen2.5-0.5B-Instruct", "dataset": {"domain": "grant_eligibility"},
            "tiny_model": {"hidden_size": 128}}
    with pytest.raises(ValueError, match="tiny_model shapes proofgym:tiny"):
        TrainingSection(**base)
