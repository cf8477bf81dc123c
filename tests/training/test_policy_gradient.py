"""The policy-gradient core (proofgym.training._policy_gradient) against numbers worked out by hand (not by calling
the code under test): group advantages in both loops' settings, the clipped loss with token and sequence (GSPO)
ratios, the k3 KL, log-probabilities from logits, and microbatches that add up to the batch."""

import math

import pytest

torch = pytest.importorskip("torch")

from proofgym.training import (  # noqa: E402
    clipped_loss,
    group_advantages,
    kl_k3,
    microbatches,
    selected_logprobs,
)


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
    terms = clipped_loss(logp, old, advantages, mask, clip_eps=0.2)
    assert float(terms.loss.detach()) == pytest.approx(-1.4 / 3, abs=1e-6)
    assert float(terms.clip_fraction) == pytest.approx(2 / 3)
    assert float(terms.kl) == 0.0


def test_kl_penalty_uses_the_k3_estimator():
    logp, old, mask, advantages = _example()
    ref = torch.tensor([[-1.0, -1.5], [-0.9, 0.0]])
    # k3 = e^d - d - 1 with d = ref - logp: (0,0) d=0 -> 0; (0,1) d=0.5 -> 1.648721 - 1.5 = 0.148721;
    # (1,0) d=0 -> 0; (1,1) masked. Mean KL = 0.148721 / 3 = 0.049574.
    terms = clipped_loss(logp, old, advantages, mask, clip_eps=0.2, ref_logp=ref, kl_coef=0.1)
    assert float(terms.kl) == pytest.approx(0.148721 / 3, abs=1e-6)
    assert float(terms.loss.detach()) == pytest.approx((-1.4 + 0.1 * 0.148721) / 3, abs=1e-6)


def test_on_policy_gradient_is_minus_the_advantage_over_the_token_count():
    # With old = logp (one update per generation) the ratio is 1 everywhere and nothing is clipped:
    # d loss / d logp_t = -A / N on each of the N counted tokens, 0 on masked ones.
    logp = torch.tensor([[-1.0, -2.0], [-0.9, -0.1]], requires_grad=True)
    mask = torch.tensor([[1, 1], [1, 0]])
    terms = clipped_loss(logp, logp.detach(), torch.tensor([1.5, -0.5]), mask, clip_eps=0.2)
    terms.loss.backward()
    assert logp.grad.flatten().tolist() == pytest.approx([-0.5, -0.5, 0.5 / 3, 0.0])
    assert float(terms.loss.detach()) == pytest.approx(-(1.5 + 1.5 - 0.5) / 3)


def test_clipping_stops_the_gradient_where_it_binds():
    logp, old, mask, advantages = _example()
    clipped_loss(logp, old, advantages, mask, clip_eps=0.2).loss.backward()
    # Only token (0,0) is unclipped: its gradient is -A * ratio / N = -1 * 1 / 3.
    assert logp.grad.flatten().tolist() == pytest.approx([-1 / 3, 0.0, 0.0, 0.0])


def test_a_kl_coefficient_without_reference_is_an_error():
    logp, old, mask, advantages = _example()
    with pytest.raises(ValueError, match="reference"):
        clipped_loss(logp, old, advantages, mask, clip_eps=0.2, kl_coef=0.1)


def test_an_all_masked_batch_has_zero_loss():
    logp, old, _, advantages = _example()
    terms = clipped_loss(logp, old, advantages, torch.zeros(2, 2), clip_eps=0.2)
    assert float(terms.loss.detach()) == 0.0 and not math.isnan(terms.clip_fraction)


# -- group advantages in the multi-step loop's setting: one group, a 1e-8 flatness bound, 1e-6 added to the std --


def test_one_group_with_an_offset_divisor():
    # 1, 0, 1, 0: mean 0.5, std 0.5 -> (1 - 0.5) / (0.5 + 1e-6) = 0.999998 and its negative.
    got = group_advantages([1.0, 0.0, 1.0, 0.0], min_std=1e-8, std_offset=1e-6)
    assert got == pytest.approx([0.999998, -0.999998, 0.999998, -0.999998], abs=1e-9)
    assert got[0] != 1.0  # the offset is there: without it the advantage would be exactly 1


def test_the_flatness_bound_is_a_parameter():
    # std 5e-7: flat under the compact loop's 1e-6, a signal under the multi-step loop's 1e-8.
    rewards = [0.5 + 5e-7, 0.5 - 5e-7]
    assert group_advantages(rewards) == [0.0, 0.0]
    assert group_advantages(rewards, min_std=1e-8, std_offset=1e-6) == pytest.approx([1 / 3, -1 / 3], rel=1e-6)


