"""The stop rule (``evaluation.stop_at`` held at ``stop_streak`` evaluations in a row, then a confirmation on
``confirm_seeds``) and the held-out split by gold decision, in the notes, the metrics and the run's summary."""

from __future__ import annotations

import csv
import json
import math

import pytest

pytest.importorskip("torch", reason="the RL trainer needs torch (pip install -e '.[train]')")
pytest.importorskip("transformers", reason="the RL trainer needs transformers (pip install -e '.[train]')")

from proofgym.config import ConfigError  # noqa: E402
from proofgym.domains import gold_decision  # noqa: E402
from proofgym.envs import make  # noqa: E402
from proofgym.training.rl import RLTrainer  # noqa: E402
from proofgym.training.rl._heldout import Evaluation, goal_streak  # noqa: E402
from proofgym.traces import TraceStore  # noqa: E402

from ._run import tiny_config  # noqa: E402


#: Turns enough for the oracle's longest episode (4 facts, then the answer).
_ORACLE_TURNS = {"max_turns": 5}


def _gold(seed: int) -> str:
    env = make("fact_finding")
    return gold_decision(env.domain, env.record_for(seed).facts)


def _evaluations_by(monkeypatch, answers):
    """Held-out rollouts (greedy) played on the real task app by the environment's oracle on the seeds ``answers``
    picks, and on the others by a script that asks a fact every turn and never answers; training rollouts stay the
    model's. The trainer reads them as it reads the model's."""
    original = RLTrainer._request
    fact = make("fact_finding").reset(0).data["facts"][0]

    def request(self, seed, cid, *, greedy):
        body = original(self, seed, cid, greedy=greedy)
        if greedy:
            body["policy"] = ({"policy_name": "oracle", "config": {}} if answers(seed) else
                              {"policy_name": "scripted",
                               "config": {"actions": [{"tool": "get_fact", "args": {"name": fact}}] * 5}})
            body["trace_correlation_id"] = cid  # (the model's requests carry it in their inference_url)
        return body

    monkeypatch.setattr(RLTrainer, "_request", request)


def test_the_run_stops_after_the_streak_and_a_confirmation_on_fresh_seeds(tmp_path, monkeypatch):
    _evaluations_by(monkeypatch, lambda seed: True)
    notes: list[str] = []
    output = tmp_path / "run"
    config = tiny_config(output, training={"iterations_per_epoch": 5, "warmup_steps": 0}, rollout=_ORACLE_TURNS,
                         evaluation={"every_n_iters": 1, "stop_at": 0.9, "confirm_seeds": "20-27"})
    result = RLTrainer(config, on_note=notes.append).run()
    # iteration 1 is the first of the two evaluations in a row at >= 0.9; at iteration 2 the confirmation holds
    assert result.iterations == 2 and result.reached_at == 2
    assert any("at 1 of the 2 evaluations in a row" in n for n in notes)
    assert any("reached evaluation.stop_at = 0.9 at 2 evaluations in a row and 100.0% on the 8 "
               "evaluation.confirm_seeds at iteration 2" in n for n in notes), notes
    rows = list(csv.DictReader(result.metrics_csv.open()))
    assert [r["eval_success"] for r in rows] == ["1.0", "1.0"] and rows[1]["confirm_success"] == "1.0"
    summary = json.loads(result.summary.read_text())
    assert summary["reached_at"] == 2 and summary["confirmation"]["n_seeds"] == 8
    assert summary["confirmation"]["success"] == 1.0


