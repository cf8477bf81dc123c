"""The GPU path of `proofgym train` (skipped without CUDA): bf16, LoRA, vLLM when installed, a real model."""

import math
import os
from pathlib import Path

import pytest
import yaml

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
    pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning"),
]

ROOT = Path(__file__).resolve().parents[2]


def _local_model() -> str | None:
    """A local copy of the GPU config's model: PROOFGYM_GPU_MODEL, or the Hugging Face cache."""
    explicit = os.environ.get("PROOFGYM_GPU_MODEL")
    if explicit:
        return explicit
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download("Qwen/Qwen2.5-0.5B-Instruct", local_files_only=True)
    except Exception:  # noqa: BLE001 - not cached (and no network): the test is skipped
        return None


def _config(tmp_path, model, **train):
    data = yaml.safe_load((ROOT / "configs" / "run" / "train_qwen_gpu.yaml").read_text())
    data["training"].update(model=model, output_dir=str(tmp_path / "out"), **train)
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_two_grpo_steps_of_the_tiny_model_on_the_gpu_in_bf16(tmp_path):
    from proofgym.config import load_run_config
    from proofgym.training import run_training

    data = yaml.safe_load((ROOT / "configs" / "run" / "train_grant_tiny.yaml").read_text())
    data["training"].update(model_cache_dir=str(tmp_path / "tiny"), output_dir=str(tmp_path / "out"),
                         warmup={"steps": 20, "batch_size": 32, "learning_rate": 1e-3}, heldout={"n": 16, "seed": 1},
                         use_vllm=False, cpu_threads=None)
    data["training"]["grpo"]["steps"] = 2
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(data))
    result = run_training(load_run_config(tmp_path / "run.yaml"))
    assert result.steps == 2 and math.isfinite(result.last_step["reward"])
    assert (result.final_model / "config.json").is_file()


def test_a_real_model_grpo_step_with_lora(tmp_path):
    from proofgym.config import load_run_config
    from proofgym.training import run_training

    model = _local_model()
    if model is None:
        pytest.skip("Qwen/Qwen2.5-0.5B-Instruct is not available locally (set PROOFGYM_GPU_MODEL)")
    config = _config(tmp_path, model, heldout={"n": 16, "seed": 1, "batch_size": 16}, save_every=0)
    data = yaml.safe_load(config.read_text())
    data["training"]["grpo"].update(steps=2, batch_size=4, group_size=4, max_completion_length=256)
    config.write_text(yaml.safe_dump(data))
    result = run_training(load_run_config(config))
    assert result.steps == 2
    assert math.isfinite(result.last_step["reward"]) and math.isfinite(result.last_step["loss"])
    assert (result.final_model / "adapter_config.json").is_file()  # LoRA: only the adapters are saved
    assert result.heldout_before is not None and result.heldout_after is not None