def test_no_group_size_is_one_group_and_an_empty_batch_has_no_advantages():
    assert group_advantages([2.0, 0.0, 1.0, 1.0]) == pytest.approx(group_advantages([2.0, 0.0, 1.0, 1.0], 4))
    assert group_advantages([]) == [] and group_advantages([], 4) == []
    assert group_advantages([0.7]) == [0.0]  # one reward: no spread


def test_none_rewards_are_left_out_in_one_group_too():
    assert group_advantages([None, 3.0, None, 1.0], min_std=1e-8) == pytest.approx([0.0, 1.0, 0.0, -1.0])


# -- the clipped loss with a sequence ratio (GSPO) --------------------------------------------------------------


def test_a_sequence_ratio_is_the_exp_of_the_mean_token_log_ratio():
    logp, old, mask, advantages = _example()
    # Row 0: log-ratios 0 and 0.2 -> mean 0.1, ratio e^0.1 = 1.105171 (inside 0.8..1.2), A = +1 -> -1.105171.
    # Row 1: log-ratio -0.4 on its one counted token -> ratio e^-0.4 = 0.670320 < 0.8, A = -1 -> -min(-0.67, -0.8)
    #        = +0.8 (clipped). Mean over the two rows: (-1.105171 + 0.8) / 2 = -0.152585.
    terms = clipped_loss(logp, old, advantages, mask, clip_eps=0.2, ratio_level="sequence")
    assert float(terms.loss.detach()) == pytest.approx((-math.exp(0.1) + 0.8) / 2, abs=1e-6)
    assert float(terms.clip_fraction) == pytest.approx(0.5)  # one row of two clipped
    # The token ratio clips token (0, 1) that the sequence ratio does not: the two losses differ.
    token = clipped_loss(logp, old, advantages, mask, clip_eps=0.2)
    assert float(token.loss.detach()) != pytest.approx(float(terms.loss.detach()), abs=1e-3)


def test_a_sequence_ratio_moves_every_token_of_the_sequence_alike():
    logp, old, mask, advantages = _example()
    clipped_loss(logp, old, advantages, mask, clip_eps=0.2, ratio_level="sequence").loss.backward()
    # Row 0 unclipped: d/d logp_t of -e^(mean log-ratio) / 2 rows = -e^0.1 / 2 tokens / 2 rows on each token.
    # Row 1 clipped: no gradient.
    want = -math.exp(0.1) / 4
    assert logp.grad.flatten().tolist() == pytest.approx([want, want, 0.0, 0.0], abs=1e-6)


def test_a_sequence_kl_penalty_is_the_mean_over_its_tokens():
    logp, old, mask, advantages = _example()
    ref = torch.tensor([[-1.0, -1.5], [-0.9, 0.0]])
    # Row 0's k3 values are 0 and 0.148721: mean 0.074361; row 1's only counted token has 0. Added per row, then
    # the mean over the rows: 0.1 * 0.074361 / 2.
    plain = clipped_loss(logp, old, advantages, mask, clip_eps=0.2, ratio_level="sequence")
    with_kl = clipped_loss(logp, old, advantages, mask, clip_eps=0.2, ratio_level="sequence", ref_logp=ref,
                           kl_coef=0.1)
    assert float((with_kl.loss - plain.loss).detach()) == pytest.approx(0.1 * 0.148721 / 2 / 2, abs=1e-6)


def test_a_total_divides_the_sum_instead_of_the_mean():
    logp, old, mask, advantages = _example()
    mean = clipped_loss(logp, old, advantages, mask, clip_eps=0.2)
    summed = clipped_loss(logp, old, advantages, mask, clip_eps=0.2, total=6.0)
    assert float(summed.loss.detach()) == pytest.approx(float(mean.loss.detach()) * 3 / 6)
    rows = clipped_loss(logp, old, advantages, mask, clip_eps=0.2, ratio_level="sequence", total=4.0)
    assert float(rows.loss.detach()) == pytest.approx((-math.exp(0.1) + 0.8) / 4, abs=1e-6)


