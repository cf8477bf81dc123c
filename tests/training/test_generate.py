"""Batched generation: greedy equals transformers' own, sampling draws from the whole vocabulary or its top k,
rows end at EOS."""

import pytest

torch = pytest.importorskip("torch")

from proofgym.training import demo_rows, generate  # noqa: E402
from proofgym.training._generate import encode_prompts  # noqa: E402


def _prompts(n):
    return [row["prompt"] for row in demo_rows(0, n)]


def _first_token_ranks(model, tokenizer, prompts, gen, num_samples):
    """Each row's first sampled token's rank in its prompt's next-token logits (0: the likeliest)."""
    ids, mask = encode_prompts(tokenizer, prompts)
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=mask,
                       position_ids=(mask.cumsum(-1) - 1).clamp(min=0)).logits[:, -1, :]
    logits = logits.repeat_interleave(num_samples, 0)
    return (logits > logits.gather(1, gen.completion_ids[:, :1])).sum(-1)


def test_greedy_completions_are_those_of_transformers_generate(warm_model):
    from transformers import GenerationConfig

    model, tokenizer = warm_model
    prompts = _prompts(12)
    ours = generate(model, tokenizer, prompts, greedy=True, max_new_tokens=20)
    ids, mask = encode_prompts(tokenizer, prompts)
    config = GenerationConfig(do_sample=False, max_new_tokens=20, eos_token_id=tokenizer.eos_token_id,
                              pad_token_id=tokenizer.pad_token_id)
    with torch.no_grad():
        theirs = model.generate(input_ids=ids, attention_mask=mask, generation_config=config)
    texts = tokenizer.batch_decode(theirs[:, ids.shape[1]:], skip_special_tokens=True)
    assert ours.texts == texts


def test_sampling_draws_from_the_whole_vocabulary_not_its_top_k(small_model):
    # An untrained model's next-token distribution is nearly flat over the vocabulary: pure ancestral sampling
    # draws tokens ranked far below 50 (transformers' generate() filled in top_k=50 unless told otherwise).
    model, tokenizer = small_model
    torch.manual_seed(0)
    prompts = _prompts(8)
    gen = generate(model, tokenizer, prompts, num_samples=16, max_new_tokens=1)
    assert int(_first_token_ranks(model, tokenizer, prompts, gen, 16).max()) >= 100


def test_top_k_samples_only_the_likeliest_tokens(small_model):
    model, tokenizer = small_model
    torch.manual_seed(0)
    prompts = _prompts(8)
    gen = generate(model, tokenizer, prompts, num_samples=16, max_new_tokens=1, temperature=2.0, top_k=5)
    assert int(_first_token_ranks(model, tokenizer, prompts, gen, 16).max()) < 5
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="top_k must be None or a positive integer"):
            generate(model, tokenizer, prompts[:1], top_k=bad)


def test_every_sample_of_a_prompt_starts_from_the_same_prompt_and_stops_at_its_end(warm_model):
    model, tokenizer = warm_model
    torch.manual_seed(0)
    gen = generate(model, tokenizer, _prompts(3), num_samples=4, max_new_tokens=24)
    assert gen.prompt_ids.shape[0] == gen.completion_ids.shape[0] == 12
    for p in range(3):
        assert all(gen.prompt_ids[p * 4 + i].equal(gen.prompt_ids[p * 4]) for i in range(4))
    eos = tokenizer.eos_token_id
    for row, mask, truncated in zip(gen.completion_ids.tolist(), gen.completion_mask.tolist(), gen.truncated):
        kept = [t for t, m in zip(row, mask) if m]
        assert truncated or (kept[-1] == eos and eos not in kept[:-1])
        assert all(t == tokenizer.pad_token_id for t, m in zip(row, mask) if not m)


def _token_ids(tokenizer, prompts):
    return [tokenizer(prompt)["input_ids"] for prompt in prompts]


