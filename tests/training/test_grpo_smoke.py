"""A few GRPO steps on a small model: finite loss, parameters move, metrics logged, seeded runs identical."""

import math

import pytest

torch = pytest.importorskip("torch")

from proofgym.rewards import ScoredItem  # noqa: E402
from proofgym.training import CompactGRPO, CompactGRPOConfig, MetricsLog, demo_rows, demo_run_config  # noqa: E402

CONFIG = CompactGRPOConfig(prompts_per_step=4, group_size=4, max_new_tokens=20, learning_rate=1e-3, warmup_steps=0,
                    dynamic_sampling=False, beta=0.0, updates_per_generation=1)


def _run(model, tokenizer, steps, seed=0, config=CONFIG, reward_fn=None):
    torch.manual_seed(seed)
    reward_fn = reward_fn or demo_run_config().reward_function()
    loop = CompactGRPO(model, tokenizer, reward_fn, demo_rows(0, 64), config=config, seed=seed)
    results = [loop.step() for _ in range(steps)]
    reward_fn.close()
    return results


def test_a_few_steps_train_the_model_and_log_metrics(warm_model, tmp_path):
    model, tokenizer = warm_model
    before = [p.detach().clone() for p in model.parameters()]
    results = _run(model, tokenizer, steps=3)
    log = MetricsLog()
    for result in results:
        assert math.isfinite(result.metrics["loss"]) and math.isfinite(result.metrics["grad_norm"])
        assert len(result.rollouts) == 16 and result.metrics["samples"] == 16
        assert 0.0 <= result.metrics["certified"] <= result.metrics["format_ok"] <= 1.0
        log.log(result.step, **{k: v for k, v in result.metrics.items() if isinstance(v, (int, float))})
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
    path = log.write_csv(tmp_path / "metrics.csv")
    header = path.read_text().splitlines()[0].split(",")
    assert {"step", "reward", "certified", "correct", "loss", "step_s"} <= set(header)
    assert len(path.read_text().splitlines()) == 4
    # Every rollout carries its row, its scored item and, when trained on, its advantage.
    rollout = results[0].rollouts[0]
    assert rollout.row["prompt"] and rollout.item.outcome in {"certified", "refuted", "format_error"}
    assert rollout.advantage is not None


def test_reused_generations_and_the_kl_reference_keep_the_reference_frozen(warm_model):
    model, tokenizer = warm_model
    config = CompactGRPOConfig(prompts_per_step=4, group_size=4, max_new_tokens=20, learning_rate=1e-3, warmup_steps=0,
                        dynamic_sampling=False, beta=0.1, updates_per_generation=2)
    # Rewards by place in the group: with the real reward path, a processor on which this warm-up's samples all
    # earn the same reward gives zero advantages, the policy never leaves its reference and the KL stays 0.
    loop = CompactGRPO(model, tokenizer, ScriptedRewards([1.0, 0.0, 0.5, 0.0]), demo_rows(0, 64), config=config,
                       seed=0)
    reference = [p.detach().clone() for p in loop.reference.parameters()]
    metrics = [loop.step().metrics for _ in range(2)]
    assert all(math.isfinite(m["loss"]) and math.isfinite(m["kl"]) and m["kl"] >= 0 for m in metrics)
    assert metrics[-1]["kl"] > 0  # the policy has moved away from the reference
    assert all(torch.equal(a, b) for a, b in zip(reference, loop.reference.parameters()))
    assert not any(p.requires_grad for p in loop.reference.parameters())


def test_the_learning_rate_warms_up_then_decays_linearly():
    config = CompactGRPOConfig(learning_rate=1e-3, warmup_steps=4, decay_steps=14, min_lr_ratio=0.2)
    factors = [config.lr_factor(step) for step in range(20)]
    assert factors[:4] == pytest.approx([0.25, 0.5, 0.75, 1.0])
    assert factors[9] == pytest.approx(1.0 - 0.8 * 5 / 10) and factors[14:] == pytest.approx([0.2] * 6)
    assert CompactGRPOConfig(warmup_steps=0).lr_factor(0) == 1.0
    with pytest.raises(ValueError, match="decay_steps"):
        CompactGRPOConfig(warmup_steps=10, decay_steps=5)