def test_values_outside_the_mask_are_never_read():
    logp, old, mask, advantages = _example()
    for level in ("token", "sequence"):
        clean = clipped_loss(logp, old, advantages, mask, clip_eps=0.2, ratio_level=level)
        dirty_old = old.clone()
        dirty_old[1, 1] = -1e30  # a masked token: its ratio would overflow if it were read
        dirty = clipped_loss(logp, dirty_old, advantages, mask, clip_eps=0.2, ratio_level=level,
                             ref_logp=torch.full_like(old, 1e30), kl_coef=0.0)
        assert float(dirty.loss.detach()) == pytest.approx(float(clean.loss.detach()))


@pytest.mark.parametrize("kwargs", [{"clip_eps": -0.1}, {"clip_eps": 0.2, "kl_coef": -1.0},
                                    {"clip_eps": 0.2, "ratio_level": "turn"}])
def test_bad_loss_settings_are_rejected(kwargs):
    logp, old, mask, advantages = _example()
    with pytest.raises(ValueError):
        clipped_loss(logp, old, advantages, mask, **kwargs)


# -- KL, log-probabilities, microbatches ---------------------------------------------------------------------------


def test_k3_by_hand():
    logp = torch.tensor([-1.0, -1.0])
    ref = torch.tensor([-1.0, -0.5])
    # d = 0 -> 0; d = 0.5 -> e^0.5 - 0.5 - 1 = 0.148721
    assert kl_k3(logp, ref).tolist() == pytest.approx([0.0, 0.148721], abs=1e-6)


def test_selected_logprobs_pick_the_targets_and_divide_by_the_temperature():
    logits = torch.tensor([[[0.0, math.log(3.0)], [0.0, 0.0]]])  # [1, 2, 2]
    targets = torch.tensor([[1, 0]])
    # softmax([0, ln 3]) = [1/4, 3/4]; softmax([0, 0]) = [1/2, 1/2]
    assert selected_logprobs(logits, targets)[0].tolist() == pytest.approx([math.log(0.75), math.log(0.5)])
    # At temperature 2: softmax([0, ln 3 / 2]) = [1, sqrt 3] / (1 + sqrt 3)
    hot = selected_logprobs(logits, targets, torch.tensor([2.0]))
    assert hot[0, 0].item() == pytest.approx(math.log(math.sqrt(3) / (1 + math.sqrt(3))), abs=1e-6)
    _, entropy = selected_logprobs(logits, targets, entropy=True)
    assert entropy[0, 1].item() == pytest.approx(math.log(2), abs=1e-6)


def test_microbatches_bucket_by_length_within_the_token_budget():
    items = [5, 1, 3, 2, 4, 1, 5]
    chunks = microbatches(items, lambda n: n, parts=2, tokens=8)
    assert sorted(sum(chunks, [])) == sorted(items)
    assert all(chunk == sorted(chunk) for chunk in chunks)  # sorted by length
    assert all(len(chunk) * max(chunk) <= 8 or len(chunk) == 1 for chunk in chunks)
    assert len(microbatches(items, lambda n: n, parts=3)) >= 3  # at least ``parts``
    assert microbatches([], lambda n: n) == []


@pytest.mark.parametrize("level", ["token", "sequence"])
def test_microbatch_losses_add_up_to_the_batch_loss_and_gradient(level):
    generator = torch.Generator().manual_seed(0)
    lengths = [1, 4, 2, 6, 3, 5, 2]
    width = max(lengths)
    base = -torch.rand(len(lengths), width, generator=generator) * 3
    old = base + torch.randn(len(lengths), width, generator=generator) * 0.2
    ref = base + torch.randn(len(lengths), width, generator=generator) * 0.2
    mask = torch.tensor([[1] * n + [0] * (width - n) for n in lengths])
    advantages = torch.randn(len(lengths), generator=generator)

    whole_logp = base.clone().requires_grad_(True)
    whole = clipped_loss(whole_logp, old, advantages, mask, clip_eps=0.2, ratio_level=level, ref_logp=ref,
                         kl_coef=0.05)
    whole.loss.backward()

    total = float(len(lengths)) if level == "sequence" else float(sum(lengths))
    split_logp = base.clone().requires_grad_(True)
    summed = 0.0
    for rows in microbatches(list(range(len(lengths))), lambda i: lengths[i], parts=3):
        index = torch.tensor(rows)
        part = clipped_loss(split_logp[index], old[index], advantages[index], mask[index], clip_eps=0.2,
                            ratio_level=level, ref_logp=ref[index], kl_coef=0.05, total=total)
        part.loss.backward()
        summed += float(part.loss.detach())
    assert summed == pytest.approx(float(whole.loss.detach()), abs=1e-6)
    assert torch.allclose(split_logp.grad, whole_logp.grad, atol=1e-6)
