"""The GRPO maths against numbers worked out by hand (not by calling the code under test)."""

import math

import pytest

torch = pytest.importorskip("torch")

from proofgym.training import group_advantages, grpo_loss  # noqa: E402


def test_advantages_are_normalised_within_each_group():
    # Group 1: mean 0.5, population variance (0.25 + 0.25 + 0 + 0) / 4 = 0.125, std = 0.353553...
    # Group 2: rewards 2, 0, 1, 1 -> mean 1, variance (1 + 1 + 0 + 0) / 4 = 0.5, std = 0.707107...
    got = group_advantages([1.0, 0.0, 0.5, 0.5, 2.0, 0.0, 1.0, 1.0], 4)
    want = [1.414214, -1.414214, 0.0, 0.0, 1.414214, -1.414214, 0.0, 0.0]
    assert got == pytest.approx(want, abs=1e-6)


def test_a_group_without_spread_carries_no_signal():
    # Group 1 is flat: zeros. Group 2: 1.9, 0.4, 1.9 -> mean 1.4, deviations +0.5, -1, +0.5,
    # population variance (0.25 + 1 + 0.25) / 3 = 0.5, std 0.707107.
    got = group_advantages([0.4, 0.4, 0.4, 1.9, 0.4, 1.9], 3)
    assert got == pytest.approx([0.0, 0.0, 0.0, 0.707107, -1.414214, 0.707107], abs=1e-6)
    assert got[:3] == [0.0, 0.0, 0.0]


def test_none_rewards_are_left_out_of_the_group_statistics():
    # Scored rewards 1.9 and 0.4: mean 1.15, std 0.75 -> +1 and -1; the None members get 0, not a
    # score of 0 (which would have made the mean 0.575 and changed every advantage).
    assert group_advantages([1.9, None, 0.4, None], 4) == pytest.approx([1.0, 0.0, -1.0, 0.0])


def test_a_group_with_one_scored_reward_has_no_spread():
    assert group_advantages([None, 1.9, None, None], 4) == [0.0, 0.0, 0.0, 0.0]
    assert group_advantages([None, None], 2) == [0.0, 0.0]


@pytest.mark.parametrize("rewards, size", [([1.0, 2.0, 3.0], 2), ([1.0], 0), ([1.0, float("nan")], 2),
                                           ([1.0, float("inf")], 2)])
def test_bad_rewards_or_group_sizes_are_rejected(rewards, size):
    with pytest.raises(ValueError):
        group_advantages(rewards, size)


def _example():
    logp = torch.tensor([[-1.0, -2.0], [-0.9, -0.1]], requires_grad=True)
    old = torch.tensor([[-1.0, -2.2], [-0.5, -0.6]])
    mask = torch.tensor([[1, 1], [1, 0]])
    advantages = torch.tensor([1.0, -1.0])
    return logp, old, mask, advantages


def test_clipped_loss_matches_the_hand_computed_value():
    logp, old, mask, advantages = _example()
    # token (0,0): ratio 1,                        A = +1 -> -min(1, 1)             = -1
    # token (0,1): ratio e^0.2 = 1.221403 > 1.2,   A = +1 -> -min(1.221403, 1.2)    = -1.2   (clipped)
    # token (1,0): ratio e^-0.4 = 0.670320 < 0.8,  A = -1 -> -min(-0.670320, -0.8) = +0.8   (clipped)
    # token (1,1): masked out.  Token mean over 3 tokens: (-1 - 1.2 + 0.8) / 3 = -0.466667
    terms = grpo_loss(logp, old, None, advantages, mask, eps=0.2, beta=0.0)
    assert float(terms.loss.detach()) == pytest.approx(-1.4 / 3, abs=1e-6)
    assert terms.clip_fraction == pytest.approx(2 / 3)
    assert terms.kl == 0.0


def test_kl_penalty_uses_the_k3_estimator():
    logp, old, mask, advantages = _example()
    ref = torch.tensor([[-1.0, -1.5], [-0.9, 0.0]])
    # k3 = e^d - d - 1 with d = ref - logp: (0,0) d=0 -> 0; (0,1) d=0.5 -> 1.648721 - 1.5 = 0.148721;
    # (1,0) d=0 -> 0; (1,1) masked. Mean KL = 0.148721 / 3 = 0.049574.
    terms = grpo_loss(logp, old, ref, advantages, mask, eps=0.2, beta=0.1)
    assert terms.kl == pytest.approx(0.148721 / 3, abs=1e-6)
    assert float(terms.loss.detach()) == pytest.approx((-1.4 + 0.1 * 0.148721) / 3, abs=1e-6)


def test_on_policy_gradient_is_minus_the_advantage_over_the_token_count():
    # With old = logp (one update per generation) the ratio is 1 everywhere and nothing is clipped:
    # d loss / d logp_t = -A / N on each of the N counted tokens, 0 on masked ones.
    logp = torch.tensor([[-1.0, -2.0], [-0.9, -0.1]], requires_grad=True)
    mask = torch.tensor([[1, 1], [1, 0]])
    terms = grpo_loss(logp, logp.detach(), None, torch.tensor([1.5, -0.5]), mask, eps=0.2, beta=0.0)
    terms.loss.backward()
    assert logp.grad.flatten().tolist() == pytest.approx([-0.5, -0.5, 0.5 / 3, 0.0])
    assert float(terms.loss.detach()) == pytest.approx(-(1.5 + 1.5 - 0.5) / 3)


def test_clipping_stops_the_gradient_where_it_binds():
    logp, old, mask, advantages = _example()
    grpo_loss(logp, old, None, advantages, mask, eps=0.2, beta=0.0).loss.backward()
    # Only token (0,0) is unclipped: its gradient is -A * ratio / N = -1 * 1 / 3.
    assert logp.grad.flatten().tolist() == pytest.approx([-1 / 3, 0.0, 0.0, 0.0])


def test_beta_without_reference_is_an_error():
    logp, old, mask, advantages = _example()
    with pytest.raises(ValueError, match="reference"):
        grpo_loss(logp, old, None, advantages, mask, eps=0.2, beta=0.1)


def test_an_all_masked_batch_has_zero_loss():
    logp, old, _, advantages = _example()
    terms = grpo_loss(logp, old, None, advantages, torch.zeros(2, 2), eps=0.2, beta=0.0)
    assert float(terms.loss.detach()) == 0.0 and not math.isnan(terms.clip_fraction)