def test_a_failed_confirmation_keeps_the_run_going_and_every_evaluation_is_split_by_gold_decision(tmp_path,
                                                                                                 monkeypatch):
    confirm = list(range(20, 32))
    _evaluations_by(monkeypatch, lambda seed: seed not in confirm or seed % 2 == 0)
    notes: list[str] = []
    output = tmp_path / "run"
    config = tiny_config(output, training={"iterations_per_epoch": 3, "warmup_steps": 0}, rollout=_ORACLE_TURNS,
                         evaluation={"every_n_iters": 1, "stop_at": 0.9, "confirm_seeds": confirm})
    result = RLTrainer(config, on_note=notes.append).run()
    assert result.iterations == 3 and result.reached_at is None  # the confirmations read 50 %
    assert sum("evaluation.confirm_seeds: going on" in n for n in notes) == 2  # at iterations 2 and 3

    # The split: per gold decision (the kernel's, for every seed: the unanswered ones' too), its success share.
    expected = {}
    for seed in confirm:
        expected.setdefault(_gold(seed), []).append(1.0 if seed % 2 == 0 else 0.0)
    assert len(expected) >= 2
    split = {d: (sum(v) / len(v), len(v)) for d, v in sorted(expected.items())}
    summary = json.loads(result.summary.read_text())
    assert {d: (s["success"], s["rollouts"]) for d, s in summary["confirmation"]["by_decision"].items()} == split
    line = next(n for n in notes if n.startswith("held-out success confirmation at iteration 3"))
    assert "by gold decision: " + ", ".join(f"{d} {s:.1%} of {n}" for d, (s, n) in split.items()) in line
    held_out = {_gold(seed) for seed in (0, 1)}
    assert result.eval_after == 1.0 and result.eval_after_by_decision == {d: 1.0 for d in held_out}
    assert set(summary["last_evaluation"]["by_decision"]) == held_out
    rows = list(csv.DictReader(result.metrics_csv.open()))
    for decision, (share, _) in split.items():
        assert float(rows[-1][f"confirm_success_{decision}"]) == share
        assert all(float(r[f"eval_success_{d}"]) == 1.0 for r in rows for d in held_out)
    with TraceStore(output / "traces.db") as store:
        (run,) = store.list_runs(counts=False)
    assert run.status == "ok" and run.summary == summary


def _scripted(monkeypatch, trainer, shares):
    """The trainer with its held-out evaluations replaced by ``shares``, in order (the first is "before")."""
    shares = iter(shares)

    def evaluate(when, seeds=None):
        evaluation = Evaluation(when, [0, 1], next(shares), 2, 0)
        trainer.evaluations.append(evaluation)
        return evaluation

    monkeypatch.setattr(trainer, "_evaluate", evaluate)


def test_one_evaluation_at_stop_at_does_not_stop_the_run(tmp_path, monkeypatch):
    notes: list[str] = []
    trainer = RLTrainer(tiny_config(tmp_path / "stop", training={"iterations_per_epoch": 6},
                                    evaluation={"every_n_iters": 1, "stop_at": 0.9}), on_note=notes.append)
    _scripted(monkeypatch, trainer, [0.25, 0.95, 0.5, 0.95, 1.0, 1.0, 1.0])  # before, then iterations 1, 2, ...
    result = trainer.run()
    assert result.iterations == 4 and result.reached_at == 4 and result.eval_after == 1.0
    assert result.wall_s > 0
    assert any("reached evaluation.stop_at = 0.9 at 2 evaluations in a row at iteration 4" in n for n in notes)
    rows = list(csv.DictReader(result.metrics_csv.open()))
    assert [r["eval_success"] for r in rows] == ["0.95", "0.5", "0.95", "1.0"]


def test_stop_streak_sets_how_many_evaluations_in_a_row(tmp_path, monkeypatch):
    trainer = RLTrainer(tiny_config(tmp_path / "one", training={"iterations_per_epoch": 4, "warmup_steps": 0},
                                    evaluation={"every_n_iters": 1, "stop_at": 0.9, "stop_streak": 1}))
    _scripted(monkeypatch, trainer, [0.25, 0.5, 0.95, 0.5, 0.5])
    assert trainer.run().reached_at == 2


def test_the_streak_counts_evaluations_only_and_an_unreadable_one_breaks_it():
    rows = [{"step": 1, "eval_success": 0.95}, {"step": 2}, {"step": 3, "eval_success": 0.96}, {"step": 4}]
    assert goal_streak(rows, 0.95) == 2
    assert goal_streak(rows + [{"step": 5, "eval_success": math.nan}], 0.95) == 0
    assert goal_streak([{"step": 1, "eval_success": 0.9}], 0.95) == 0


def test_confirm_seeds_must_be_fresh(tmp_path):
    with pytest.raises(ConfigError, match="evaluation.confirm_seeds and evaluation.seeds share seeds \\[1\\]"):
        tiny_config(tmp_path, evaluation={"confirm_seeds": "1-40"})
    with pytest.raises(ConfigError, match="evaluation.confirm_seeds and training.train_seeds share seeds \\[50\\]"):
        tiny_config(tmp_path, evaluation={"confirm_seeds": "50-60"}, training={"train_seeds": [50, 70]})
    with pytest.raises(ConfigError, match="evaluation.stop_streak"):
        tiny_config(tmp_path, evaluation={"stop_streak": 0})
