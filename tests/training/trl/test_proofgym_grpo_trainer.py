"""proofgym's GRPOTrainer: the curriculum as TRL's sampler, dynamic sampling, the KL reference, the schedule."""

from collections import defaultdict

import pytest

pytest.importorskip("trl")

import torch  # noqa: E402
from transformers import TrainerCallback  # noqa: E402

from proofgym.config import ConfigError, parse_run_config  # noqa: E402
from proofgym.training import build_grpo_trainer  # noqa: E402
from proofgym.training.trl._run import curriculum, training_rows  # noqa: E402
from proofgym.training.trl._trainer import CurriculumSampler, ProofgymGRPOTrainer  # noqa: E402
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
    return parse_run_config({**DEMO_RUN_CONFIG, "training": train})


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
    rows, heldout = training_rows(run, run.training, tokenizer=None)
    assert heldout == demo_rows(HELDOUT_SEED, 1000, heldout=True)
    assert len(rows) == 64 and all("cell" in row and row["prompt"].startswith("Grant application:") for row in rows)
    assert isinstance(curriculum(run.training, rows), BranchCurriculum)
    bad = _run(tmp_path, curriculum={"key": "region"})
    with pytest.raises(ConfigError, match="training.curriculum: training row 0 has no 'region' column"):
        curriculum(bad.training, rows)


def test_contrast_adds_the_demos_income_pairs_and_needs_the_compact_format(tmp_path):
    from proofgym.training import contrast_rows

    run = _run(tmp_path, dataset={"contrast": True})
    rows, heldout = training_rows(run, run.training, tokenizer=None)
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
    trainer._sampled_at = None
    rows = [{"id": i} for i in range(3)]
    trainer.rows = rows
    wrong = {id(rows[1])}  # row 1's last group: every sample wrong
    trainer.curriculum = type("Curriculum", (), {"last_error": lambda self, row: 1.0 if id(row) in wrong else 0.5})()
    seen = []

    def generate(self, inputs):
        seen.append(([int(x["row_index"]) for x in inputs], self.generation_config.temperature,
                     self.generation_kwargs["temperature"], self._sampled_at))
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
    assert seen == [([0, 0, 2, 2], 1.0, 1.0, 1.0), ([1, 1], 2.0, 2.0, 2.0)]
    assert trainer.generation_config.temperature == 1.0 and trainer.generation_kwargs["temperature"] == 1.0
    assert trainer._sampled_at is None
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
    rows, _ = training_rows(run, run.training, tokenizer)
    drawn = curriculum(run.training, rows)
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
    from proofgym.training.trl._trainer import WeightAverageCallback

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
    from proofgym.training.trl._run import load_model

    run = parse_run_config({**DEMO_RUN_CONFIG, "training": {
        "model": "proofgym:tiny", "model_cache_dir": str(tmp_path), "output_dir": str(tmp_path),
        "tiny_model": {"hidden_size": 64, "num_layers": 2, "num_heads": 2, "intermediate_size": 96},
        "dataset": {"domain": "grant_eligibility", "prompt_format": "compact", "n": 8}}})
    model, _ = load_model(run.training)
    shape = model.config
    assert (shape.hidden_size, shape.num_hidden_layers, shape.num_attention_heads, shape.intermediate_size) == \
        (64, 2, 2, 96)


def _built(tiny, tmp_path, **grpo):
    model, tokenizer = tiny
    run = _run(tmp_path, **grpo)
    rows, _ = training_rows(run, run.training, tokenizer)
    return build_grpo_trainer(run, model, rows, tokenizer=tokenizer, config_overrides={"disable_tqdm": True})


