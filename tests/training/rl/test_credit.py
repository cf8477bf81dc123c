"""Credit and loss: group advantages, decision-level values, the clipped loss on the completion ids only."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch", reason="the RL loss needs torch (pip install -e '.[train]')")

from proofgym.judges import RubricScorer  # noqa: E402
from proofgym.training import group_advantages  # noqa: E402
from proofgym.training.rl import Turn, decision_values, policy_loss, sampled_turns, trained_ids  # noqa: E402
from proofgym.domains._fact_finding import FACT_FINDING_RUBRICS  # noqa: E402
from proofgym.traces import EnvEvent, LMCallEvent, OutcomeReward, SessionTrace, StepTrace  # noqa: E402


def test_group_advantages_are_normalised_and_flat_groups_give_none():
    # The trainer's setting: one group, flat below a std of 1e-8, 1e-6 added to the std.
    advantages = group_advantages([1.0, 0.0, 1.0, 0.0], min_std=1e-8, std_offset=1e-6)
    assert advantages[0] > 0 > advantages[1] and math.isclose(sum(advantages), 0, abs_tol=1e-9)
    assert group_advantages([0.5, 0.5, 0.5], min_std=1e-8, std_offset=1e-6) == [0.0, 0.0, 0.0]


def _Linear(vocab=8):
    """A real causal LM (transformers' Llama), one small layer: the loss runs it as it runs proofgym:tiny."""
    from transformers import LlamaConfig, LlamaForCausalLM

    return LlamaForCausalLM(LlamaConfig(vocab_size=vocab, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64))


def _grads(model):
    return [p.grad.clone() if p.grad is not None else torch.zeros_like(p) for p in model.parameters()]


def test_loss_gradient_is_that_of_the_completion_tokens_only():
    """On-policy (ratio 1) the token-level loss's gradient is -advantage x that of the mean log-probability of the
    completion tokens, each read after its prompt and the completion before it: the prompt's tokens are no target."""
    torch.manual_seed(0)
    model = _Linear()
    turn = Turn(0, (1, 2, 3), (4, 5), None, advantage=1.0)
    policy_loss(model, [turn], 0, clip_eps=0.2, sequence_ratio=False).backward()
    got = _grads(model)
    model.zero_grad()
    (-sum(_token_logps(model, turn, grad=True)) / 2).backward()
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(got, _grads(model)))
    assert trained_ids([turn], 0) == [[4, 5]]


def test_turns_that_share_a_prompt_score_as_one_pass_per_turn():
    torch.manual_seed(0)
    model = _Linear()
    turns = [Turn(0, (1, 2, 3), (4, 5), None), Turn(0, (1, 2, 3), (6,), None), Turn(0, (1, 2), (3, 4, 5), None),
             Turn(0, (7,), (2, 2), None), Turn(0, (1, 2, 3), (4, 5), None)]
    from proofgym.training.rl._trainer import token_logprobs

    with torch.no_grad():
        logprobs, ids, mask = token_logprobs(model, turns, 0)
    for row, turn in enumerate(turns):
        assert ids[row][mask[row]].tolist() == list(turn.completion_ids)
        assert torch.allclose(logprobs[row][mask[row]], torch.tensor(_token_logps(model, turn)), atol=1e-5)


@pytest.mark.parametrize("sequence_ratio", [False, True])
def test_positive_advantage_raises_the_sampled_tokens_probability(sequence_ratio):
    torch.manual_seed(0)
    model = _Linear()
    turn = Turn(0, (1,), (2, 3), None, advantage=1.0)
    before = _logp(model, turn)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    for _ in range(3):
        optimizer.zero_grad()
        policy_loss(model, [turn], 0, clip_eps=0.2, sequence_ratio=sequence_ratio).backward()
        optimizer.step()
    assert _logp(model, turn) > before


def test_the_ratio_is_clipped_against_the_sampling_logprobs():
    model = _Linear()
    logp = _token_logps(model, Turn(0, (1,), (2,), None))
    # Sampled with a much lower probability: ratio >> 1 + eps, so a positive advantage gets no gradient.
    stale = Turn(0, (1,), (2,), (logp[0] - 5.0,), advantage=1.0)
    loss = policy_loss(model, [stale], 0, clip_eps=0.2, sequence_ratio=False)
    loss.backward()
    assert all(p.grad is None or p.grad.abs().sum() == 0 for p in model.parameters())


