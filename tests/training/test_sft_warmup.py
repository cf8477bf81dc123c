import math

import pytest

torch = pytest.importorskip("torch")

from proofgym.training import SFTConfig, demo_completion, demo_rows, sft_warmup  # noqa: E402
from proofgym.training._sft import _batch  # noqa: E402


def test_only_the_completion_and_its_end_token_are_labelled(small_model):
    _, tokenizer = small_model
    pairs = [("Grant application. short", "<decision>{}</decision>"),
             ("Grant application. a much longer prompt than the other one", "x")]
    batch = _batch(tokenizer, pairs, tokenizer.eos_token_id, "cpu")
    for row, (prompt, completion) in enumerate(pairs):
        labels = [t for t in batch["labels"][row].tolist() if t != -100]
        want = tokenizer(completion, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        assert labels == want  # no prompt token, no padding
        ids = batch["input_ids"][row][batch["attention_mask"][row] == 1].tolist()
        assert ids == tokenizer(prompt)["input_ids"] + want


def test_a_short_warm_up_lowers_the_loss(small_model):
    model, tokenizer = small_model
    rows = demo_rows(0, 32)
    pairs = [(row["prompt"], demo_completion(row["gold"], row["source_facts"])) for row in rows]
    seen = []
    config = SFTConfig(steps=12, batch_size=8, learning_rate=3e-3, warmup_steps=2)
    losses = sft_warmup(model, tokenizer, pairs, config=config, on_step=lambda step, loss: seen.append(step))
    assert len(losses) == 12 and seen == list(range(1, 13)) and all(math.isfinite(x) for x in losses)
    assert sum(losses[-3:]) / 3 < 0.8 * sum(losses[:3]) / 3


def test_examples_can_be_made_fresh_per_draw(small_model):
    model, tokenizer = small_model
    row = demo_rows(0, 1)[0]
    drawn = []

    def example(rng):
        decision = rng.choice(["permit", "deny"])
        drawn.append(decision)
        return row["prompt"], demo_completion(decision, row["source_facts"])

    sft_warmup(model, tokenizer, example, config=SFTConfig(steps=2, batch_size=16), seed=1)
    assert len(drawn) == 32 and {"permit", "deny"} == set(drawn)


@pytest.mark.parametrize("kwargs", [{"steps": 0}, {"batch_size": -1}, {"learning_rate": 0.0},
                                    {"warmup_steps": -2}, {"max_grad_norm": float("inf")}])
def test_bad_settings_are_rejected(kwargs):
    with pytest.raises(ValueError, match="SFTConfig"):
        SFTConfig(**kwargs)


def test_no_examples_is_an_error(small_model):
    model, tokenizer = small_model
    with pytest.raises(ValueError, match="at least one example"):
        sft_warmup(model, tokenizer, [])