def test_proofgym_decodes_each_group_once_and_trl_generates_where_sampling_is_not_plain(tiny, tmp_path, monkeypatch):
    import proofgym.training as training
    from trl import GRPOTrainer

    calls = []
    real = training.sample_token_ids

    def spy(model, prompts, **kwargs):
        calls.append((len(prompts), kwargs["num_samples"], kwargs["temperature"], kwargs["top_k"]))
        return real(model, prompts, **kwargs)

    monkeypatch.setattr(training, "sample_token_ids", spy)
    trainer = _built(tiny, tmp_path, top_k=7, temperature=1.5)
    try:
        prompts = [[5, 6, 7]] * 4 + [[8, 9]] * 4
        completions, logprobs = trainer._generate_single_turn(prompts, None, {}, 4)
        # Two groups of four: each prompt decoded once for its four samples, at the configured sampling.
        assert calls == [(2, 4, 1.5, 7)] and len(completions) == 8 and logprobs is None
        eos = set(trainer.eos_token_ids)
        assert all(c and all(t not in eos for t in c[:-1]) and len(c) <= 24 for c in completions)
        # Prompts that are not in groups: one sample each.
        trainer._generate_single_turn([[5, 6], [8, 9], [5, 6], [7]], None, {}, 4)
        assert calls[-1][:2] == (4, 1)
        # Sampling that is not plain temperature / top-k: TRL's own generate().
        theirs = []
        monkeypatch.setattr(GRPOTrainer, "_generate_single_turn",
                            lambda self, *a, **k: theirs.append(a) or ([[1]] * len(a[0]), None))
        trainer.generation_config.top_p = 0.9
        trainer._generate_single_turn(prompts, None, {}, 4)
        assert len(theirs) == 1 and len(calls) == 2
    finally:
        trainer.reward_funcs[0].close()
    transformers = _built(tiny, tmp_path, engine="trl")
    try:
        transformers._generate_single_turn([[5, 6]], None, {}, 1)
        assert len(theirs) == 2 and len(calls) == 2
    finally:
        transformers.reward_funcs[0].close()


def test_the_engine_setting_is_checked():
    with pytest.raises(ConfigError, match="engine"):
        _run("out", engine="vllm")
    with pytest.raises(ValueError, match="engine must be 'proofgym' or 'trl'"):
        ProofgymGRPOTrainer.__init__(ProofgymGRPOTrainer.__new__(ProofgymGRPOTrainer), model=None,
                                     args=type("Args", (), {"beta": 0.0})(), engine="vllm")


def test_shared_prompt_log_probabilities_and_gradients_are_trls_own(tiny, tmp_path, monkeypatch):
    import proofgym.training as training
    from trl import GRPOTrainer

    shared = []
    real = training.shared_prompt_logprobs
    monkeypatch.setattr(training, "shared_prompt_logprobs", lambda *a, **k: shared.append(a[1]) or real(*a, **k))
    trainer = _built(tiny, tmp_path, temperature=1.5)
    try:
        model = trainer.model
        pad = trainer._tokenizer.pad_token_id
        # Two groups: prompts left-padded to one width, completions right-padded (the second group's shorter).
        prompts = [[pad, pad, 5, 6, 7]] * 3 + [[8, 9, 10, 11, 12]] * 3
        completions = [[20, 21, 22, 2], [23, 24, pad, pad], [25, 2, pad, pad], [26, 27, 28, 29], [30, 2, pad, pad],
                       [31, 32, 33, 2]]
        ids = torch.tensor([p + c for p, c in zip(prompts, completions)])
        mask = (ids != pad).long()
        assert trainer._shares_prompts(model, ids, 4, False, {"pixel_values": None})
        assert not trainer._shares_prompts(model, ids, 4, False, {"pixel_values": torch.ones(1)})
        assert not trainer._shares_prompts(model, ids, 4, True, {})
        trainer.args.gradient_checkpointing = True  # it turns the prompt's cache off: TRL's own passes
        assert not trainer._shares_prompts(model, ids, 4, False, {}) and not trainer._decodes_itself(None, {})
        trainer.args.gradient_checkpointing = False

        def run(function):
            model.zero_grad()
            logps, entropies, _ = function(trainer, model, ids, mask, 4, compute_entropy=True)
            (logps * mask[:, -4:]).sum().backward()
            grads = [p.grad.clone() for p in model.parameters() if p.grad is not None]
            return logps.detach() * mask[:, -4:], entropies * mask[:, -4:], grads

        ours = run(ProofgymGRPOTrainer._get_per_token_logps_and_entropies)
        theirs = run(GRPOTrainer._get_per_token_logps_and_entropies)
        assert shared == [[[5, 6, 7]] * 3 + [[8, 9, 10, 11, 12]] * 3]  # ours ran, with the prompts unpadded
        assert torch.allclose(ours[0], theirs[0], atol=1e-5) and torch.allclose(ours[1], theirs[1], atol=1e-5)
        assert len(ours[2]) == len(theirs[2]) > 0
        assert all(torch.allclose(a, b, atol=1e-5, rtol=1e-4) for a, b in zip(ours[2], theirs[2]))
        # Rows sampled hotter (explore_temperature) are scored at their own temperature, as the compact loop does.
        trainer._loss_temperatures = torch.tensor([1.5] * 3 + [3.0] * 3)
        with torch.no_grad():
            mixed = trainer._get_per_token_logps_and_entropies(model, ids, mask, 4)[0]
            cold = real(model, [p[2:] for p in prompts[:3]], completions[:3], pad_id=pad, temperature=1.5)
            hot = real(model, prompts[3:], completions[3:], pad_id=pad, temperature=3.0)
        trainer._loss_temperatures = None
        keep = mask[:, -4:].bool()
        assert torch.allclose(mixed[keep], torch.cat([cold, hot])[keep], atol=1e-5)
        assert not torch.allclose(mixed[3:][keep[3:]], theirs[0][3:][keep[3:]], atol=1e-3)
        # A vocabulary whose logits would not fit: TRL's fused LM head.
        import proofgym.training.trl._trainer as module

        limit = module._SHARED_LOGITS_BYTES
        module._SHARED_LOGITS_BYTES = 6 * 4 * 4 * model.config.vocab_size - 1
        try:
            assert not trainer._shares_prompts(model, ids, 4, False, {})
        finally:
            module._SHARED_LOGITS_BYTES = limit
    finally:
        trainer.reward_funcs[0].close()


