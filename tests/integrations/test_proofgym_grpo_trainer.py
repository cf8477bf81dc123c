"""proofgym's GRPOTrainer: the curriculum as TRL's sampler, dynamic sampling, the KL reference, the schedule."""

from collections import defaultdict

import pytest

pytest.importorskip("trl")

import torch  # noqa: E402
from transformers import TrainerCallback  # noqa: E402

from proofgym.config import ConfigError, parse_run_config  # noqa: E402
from proofgym.integrations import build_grpo_trainer  # noqa: E402
from proofgym.integrations._train_run import curriculum, training_rows  # noqa: E402
from proofgym.integrations._trl_trainer import CurriculumSampler, ProofgymGRPOTrainer  # noqa: E402
from proofgym.training import BranchCurriculum, demo_rows  # noqa: E402
from proofgym.training._demo import HELDOUT_SEED  # noqa: E402
from proofgym.training._demo_task import DEMO_RUN_CONFIG  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")


def _run(tmp_path, curriculum=None, dataset=None, **grpo):
    train = {"model": "proofgym:tiny", "output_dir": str(tmp_path), "seed": 0,
             "dataset": {"domain": "grant_eligibility", "prompt_format": "compact", "n": 64, **(dataset or {})},
             "grpo": {"group_size": 4, "batch_size": 4, "steps": 4, "learning_rate": 1e-3, "warmup_steps": 2,
                      "min_lr_ratio": 0.1, "max_completion_length": 24, **grpo}}
    if curriculum is not None:
        train["curriculum"] = curriculum
    return parse_run_config({**DEMO_RUN_CONFIG, "train": train})


class _Logs(TrainerCallback):
    def __init__(self):
        self.logs = []

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "loss" in logs:
            self.logs.append(dict(logs))


def test_the_curriculum_sampler_repeats_each_draw_once_per_sample():
    draws = iter([[3, 1], [0, 2]])
    sampler = CurriculumSampler(lambda k: next(draws), prompts=2, group_size=3, generations=2)
    assert len(sampler) == 12
    assert list(sampler) == [3, 3, 3, 1, 1, 1, 0, 0, 0, 2, 2, 2]


def test_compact_rows_are_the_demos_and_a_curriculum_key_every_row_lacks_is_refused(tmp_path):
    run = _run(tmp_path, curriculum={"key": "cell"})
    rows, heldout = training_rows(run, run.train, tokenizer=None)
    assert heldout == demo_rows(HELDOUT_SEED, 1000, heldout=True)
    assert len(rows) == 64 and all("cell" in row and row["prompt"].startswith("Grant application:") for row in rows)
    assert isinstance(curriculum(run.train, rows), BranchCurriculum)
    bad = _run(tmp_path, curriculum={"key": "region"})
    with pytest.raises(ConfigError, match="train.curriculum: training row 0 has no 'region' column"):
        curriculum(bad.train, rows)


def test_contrast_adds_the_demos_income_pairs_and_needs_the_compact_format(tmp_path):
    from proofgym.training import contrast_rows

    run = _run(tmp_path, dataset={"contrast": True})
    rows, heldout = training_rows(run, run.train, tokenizer=None)
    plain = demo_rows(0, 64, exclude=heldout)
    assert rows == plain + contrast_rows(plain, seed=0, exclude=heldout) and len(rows) > len(plain)
    with pytest.raises(ConfigError, match="contrast: true .* needs prompt_format: compact"):
        _run(tmp_path, dataset={"contrast": True, "prompt_format": "record"})


def test_dynamic_sampling_keeps_the_groups_with_a_spread_and_pads_them_together():
    trainer = ProofgymGRPOTrainer.__new__(ProofgymGRPOTrainer)
    trainer.num_generations = 2
    trainer.processing_class = type("Tok", (), {"pad_token_id": 9})()

    def output(prompt_width, completion_width, advantages):
        b = len(advantages)
        return {"prompt_ids": torch.ones(b, prompt_width, dtype=torch.long),
                "prompt_mask": torch.ones(b, prompt_width, dtype=torch.long),
                "completion_ids": torch.full((b, completion_width), 5),
                "completion_mask": torch.ones(b, completion_width, dtype=torch.long),
                "ref_per_token_logps": torch.full((b, completion_width), -1.0),
                "advantages": torch.tensor(advantages), "num_items_in_batch": torch.tensor(0)}

    # Round 1: group 0 flat, group 1 with a spread; round 2 (wider): both groups with a spread.
    first = output(3, 2, [0.0, 0.0, 1.0, -1.0])
    second = output(4, 3, [0.5, -0.5, 2.0, -2.0])
    merged = trainer._merge([([], first, []), ([], second, [])], groups=2)
    assert merged["advantages"].tolist() == [1.0, -1.0, 0.5, -0.5]
    assert merged["prompt_ids"].shape == (4, 4) and merged["prompt_ids"][0].tolist() == [9, 1, 1, 1]
    assert merged["prompt_mask"][0].tolist() == [0, 1, 1, 1]
    assert merged["completion_ids"][0].tolist() == [5, 5, 9] and merged["completion_mask"][0].tolist() == [1, 1, 0]
    assert merged["ref_per_token_logps"][0].tolist() == [-1.0, -1.0, 0.0]
    assert int(merged["num_items_in_batch"]) == 2 * 2 + 2 * 3
    # No group with a spread at all: the first round as it came.
    flat = output(3, 2, [0.0, 0.0, 0.0, 0.0])
    assert trainer._merge([([], flat, [])], groups=2) is flat