def test_the_same_seed_gives_bit_identical_training(tiny_cache, _warm_state):
    from proofgym.policies import build_tiny_model

    from ._support import SMALL

    finals = []
    for _ in range(2):
        model, tokenizer = build_tiny_model(tiny_cache, seed=0, config=SMALL)
        model.load_state_dict(_warm_state)
        # Rewards by place in the group, so that every group trains on any processor: with the real reward
        # path, whether this small warm-up's samples spread depends on how the CPU rounds (on one it did not,
        # and nothing trained).
        results = _run(model, tokenizer, steps=2, seed=3, reward_fn=ScriptedRewards([1.0, 0.0, 0.5, 0.0]))
        finals.append(([r.completion for r in results[-1].rollouts], [p.detach().clone() for p in model.parameters()]))
    assert finals[0][0] == finals[1][0]
    assert all(torch.equal(a, b) for a, b in zip(finals[0][1], finals[1][1]))
    assert any(not torch.equal(a, b) for a, b in zip(finals[0][1], _warm_state.values()))


class ScriptedRewards:
    """A reward function whose rewards depend only on a completion's place in its group."""

    def __init__(self, script):
        self.script = script

    def score(self, prompts, completions, refs):
        items = []
        for i in range(len(completions)):
            reward = self.script[i % len(self.script)]
            outcome = "invalid" if reward is None else "certified"
            items.append(ScoredItem(index=i, reward=reward, outcome=outcome, components={}, reason="scripted"))
        return items

    def close(self):
        pass


def test_abstained_rewards_leave_the_group_statistics_and_the_loss(small_model):
    model, tokenizer = small_model
    result = _run(model, tokenizer, steps=1, reward_fn=ScriptedRewards([1.0, None, 0.0, None]))[0]
    # Scored rewards 1 and 0 in every group: advantages +1 and -1; the abstained ones take no part.
    assert [r.advantage for r in result.rollouts[:4]] == [1.0, None, -1.0, None]
    # On-policy, the loss is -sum(A_i * n_i) / sum(n_i) over the counted completions (n_i tokens each).
    counted = [r for r in result.rollouts if r.advantage is not None]
    want = -sum(r.advantage * r.tokens for r in counted) / sum(r.tokens for r in counted)
    assert result.metrics["loss"] == pytest.approx(want, abs=1e-6)
    assert result.metrics["invalid"] == 0.5


def test_a_step_where_every_verification_abstains_leaves_the_model_unchanged(small_model):
    model, tokenizer = small_model
    before = [p.detach().clone() for p in model.parameters()]
    result = _run(model, tokenizer, steps=1, reward_fn=ScriptedRewards([None]))[0]
    assert all(r.advantage is None for r in result.rollouts) and result.metrics["loss"] == 0.0
    assert all(p.equal(q) for p, q in zip(before, model.parameters()))


def test_dynamic_sampling_trains_only_groups_with_spread(warm_model):
    model, tokenizer = warm_model
    config = CompactGRPOConfig(prompts_per_step=4, group_size=4, max_new_tokens=20, dynamic_sampling=True,
                        max_sampling_rounds=2)
    result = _run(model, tokenizer, steps=1, config=config)[0]
    trained_groups = {r.group for r in result.rollouts if r.advantage is not None}
    for group in trained_groups:
        rewards = [r.item.reward for r in result.rollouts if r.group == group and r.item.reward is not None]
        assert max(rewards) > min(rewards)
    assert result.metrics["groups_trained"] == len(trained_groups) <= 4
    assert result.metrics["sampling_rounds"] in (1, 2)


@pytest.mark.parametrize("kwargs", [{"group_size": 1}, {"prompts_per_step": 0}, {"learning_rate": 0.0},
                                    {"clip_eps": -0.1}, {"beta": float("nan")}, {"warmup_steps": -1},
                                    {"top_k": 0}, {"top_k": 2.5}])
def test_bad_hyper_parameters_are_rejected(kwargs):
    with pytest.raises(ValueError, match="CompactGRPOConfig"):
        CompactGRPOConfig(**kwargs)


class _SpreadInFirstGroupOnly:
    """Rewards with spread in the first group of each call only: one group of the quota has signal."""

    def __init__(self, group_size):
        self.group_size = group_size

    def score(self, prompts, completions, refs):
        return [ScoredItem(index=i, reward=float(i % 2) if i < self.group_size else 1.0, outcome="certified",
                           components={}, reason="scripted") for i in range(len(completions))]

    def close(self):
        pass