def test_a_steps_metrics_weigh_each_generation_round_by_its_completions():
    # An explored round of 8 hot samples beside a round of 128: TRL would log the plain mean of the two.
    trainer = ProofgymGRPOTrainer.__new__(ProofgymGRPOTrainer)
    trainer._metrics = {"train": defaultdict(list)}
    metrics = trainer._metrics["train"]
    metrics["proofgym/format_ok_share"].append(0.5)  # an earlier step's entry, left alone
    logged = {name: len(values) for name, values in metrics.items()}
    trainer._round_sizes = [128, 8]
    for name, first, second in (("proofgym/format_ok_share", 1.0, 0.25), ("completions/min_length", 7.0, 3.0),
                                ("completions/max_length", 20.0, 24.0),
                                ("completions/mean_terminated_length", 12.0, float("nan"))):
        metrics[name] += [first, second]
    metrics["proofgym/sampling_rounds"].append(2.0)  # not one entry per round: left alone
    trainer._weigh_round_metrics(logged)
    assert metrics["proofgym/format_ok_share"] == [0.5, pytest.approx((128 + 0.25 * 8) / 136)]
    assert metrics["completions/min_length"] == [3.0] and metrics["completions/max_length"] == [24.0]
    assert metrics["completions/mean_terminated_length"] == [12.0]
    assert metrics["proofgym/sampling_rounds"] == [2.0]
    trainer._round_sizes = [128]  # one round: nothing to fold
    metrics["reward"] += [1.0]
    trainer._weigh_round_metrics({})
    assert metrics["reward"] == [1.0]