def _token_logps(model, turn, grad=False):
    """The completion tokens' log-probabilities from one pass over the turn's whole sequence."""
    ids = torch.tensor([list(turn.prompt_ids + turn.completion_ids)])
    logits = model(input_ids=ids).logits[0, :-1]
    values = torch.log_softmax(logits, -1).gather(-1, ids[0, 1:].unsqueeze(-1)).squeeze(-1)
    values = values[len(turn.prompt_ids) - 1:]
    return list(values) if grad else values.tolist()


def _logp(model, turn):
    with torch.no_grad():
        return sum(_token_logps(model, turn))


def _trace(steps_info, correct):
    steps = []
    for index, (tool, info) in enumerate(steps_info):
        call = LMCallEvent(model="m", response={"choices": [{"prompt_token_ids": [1, 2 + index],
                                                             "token_ids": [7, index + 3],
                                                             "logprobs": {"content": [{"logprob": -0.5},
                                                                                      {"logprob": -0.25}]}}]})
        steps.append(StepTrace(index=index, reward=1.0 if tool == "answer" and correct else 0.0, info=info,
                               lm_calls=[call], env_event=EnvEvent(tool=tool)))
    return SessionTrace(session_id="s", run_id="r", env_name="fact_finding", steps=steps,
                        outcome_reward=OutcomeReward(total=1.0 if correct else 0.0, steps=len(steps),
                                                     score=1.0 if correct else 0.0))


def test_sampled_turns_reads_the_recorded_ids_and_logprobs():
    trace = _trace([("get_fact", {"fact": "age", "relevant": True}), ("answer", {"correct": True})], True)
    turns = sampled_turns(trace)
    assert [t.completion_ids for t in turns] == [(7, 3), (7, 4)]
    assert turns[0].old_logprobs == (-0.5, -0.25)
    trace.steps[0].lm_calls[0].response["choices"][0].pop("token_ids")
    assert "token_ids" in sampled_turns(trace)


def test_sampled_turns_read_vllms_shape_the_prompt_ids_at_the_top():
    """vLLM (``return_token_ids: true``) answers the prompt's ids at the response's top level
    (``ChatCompletionResponse.prompt_token_ids``) and the completion's in each choice (``token_ids``)."""
    trace = _trace([("get_fact", {"fact": "age", "relevant": True}), ("answer", {"correct": True})], True)
    for step in trace.steps:
        response = step.lm_calls[0].response
        response["prompt_token_ids"] = response["choices"][0].pop("prompt_token_ids")
    turns = sampled_turns(trace)
    assert [(t.prompt_ids, t.completion_ids) for t in turns] == [((1, 2), (7, 3)), ((1, 3), (7, 4))]


def test_an_attempt_the_policy_retried_is_not_a_turn_but_a_step_without_a_completion_is_untrainable():
    trace = _trace([("get_fact", {"fact": "age", "relevant": True}), ("answer", {"correct": True})], True)
    timed_out = LMCallEvent(model="m", latency_s=60.0, error="no response within 60 s")
    trace.steps[1].lm_calls.insert(0, timed_out)  # then retried: the second call answered
    turns = sampled_turns(trace)
    assert [(t.step_index, t.completion_ids) for t in turns] == [(0, (7, 3)), (1, (7, 4))]
    trace.steps[1].lm_calls.append(timed_out)  # a call after the answer that got nothing: not a retried attempt
    assert sampled_turns(trace) == "step 1: the model call has no recorded completion (no response within 60 s)"
    trace.steps[0].lm_calls[:] = [timed_out]  # the step's only call failed
    assert sampled_turns(trace).startswith("step 0: the model call has no recorded completion")


def test_decision_values_add_up_to_the_blend_and_credit_the_useful_decision():
    trace = _trace([("get_fact", {"fact": "age", "relevant": True, "repeated": False}),
                    ("get_fact", {"fact": "age", "relevant": True, "repeated": True}),
                    ("answer", {"correct": True, "gold": "deny", "deciding": ["age"], "known": ["age"]})], True)
    score = RubricScorer(FACT_FINDING_RUBRICS).score_sync([trace])[0]
    values = decision_values(score, trace, indicator_lambda=1.0)
    assert math.isclose(sum(values), score.reward.value, abs_tol=1e-9)
    assert values[0] > values[1]  # the repeated call earns less than the first reveal


