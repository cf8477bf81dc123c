"""A real GRPOTrainer run (TRL 1.16) on proofgym's tiny model: the reward path, metrics and None handling."""

import math

import pytest

pytest.importorskip("trl")

from transformers import TrainerCallback  # noqa: E402

from proofgym.config import parse_run_config  # noqa: E402
from proofgym.training import build_grpo_trainer, trl_reward_function  # noqa: E402
from proofgym.training.trl._run import domain_rows  # noqa: E402

from integrations._support import scripted_reward_function  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")


def _run_config(tmp_path, **grpo):
    return parse_run_config({
        "name": "grant_tiny",
        "parser": {"kind": "json_block", "decisions": ["permit", "deny"], "require_facts": True},
        "verifier": {"kind": "rulebook", "domain": "grant_eligibility"},
        "training": {"model": "proofgym:tiny", "dataset": {"domain": "grant_eligibility", "prompt_format": "record"},
                  "grpo": {"group_size": 4, "batch_size": 4, "steps": 2, "learning_rate": 1e-2,
                           "max_completion_length": 24, **grpo},
                  "output_dir": str(tmp_path)},
    })


class _Logs(TrainerCallback):
    def __init__(self):
        self.logs = []

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "reward" in logs:
            self.logs.append(dict(logs))


def test_two_grpo_steps_through_the_real_reward_path_log_the_verification_metrics(tiny, tmp_path):
    model, tokenizer = tiny
    run = _run_config(tmp_path)
    rows = domain_rows("grant_eligibility", 0, 32, "record", chat=False)
    calls = []
    reward = trl_reward_function(run)
    original = reward.reward_fn.score

    def spy(prompts, completions, refs):
        calls.append(refs)
        return original(prompts, completions, refs)

    reward.reward_fn.score = spy
    logs = _Logs()
    trainer = build_grpo_trainer(run, model, rows, tokenizer=tokenizer, reward_fn=reward, callbacks=[logs],
                                 config_overrides={"disable_tqdm": True})
    try:
        trainer.train()
    finally:
        reward.close()
    assert trainer.state.global_step == 2
    assert len(logs.logs) == 2
    for log in logs.logs:
        assert log["rewards/grant_tiny/mean"] == pytest.approx(log["proofgym/reward_mean"])
        for key in ("proofgym/certified_share", "proofgym/invalid_share", "proofgym/outcome/format_error",
                    "proofgym/runtime/claims", "proofgym/runtime/verify_wall_s"):
            assert key in log
    # TRL handed over the dataset's reference columns with every completion (4 prompts x 4 samples).
    assert len(calls) == 2 and all(len(refs) == 16 for refs in calls)
    assert {ref["gold"] for refs in calls for ref in refs} <= {"permit", "deny"}
    assert all(isinstance(ref["source_facts"], dict) for refs in calls for ref in refs)


def test_invalid_verifications_abstain_in_trl_and_the_policy_still_learns_with_the_async_variant(tiny, tmp_path):
    import torch

    model, tokenizer = tiny
    run = _run_config(tmp_path, group_size=8, batch_size=2)
    reward_fn, verifier = scripted_reward_function(invalid_every=3)
    reward = trl_reward_function(reward_fn, asynchronous=True)  # TRL awaits it on its own event loop
    rows = [{"prompt": text} for text in ("The applicant is 30.", "The applicant is 17.", "Income 5000.",
                                          "No grant.")]
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    logs = _Logs()
    trainer = build_grpo_trainer(run, model, rows, tokenizer=tokenizer, reward_fn=reward, callbacks=[logs],
                                 config_overrides={"disable_tqdm": True, "temperature": 1.5})
    assert trainer._has_async_funcs
    try:
        trainer.train()
    finally:
        reward_fn.close()
    assert verifier.claims_verified > 0
    invalid_seen = [log["proofgym/invalid_share"] for log in logs.logs]
    assert any(share > 0 for share in invalid_seen), "the scripted verifier made no verification invalid"
    for log in logs.logs:
        # TRL's reward mean leaves the abstained completions out, as proofgym's own mean does.
        assert math.isfinite(log["reward"])
        assert log["reward"] == pytest.approx(log["proofgym/reward_mean"], abs=1e-5)
    changed = [name for name, p in model.named_parameters() if not torch.equal(p.detach(), before[name])]
    assert changed, "two GRPO steps with a reward spread left every parameter unchanged"