def test_a_step_that_found_a_quarter_of_its_groups_takes_a_quarter_of_the_gradient(warm_model):
    model, tokenizer = warm_model
    state = {k: v.clone() for k, v in model.state_dict().items()}
    norms = {}
    for scale in (False, True):
        model.load_state_dict(state)
        config = CompactGRPOConfig(prompts_per_step=4, group_size=4, max_new_tokens=20, warmup_steps=0, beta=0.0,
                            updates_per_generation=1, max_sampling_rounds=1, scale_partial_batches=scale)
        [result] = _run(model, tokenizer, steps=1, config=config, reward_fn=_SpreadInFirstGroupOnly(4))
        assert result.metrics["groups_trained"] == 1
        norms[scale] = result.metrics["grad_norm"]
    model.load_state_dict(state)
    assert norms[True] == pytest.approx(norms[False] / 4, rel=1e-4)


def test_per_prompt_temperatures_sample_each_prompt_at_its_own_and_one_value_is_the_scalar_path(warm_model):
    from proofgym.training import generate

    model, tokenizer = warm_model
    prompts = [row["prompt"] for row in demo_rows(0, 2)]
    torch.manual_seed(3)
    scalar = generate(model, tokenizer, prompts, num_samples=2, temperature=1.0, max_new_tokens=8)
    torch.manual_seed(3)
    same = generate(model, tokenizer, prompts, num_samples=2, temperature=[1.0, 1.0], max_new_tokens=8)
    assert torch.equal(scalar.completion_ids, same.completion_ids)
    mixed = generate(model, tokenizer, prompts, num_samples=2, temperature=[1.0, 3.0], max_new_tokens=8)
    assert mixed.completion_ids.shape[0] == 4
    with pytest.raises(ValueError, match="2 temperatures for 1 prompts"):
        generate(model, tokenizer, prompts[:1], temperature=[1.0, 2.0])
    with pytest.raises(ValueError, match="temperature must be > 0"):
        generate(model, tokenizer, prompts, temperature=[1.0, 0.0])


def test_log_probabilities_at_one_temperature_per_row_match_each_rows_own(warm_model):
    from proofgym.training._grpo import _batch, completion_logprobs

    model, tokenizer = warm_model
    batch = _batch([[1, 5, 6], [1, 7]], [[8, 9], [10]], tokenizer.pad_token_id, "cpu")
    with torch.no_grad():
        per_row = completion_logprobs(model, batch, torch.tensor([1.0, 2.0]))
        cold = completion_logprobs(model, batch, 1.0)
        hot = completion_logprobs(model, batch, 2.0)
    assert torch.allclose(per_row[0], cold[0]) and torch.allclose(per_row[1], hot[1])


def test_rows_sharing_a_prompt_get_the_log_probabilities_and_gradients_of_rows_run_alone(warm_model):
    from proofgym.training._grpo import _batch, completion_logprobs

    model, tokenizer = warm_model
    # rows 0 and 5 and rows 2 and 6 are the same text (a repeated sample), at different temperatures for 0 / 5
    prompts = [[1, 5, 6], [1, 5, 6], [1, 7], [1, 5, 6], [1, 7], [1, 5, 6], [1, 7]]
    completions = [[8, 9, 10], [11], [10, 12], [8, 13, 14, 15], [9], [8, 9, 10], [10, 12]]
    temperatures = [1.0, 2.0, 1.0, 1.0, 0.5, 2.0, 1.0]
    batch = _batch(prompts, completions, tokenizer.pad_token_id, "cpu")
    assert batch["prefix_ids"].shape[0] == 2 and batch["pair_prefix"].tolist() == [0, 0, 1, 0, 1]
    assert batch["row_pair"].tolist() == [0, 1, 2, 3, 4, 0, 2] and batch["completion_ids"].shape[0] == 7
    rows_run = []
    hook = model.register_forward_pre_hook(lambda module, args, kwargs: rows_run.append(kwargs["input_ids"].shape[0]),
                                           with_kwargs=True)
    try:
        joint = completion_logprobs(model, batch, torch.tensor(temperatures))
    finally:
        hook.remove()
    assert rows_run == [2, 5]  # the distinct prompts, then the distinct (prompt, completion) pairs
    total = (joint * batch["mask"]).sum()
    joint_grads = torch.autograd.grad(total, list(model.parameters()))
    alone_total = 0.0
    for i, (p, c, t) in enumerate(zip(prompts, completions, temperatures)):
        alone = completion_logprobs(model, _batch([p], [c], tokenizer.pad_token_id, "cpu"), t)
        assert torch.allclose(alone[0], joint[i, :len(c)], atol=1e-5)
        alone_total = alone_total + alone.sum()
    alone_grads = torch.autograd.grad(alone_total, list(model.parameters()))
    for a, b in zip(joint_grads, alone_grads):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4)