def test_a_step_that_found_fewer_groups_with_a_spread_scales_its_loss_by_the_share_found(monkeypatch):
    from trl import GRPOTrainer

    trainer = ProofgymGRPOTrainer.__new__(ProofgymGRPOTrainer)
    trainer.num_generations, trainer.max_sampling_rounds, trainer.curriculum = 2, 2, None
    trainer.dynamic_sampling, trainer.scale_partial_batches, trainer._loss_scale = True, True, 1.0
    trainer.explore_temperature = 1.0
    trainer.processing_class = type("Tok", (), {"pad_token_id": 9})()
    trainer.model = torch.nn.Linear(1, 1)
    trainer._metrics = {"train": defaultdict(list)}
    trainer._reuses_first_logps = lambda: False
    trainer.draw_indices = lambda k: [0] * k
    trainer.train_dataset = [{"prompt": "p"}]
    flat = {"advantages": torch.tensor([0.0, 0.0, 0.0, 0.0, 1.0, -1.0, 0.0, 0.0])}  # 1 of 4 groups has a spread
    rounds = iter([flat, flat])

    def generate(self, inputs):
        self._last_correct = [False] * len(inputs)
        return dict(next(rounds))

    monkeypatch.setattr(ProofgymGRPOTrainer, "_generate_round", generate)
    trainer._merge = lambda rounds_, groups: rounds_[0][1]
    trainer._generate_and_score_completions([{"prompt": "p"}] * 8)
    assert trainer._loss_scale == pytest.approx(2 / 4)  # 1 group found in each of 2 rounds, of a quota of 4
    assert trainer._metrics["train"]["proofgym/loss_scale"] == [0.5]
    monkeypatch.setattr(GRPOTrainer, "compute_loss", lambda self, model, inputs, **kw: torch.tensor(3.0))
    assert float(trainer.compute_loss(trainer.model, {"old_per_token_logps": 1})) == pytest.approx(1.5)
    trainer.model.eval()  # evaluation losses are not scaled
    assert float(trainer.compute_loss(trainer.model, {"old_per_token_logps": 1})) == pytest.approx(3.0)


def test_prompts_every_sample_answered_wrong_are_sampled_hotter_in_a_generation_of_their_own(monkeypatch):
    trainer = ProofgymGRPOTrainer.__new__(ProofgymGRPOTrainer)
    trainer.num_generations, trainer.temperature, trainer.explore_temperature = 2, 1.0, 2.0
    trainer.processing_class = type("Tok", (), {"pad_token_id": 9})()
    trainer._metrics = {"train": defaultdict(list)}
    trainer.generation_config = type("Config", (), {"temperature": 1.0})()
    trainer.generation_kwargs = {"temperature": 1.0}
    rows = [{"id": i} for i in range(3)]
    trainer.rows = rows
    wrong = {id(rows[1])}  # row 1's last group: every sample wrong
    trainer.curriculum = type("Curriculum", (), {"last_error": lambda self, row: 1.0 if id(row) in wrong else 0.5})()
    seen = []

    def generate(self, inputs):
        seen.append(([int(x["row_index"]) for x in inputs], self.generation_config.temperature,
                     self.generation_kwargs["temperature"]))
        b = len(inputs)
        self._last_correct = [int(x["row_index"]) == 1 for x in inputs]
        return {"prompt_ids": torch.ones(b, 2, dtype=torch.long), "prompt_mask": torch.ones(b, 2, dtype=torch.long),
                "completion_ids": torch.full((b, 2), 5), "completion_mask": torch.ones(b, 2, dtype=torch.long),
                "advantages": torch.tensor([float(x["row_index"]) for x in inputs]),
                "num_items_in_batch": torch.tensor(0)}

    monkeypatch.setattr(ProofgymGRPOTrainer, "_generate_round", generate)
    inputs = [{"row_index": i} for i in (0, 0, 1, 1, 2, 2)]
    ordered, output = trainer._generate_explored(inputs)
    # Rows 0 and 2 at the base temperature, then row 1 hotter; the temperature is restored after.
    assert seen == [([0, 0, 2, 2], 1.0, 1.0), ([1, 1], 2.0, 2.0)]
    assert trainer.generation_config.temperature == 1.0 and trainer.generation_kwargs["temperature"] == 1.0
    assert [x["row_index"] for x in ordered] == [0, 0, 2, 2, 1, 1]
    assert output["advantages"].tolist() == [0.0, 0.0, 2.0, 2.0, 1.0, 1.0]  # every group, flat ones too
    assert trainer._last_correct == [False, False, False, False, True, True]
    assert trainer._metrics["train"]["proofgym/explored_groups"] == [1.0]
    # Nothing to explore: one generation, as it came.
    wrong.clear()
    seen.clear()
    assert trainer._generate_explored(inputs)[0] is inputs and len(seen) == 1


