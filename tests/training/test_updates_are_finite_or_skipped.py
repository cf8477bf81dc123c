"""No update of the compact GRPO loop is ever non-finite or negative-KL: the KL estimate cannot round below 0, a
step with nothing scored takes no optimizer step, and a pass whose loss is not finite is skipped and counted."""

import math

import pytest

torch = pytest.importorskip("torch")

from proofgym.training import CompactGRPO, CompactGRPOConfig, clipped_loss, demo_rows, kl_k3  # noqa: E402
from proofgym.training import _grpo  # noqa: E402

from .test_grpo_smoke import ScriptedRewards  # noqa: E402

CONFIG = CompactGRPOConfig(prompts_per_step=2, group_size=4, max_new_tokens=12, learning_rate=1e-3, warmup_steps=0,
                           dynamic_sampling=False, beta=0.1, updates_per_generation=1)


@pytest.mark.parametrize("scale", [1e-8, 1e-7, 1e-6, 1e-5, 1e-3])
def test_the_kl_estimate_is_never_below_zero_when_the_policy_is_near_its_reference(scale):
    # A policy equal to its reference up to rounding (another kernel, another batch layout): exp(d) - d - 1 in
    # float32 came out at about -1e-9 on average here, and at -1.3e-10 on another processor.
    generator = torch.Generator().manual_seed(0)
    logp = -torch.rand(64, 32, generator=generator) * 5
    ref_logp = logp + torch.randn(64, 32, generator=generator) * scale
    assert bool((kl_k3(logp, ref_logp) >= 0).all())
    mask = torch.ones_like(logp)
    terms = clipped_loss(logp, logp.detach(), torch.zeros(64), mask, clip_eps=0.2, ref_logp=ref_logp, kl_coef=0.1)
    assert float(terms.kl) >= 0 and math.isfinite(float(terms.loss))


def test_the_kl_estimate_is_exactly_zero_at_the_reference_and_positive_away_from_it():
    logp = torch.tensor([-1.0, -2.0, -0.5])
    assert torch.equal(kl_k3(logp, logp), torch.zeros(3))
    assert bool((kl_k3(logp, logp + torch.tensor([0.5, -0.5, 1.0])) > 0).all())


def _loop(model, tokenizer, script):
    return CompactGRPO(model, tokenizer, ScriptedRewards(script), demo_rows(0, 16), config=CONFIG, seed=0)


def test_a_step_where_every_reward_abstains_takes_no_optimizer_step_after_real_ones(small_model):
    # After a real update Adam has momentum: an optimizer step on a zero gradient would still move the weights.
    model, tokenizer = small_model
    loop = _loop(model, tokenizer, [1.0, 0.0, 0.5, 0.0])
    trained = loop.step().metrics
    assert trained["update_skipped"] == 0 and trained["updates_skipped"] == 0
    loop.reward_fn = ScriptedRewards([None])
    before = [p.detach().clone() for p in model.parameters()]
    metrics = loop.step().metrics
    assert all(p.equal(q) for p, q in zip(before, model.parameters()))
    assert metrics["update_skipped"] == 1 and metrics["updates_skipped"] == 1
    assert all(math.isfinite(metrics[k]) for k in ("loss", "kl", "clip_fraction", "grad_norm"))


def test_a_pass_whose_loss_is_not_finite_is_skipped_and_counted(small_model, monkeypatch):
    model, tokenizer = small_model
    loop = _loop(model, tokenizer, [1.0, 0.0, 0.5, 0.0])
    real = _grpo.completion_logprobs

    def poisoned(model, batch, temperature=1.0, **kwargs):
        logp = real(model, batch, temperature, **kwargs)
        return logp * math.nan if model is loop.model else logp

    monkeypatch.setattr(_grpo, "completion_logprobs", poisoned)
    before = [p.detach().clone() for p in model.parameters()]
    metrics = loop.step().metrics
    assert all(p.equal(q) for p, q in zip(before, model.parameters()))
    assert metrics["update_skipped"] == 1 and metrics["updates_skipped"] == 1
    assert all(math.isfinite(metrics[k]) for k in ("loss", "kl", "grad_norm"))