def test_a_prompt_answered_wrong_by_every_sample_is_sampled_hotter_next_time(warm_model):
    from proofgym.training import BranchCurriculum

    model, tokenizer = warm_model
    rows = demo_rows(0, 16)
    curriculum = BranchCurriculum(rows, seed=0, replay=0.99)
    curriculum.observe([(rows[0], 0, 4)])  # every sample of rows[0] was wrong
    assert curriculum.last_error(rows[0]) == 1.0 and curriculum.last_error(rows[1]) is None
    config = CompactGRPOConfig(prompts_per_step=2, group_size=4, max_new_tokens=20, warmup_steps=0, beta=0.0,
                        dynamic_sampling=False, updates_per_generation=1, explore_temperature=2.0)
    reward_fn = demo_run_config().reward_function()
    torch.manual_seed(0)
    loop = CompactGRPO(model, tokenizer, reward_fn, rows, config=config, seed=0, curriculum=curriculum)
    metrics = loop.step().metrics
    reward_fn.close()
    assert metrics["explored_groups"] >= 1 and math.isfinite(metrics["loss"])
    with pytest.raises(ValueError, match="explore_temperature"):
        CompactGRPOConfig(explore_temperature=0.0)


def test_dynamic_sampling_sizes_a_generation_by_the_last_steps_share_of_flat_groups(warm_model):
    model, tokenizer = warm_model
    config = CompactGRPOConfig(prompts_per_step=4, group_size=4, max_new_tokens=20, dynamic_sampling=True,
                        max_sampling_rounds=3)
    loop = CompactGRPO(model, tokenizer, _NoSpread(), demo_rows(0, 64), config=config, seed=0)
    first = loop.step()  # nothing known yet: a generation of the quota, then more until the budget is spent
    assert first.metrics["samples"] == 3 * 4 * 4 and first.metrics["zero_spread"] == 1.0
    assert first.metrics["sampling_rounds"] == 3
    second = loop.step()  # every group was flat: one generation of the whole budget at once
    assert second.metrics["samples"] == 3 * 4 * 4 and second.metrics["sampling_rounds"] == 1
    assert loop._round_size(4, 12) == 12 and loop._round_size(4, 5) == 5
    loop._flat_share = 0.5
    assert loop._round_size(4, 12) == 8 and loop._round_size(3, 12) == 6
    loop.reward_fn.close()


class _NoSpread:
    """Every completion the same reward: no group has a spread."""

    def score(self, prompts, completions, refs):
        return [ScoredItem(index=i, reward=1.0, outcome="certified", components={"correct": 1.0}, reason="same")
                for i in range(len(completions))]

    def close(self) -> None:
        pass


def test_shared_prompt_logprobs_refuses_mismatched_or_empty_input(small_model):
    from proofgym.training import shared_prompt_logprobs

    model, tokenizer = small_model
    for prompts, completions, message in (([[5]], [[6], [7]], "one prompt per completion"),
                                          ([], [], "at least one"),
                                          ([[5], []], [[6], [7]], "every prompt needs at least one token")):
        with pytest.raises(ValueError, match=message):
            shared_prompt_logprobs(model, prompts, completions, pad_id=tokenizer.pad_token_id)
    logps, entropies = shared_prompt_logprobs(model, [[5, 6], [5, 6]], [[7, 8], [9, 10]], pad_id=0, entropy=True)
    assert logps.shape == entropies.shape == (2, 2) and bool((logps <= 0).all()) and bool((entropies >= 0).all())