def test_token_level_sampling_with_top_1_is_greedy_and_each_completion_ends_at_its_first_eos(warm_model):
    from proofgym.training import sample_token_ids

    model, tokenizer = warm_model
    prompts = _prompts(6)
    greedy = generate(model, tokenizer, prompts, greedy=True, max_new_tokens=20)
    eos = tokenizer.eos_token_id
    got = sample_token_ids(model, _token_ids(tokenizer, prompts), num_samples=3, temperature=1.0, max_new_tokens=20,
                           eos_ids=[eos], pad_id=tokenizer.pad_token_id, top_k=1)
    assert len(got) == 18
    for row, tokens in enumerate(got):
        expected = greedy.completion_ids[row // 3][greedy.completion_mask[row // 3].bool()].tolist()
        assert tokens == expected
        assert eos not in tokens[:-1] and (tokens[-1] == eos or len(tokens) == 20)


def test_token_level_sampling_draws_from_the_models_distribution(small_model):
    # The first token's frequencies over many samples follow the model's next-token probabilities.
    from proofgym.training import sample_token_ids

    model, tokenizer = small_model
    torch.manual_seed(0)
    prompt = _token_ids(tokenizer, _prompts(1))
    got = sample_token_ids(model, prompt, num_samples=4000, temperature=2.0, max_new_tokens=1,
                           eos_ids=[tokenizer.eos_token_id], pad_id=tokenizer.pad_token_id, top_k=5)
    counts, expected = _drawn_against_the_model(model, prompt[0], [tokens[0] for tokens in got], top_k=5)
    assert int(counts.sum()) == 4000  # nothing outside the top 5
    assert torch.allclose(counts / 4000, expected, atol=0.03)


def _drawn_against_the_model(model, ids, drawn, *, top_k, temperature=2.0):
    """How often each of the model's ``top_k`` likeliest next tokens after ``ids`` is among ``drawn``, and their
    probabilities at ``temperature`` renormalised over the top k."""
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0, -1, :] / temperature
    top = torch.topk(logits, top_k)
    counts = torch.tensor([drawn.count(int(t)) for t in top.indices], dtype=torch.float)
    return counts, torch.softmax(top.values, -1)


def test_token_level_sampling_refuses_what_it_cannot_sample(small_model):
    from proofgym.training import sample_token_ids

    model, tokenizer = small_model
    ok = {"eos_ids": [tokenizer.eos_token_id], "pad_id": tokenizer.pad_token_id}
    for kwargs, message in (({"num_samples": 0}, "num_samples and max_new_tokens must be >= 1"),
                            ({"temperature": 0.0}, "temperature must be > 0"),
                            ({"eos_ids": []}, "eos_ids must name")):
        with pytest.raises(ValueError, match=message):
            sample_token_ids(model, [[5, 6]], **{**ok, **kwargs})
    with pytest.raises(ValueError, match="every prompt needs at least one token"):
        sample_token_ids(model, [[5], []], **ok)


def test_each_sample_draws_its_next_token_from_its_own_prefix(small_model):
    # The samples of a prompt share one forward pass per distinct prefix: the second token's frequencies, among the
    # samples that drew a given first token, follow the model's distribution after that token.
    from proofgym.training import sample_token_ids

    model, tokenizer = small_model
    torch.manual_seed(0)
    prompt = _token_ids(tokenizer, _prompts(1))
    got = sample_token_ids(model, prompt, num_samples=6000, temperature=2.0, max_new_tokens=2,
                           eos_ids=[tokenizer.eos_token_id], pad_id=tokenizer.pad_token_id, top_k=3)
    firsts = [tokens[0] for tokens in got if len(tokens) == 2]
    for first in sorted(set(firsts), key=firsts.count)[-2:]:  # the two commonest first tokens
        seconds = [tokens[1] for tokens in got if len(tokens) == 2 and tokens[0] == first]
        counts, expected = _drawn_against_the_model(model, prompt[0] + [first], seconds, top_k=3)
        assert int(counts.sum()) == len(seconds) >= 1000
        assert torch.allclose(counts / len(seconds), expected, atol=0.05)


def test_samples_that_agree_so_far_run_as_one_row(warm_model):
    # With top_k=1 every sample of a prompt draws the same tokens: after the prompts' pass, each decoding step runs
    # one row per prompt, not one per sample.
    model, tokenizer = warm_model
    batch_rows = []
    hook = model.register_forward_pre_hook(lambda module, args, kwargs: batch_rows.append(kwargs["input_ids"].shape),
                                           with_kwargs=True)
    try:
        gen = generate(model, tokenizer, _prompts(3), num_samples=8, max_new_tokens=12, top_k=1)
    finally:
        hook.remove()
    assert gen.completion_ids.shape[0] == 24
    assert batch_rows[0][0] == 3 and len(batch_rows) > 1
    assert all(shape == (rows, 1) and rows <= 3 for shape in batch_rows[1:] for rows in [shape[0]])