def test_an_answer_that_is_no_decision_scores_zero_not_an_abstention():
    trace = _trace([("answer", {"error": "unknown decision"})], False)
    score = RubricScorer(FACT_FINDING_RUBRICS).score_sync([trace])[0]
    assert score.outcome.total == 0.0 and not score.reward.abstained


@pytest.mark.parametrize("sequence_ratio", [False, True])
def test_length_bucketed_microbatches_give_the_whole_batch_gradient(sequence_ratio):
    from proofgym.training.rl._trainer import turn_microbatches

    torch.manual_seed(0)
    turns = [Turn(0, tuple(range(1, 1 + n % 5 + 1)), (2, 3, 4)[:1 + n % 3], None, advantage=float(n % 3 - 1))
             for n in range(11)]
    whole = _Linear()
    policy_loss(whole, turns, 0, clip_eps=0.2, sequence_ratio=sequence_ratio).backward()
    split = _Linear()
    split.load_state_dict(whole.state_dict())
    total = float(len(turns)) if sequence_ratio else float(sum(len(t.completion_ids) for t in turns))
    chunks = turn_microbatches(turns, parts=2, tokens=12)
    assert len(chunks) > 2 and sorted(map(id, sum(chunks, []))) == sorted(map(id, turns))
    for chunk in chunks:  # within the budget, as token_logprobs pads it: each distinct prompt once
        prompts = {t.prompt_ids for t in chunk}
        cost = len(prompts) * max(map(len, prompts)) + len(chunk) * max(len(t.completion_ids) for t in chunk)
        assert cost <= 12 or len(chunk) == 1
        policy_loss(split, chunk, 0, clip_eps=0.2, sequence_ratio=sequence_ratio, total=total).backward()
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(_grads(whole), _grads(split)))


@pytest.mark.parametrize("sequence_ratio", [False, True])
def test_the_kl_penalty_pulls_the_policy_back_to_the_reference(sequence_ratio):
    from proofgym.training.rl._trainer import token_logprobs

    torch.manual_seed(0)
    reference, model = _Linear(), _Linear()
    turns = [Turn(0, (1, 2), (3, 4), None, advantage=0.0), Turn(0, (5,), (6,), None, advantage=0.0)]
    with torch.no_grad():
        ref = token_logprobs(reference, turns, 0)[0]

    def gap():
        logp, _, mask = token_logprobs(model, turns, 0)
        return float(((logp.detach() - ref).abs() * mask).sum())

    assert policy_loss(model, turns, 0, clip_eps=0.2, sequence_ratio=sequence_ratio, reference_logprobs=ref,
                       kl_coef=0.0).item() == 0.0  # no advantage, no penalty: no loss
    before = gap()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(40):
        optimizer.zero_grad()
        policy_loss(model, turns, 0, clip_eps=0.2, sequence_ratio=sequence_ratio, reference_logprobs=ref,
                    kl_coef=1.0).backward()
        optimizer.step()
    assert gap() < before / 2


def test_microbatches_keep_the_turns_of_a_prompt_together():
    """Turns that share a prompt share its forward pass only within one microbatch: they are cut apart only when
    one prompt's turns alone pass the budget."""
    from proofgym.training.rl._trainer import turn_microbatches

    prompts = [tuple(range(1, 1 + n)) for n in (3, 5, 4)]
    turns = [Turn(0, prompts[i % 3], (2, 3)[:1 + i % 2], None) for i in range(12)]  # 4 turns per prompt, interleaved
    chunks = turn_microbatches(turns, tokens=5 + 4 * 2)  # one prompt of 5 and its 4 completions of 2 fit
    assert sorted(map(id, sum(chunks, []))) == sorted(map(id, turns))
    for prompt in prompts:
        assert sum(any(t.prompt_ids == prompt for t in chunk) for chunk in chunks) == 1
    assert [len(c[0].prompt_ids) for c in chunks] == sorted(len(c[0].prompt_ids) for c in chunks)  # by length
    assert len(turn_microbatches(turns, tokens=4)) == 12  # nothing fits together: one turn each