def test_the_heldout_callback_scores_the_kept_weights_and_stops_after_two_evaluations_at_the_threshold():
    from types import SimpleNamespace

    from transformers import TrainerControl

    from proofgym.training.trl._trainer import HeldoutCallback, WeightAverageCallback
    from proofgym.training import HeldoutReport

    def report(*correct):  # two branches of 10 rows
        return HeldoutReport(n=20, accuracy=sum(correct) / 20,
                             per_branch={"deny": (correct[0], 10), "permit": (correct[1], 10)})

    scores = iter([report(5, 10), report(10, 9), report(9, 9), report(10, 10)])
    scored, messages = [], []

    def evaluate(model):  # what the model computes, through its forward, when scored
        scored.append(float(model(torch.ones(1, 1))))
        return next(scores)

    live = torch.nn.Linear(1, 1, bias=False)
    # As TRL patches the policy: an instance forward over the policy's own bound method, which a copy keeps.
    original = live.forward
    live.forward = lambda *a, **k: original(*a, **k)
    with torch.no_grad():
        live.weight.fill_(0.0)
    average = WeightAverageCallback(0.5)
    average.on_train_begin(None, None, None, model=live)
    with torch.no_grad():
        live.weight.fill_(4.0)
    average.on_step_end(None, None, None, model=live)  # the average: 0.1 * 0 + 0.9 * 4
    callback = HeldoutCallback(evaluate, every=2, stop_at=0.9, average=average, on_status=messages.append)
    control = TrainerControl()
    for step in range(1, 11):
        callback.on_step_end(None, SimpleNamespace(global_step=step, max_steps=10), control, model=live)
        if control.should_training_stop:
            break
    # Steps 2, 4, 6: 50 % on one branch, then 90 % and 90 %: two in a row at 0.9, so it stops at step 6.
    assert [step for step, _ in callback.evaluations] == [2, 4, 6] and step == 6
    # Each evaluation ran the average's weights, and the live weights are back after it.
    assert callback.stopped_early and scored == [pytest.approx(3.6)] * 3 and float(live.weight) == 4.0
    assert messages[0] == "held-out at step 2: 75.0%, worst branch deny 50.0%" and "stopping at step 6" in messages[-1]
    # Without a threshold it never stops; without an average it scores the live policy; the last step is left to
    # the evaluation after training.
    scores = iter([report(10, 10)] * 5)
    plain = HeldoutCallback(evaluate, every=2)
    control = TrainerControl()
    for step in range(1, 11):
        plain.on_step_end(None, SimpleNamespace(global_step=step, max_steps=10), control, model=live)
    assert [step for step, _ in plain.evaluations] == [2, 4, 6, 8] and not control.should_training_stop
    assert scored[-1] == 4.0 and not plain.stopped_early
    with pytest.raises(ValueError, match="every must be >= 1"):
        HeldoutCallback(evaluate, every=0)


def test_heldout_evaluations_during_training_are_checked():
    with pytest.raises(ConfigError, match="stop_at needs every > 0"):
        parse_run_config({**DEMO_RUN_CONFIG, "training": {"model": "proofgym:tiny", "heldout": {"stop_at": 0.9},
                                                       "dataset": {"domain": "grant_eligibility"}}})
    with pytest.raises(ConfigError, match="heldout.every needs held-out rows"):
        parse_run_config({**DEMO_RUN_CONFIG, "training": {"model": "proofgym:tiny", "heldout": {"n": 0, "every": 5},
                                                       "dataset": {"domain": "grant_eligibility"}}})
    with pytest.raises(ConfigError, match="stop_at"):
        parse_run_config({**DEMO_RUN_CONFIG, "training": {"model": "proofgym:tiny",
                                                       "heldout": {"every": 5, "stop_at": 1.5},
                                                       "dataset": {"domain": "grant_eligibility"}}})


def test_a_lora_run_samples_and_scores_through_proofgyms_engine(tiny, tmp_path, monkeypatch):
    pytest.importorskip("peft")
    import proofgym.training as training

    used = []
    for name in ("sample_token_ids", "shared_prompt_logprobs"):
        real = getattr(training, name)
        monkeypatch.setattr(training, name,
                            lambda *a, _real=real, _name=name, **k: used.append(_name) or _real(*a, **k))
    model, tokenizer = tiny
    run = _run(tmp_path, kl_beta=0.05, updates_per_generation=2)
    lora = parse_run_config({
        **DEMO_RUN_CONFIG, "training": {"model": "proofgym:tiny", "dataset": {"domain": "grant_eligibility"},
                                        "lora": {"r": 4, "alpha": 8, "target_modules": ["q_proj", "v_proj"]}},
    }).training.lora
    run = run.model_copy(update={"training": run.training.model_copy(update={"lora": lora})})
    rows, _ = training_rows(run, run.training, tokenizer)
    trainer = build_grpo_trainer(run, model, rows, tokenizer=tokenizer, config_overrides={"disable_tqdm": True})
    try:
        trainer.train()
    finally:
        trainer.reward_funcs[0].close()
    assert trainer.state.global_step == 4
    # Two generations sampled by proofgym; the policy's and the reference's (adapters off) log-probabilities too.
    assert used.count("sample_token_ids") == 2 and used.count("shared_prompt_logprobs") >= 6