def test_a_curriculum_run_through_trl_feeds_the_curriculum_and_keeps_the_in_memory_reference(tiny, tmp_path):
    model, tokenizer = tiny
    run = _run(tmp_path, curriculum={"key": "cell", "replay": 0.25}, kl_beta=0.05, updates_per_generation=2,
               dynamic_sampling=True, max_sampling_rounds=2, temperature=1.5, scale_partial_batches=True,
               explore_temperature=2.0)
    rows, _ = training_rows(run, run.train, tokenizer)
    drawn = curriculum(run.train, rows)
    with torch.no_grad():  # a change made in memory only (as a warm-up makes): the KL reference must have it
        model.model.norm.weight.mul_(0.5)
    logs = _Logs()
    trainer = build_grpo_trainer(run, model, rows, tokenizer=tokenizer, callbacks=[logs], curriculum=drawn,
                                 config_overrides={"disable_tqdm": True})
    reference = dict(trainer.ref_model.named_parameters())
    assert torch.equal(reference["model.norm.weight"], model.model.norm.weight)
    try:
        trainer.train()
    finally:
        trainer.reward_funcs[0].close()
    assert trainer.state.global_step == 4 and len(logs.logs) == 4
    # The compact loop's schedule: the first update already moves (TRL's linear warm-up starts at 0).
    rates = [log["learning_rate"] for log in logs.logs]
    assert rates[0] == pytest.approx(1e-3 / 2) and rates[1] == pytest.approx(1e-3)
    # Two generations (steps 1 and 3), each trained on twice; the second update reuses the first's log-probs.
    generations = [log for log in logs.logs if "reward" in log]
    assert len(generations) == 2
    assert all(1 <= log["proofgym/sampling_rounds"] <= 2 for log in generations)
    assert all(0.0 <= log["proofgym/loss_scale"] <= 1.0 for log in generations)
    assert trainer._reuses_first_logps() and "old_per_token_logps" in trainer._buffered_inputs[0]
    # The curriculum heard how each drawn row was answered.
    assert drawn.accuracy != dict.fromkeys(drawn.branches, 0.5)


def test_the_weight_average_follows_the_steps_and_replaces_the_weights_at_the_end():
    from proofgym.integrations._trl_trainer import WeightAverageCallback

    model = torch.nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        model.weight.fill_(0.0)
    average = WeightAverageCallback(0.5)
    average.on_train_begin(None, None, None, model=model)
    for value in (1.0, 1.0, 1.0):
        with torch.no_grad():
            model.weight.fill_(value)
        average.on_step_end(None, None, None, model=model)
    # Decay min(0.5, (1 + n) / (10 + n)) at update n: 1/10, 2/11, 3/12.
    expected = 0.0
    for n in range(3):
        decay = min(0.5, (1 + n) / (10 + n))
        expected = decay * expected + (1 - decay) * 1.0
    average.on_train_end(None, None, None, model=model)
    assert model.weight.item() == pytest.approx(expected) and expected < 1.0
    with pytest.raises(ValueError, match="decay must be in"):
        WeightAverageCallback(1.0)


def test_the_tiny_model_is_built_in_the_configured_shape(tmp_path):
    from proofgym.integrations._train_run import load_model

    run = parse_run_config({**DEMO_RUN_CONFIG, "train": {
        "model": "proofgym:tiny", "model_cache_dir": str(tmp_path), "output_dir": str(tmp_path),
        "tiny_model": {"hidden_size": 64, "num_layers": 2, "num_heads": 2, "intermediate_size": 96},
        "dataset": {"domain": "grant_eligibility", "prompt_format": "compact", "n": 8}}})
    model, _ = load_model(run.train)
    shape = model.config
    assert (shape.hidden_size, shape.num_hidden_layers, shape.num_attention_heads, shape.intermediate_size) == \
        (64, 2, 2, 96)
