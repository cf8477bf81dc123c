"""The loop end to end on CPU: proofgym:tiny served in-process, a real local task app over HTTP, traces by cid,
judged blends, the update on the recorded ids, checkpoints and resume."""

from __future__ import annotations

import csv
import json

import pytest

pytest.importorskip("torch", reason="the RL trainer needs torch (pip install -e '.[train]')")
pytest.importorskip("transformers", reason="the RL trainer needs transformers (pip install -e '.[train]')")

from proofgym.training.rl import RLTrainer, sampled_turns, trained_ids  # noqa: E402
from proofgym.traces import TraceStore  # noqa: E402

from ._run import tiny_config  # noqa: E402


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    output = tmp_path_factory.mktemp("rl") / "run"
    notes: list[str] = []
    result = RLTrainer(tiny_config(output), on_note=notes.append).run()
    return output, result, notes


def _sessions(output):
    with TraceStore(output / "traces.db") as store:
        return list(store.iter_sessions())


def test_every_rollout_is_stored_under_the_run_with_its_own_cid(run):
    output, result, _ = run
    sessions = _sessions(output)
    # 2 iterations x 2 seeds x 2 rollouts, and 2 held-out rollouts before and after.
    assert len(sessions) == 2 * 2 * 2 + 2 + 2
    cids = [s.correlation_id for s in sessions]
    assert all(cid and cid.startswith("trace_") for cid in cids) and len(set(cids)) == len(cids)


def test_trained_ids_are_the_sampled_ids_on_every_turn(run):
    output, _, _ = run
    checked = 0
    for session in _sessions(output):
        turns = sampled_turns(session)
        assert isinstance(turns, list), turns
        for turn, ids in zip(turns, trained_ids(turns, pad_id=0)):
            assert ids == list(turn.completion_ids)
            checked += 1
        calls = [call.response["choices"][0] for step in session.steps for call in step.lm_calls]
        assert [tuple(c["token_ids"]) for c in calls] == [t.completion_ids for t in turns]
        assert [tuple(c["prompt_token_ids"]) for c in calls] == [t.prompt_ids for t in turns]
    assert checked >= 12


def test_the_tiny_chat_template_is_not_append_only(run):
    """A later turn's prompt does not start with the earlier prompt + the ids sampled for it: re-tokenising the
    conversation would train on ids the model never sampled; the recorded ids do not."""
    output, _, _ = run
    multi = [turns for s in _sessions(output) if isinstance(turns := sampled_turns(s), list) and len(turns) > 1]
    assert multi
    for turns in multi:
        first, second = turns[0], turns[1]
        joined = first.prompt_ids + first.completion_ids
        assert second.prompt_ids[:len(joined)] != joined


def test_outputs_metrics_curve_checkpoint(run):
    output, result, notes = run
    assert result.iterations == 2
    rows = list(csv.DictReader(result.metrics_csv.open()))
    assert [int(r["step"]) for r in rows] == [1, 2]
    for key in ("reward", "valid", "invalid", "skipped_groups", "rollout_s", "judge_s", "update_s", "sync_s"):
        assert key in rows[0]
    assert all(int(r["valid"]) + int(r["invalid"]) == 4 for r in rows)
    assert result.reward_curve.stat().st_size > 0
    assert (result.checkpoint / "model.pt").exists() and (result.checkpoint / "state.json").exists()
    assert any(n.startswith("format warm-up") for n in notes)
    assert any(n.startswith("held-out success before") for n in notes)


def test_the_summary_splits_the_run_into_phases(run):
    output, result, _ = run
    summary = json.loads(result.summary.read_text())
    phases = summary["phases_s"]
    assert {"setup", "warmup", "rollout", "judge", "update", "sync", "evaluation", "checkpoint"} <= phases.keys()
    assert all(seconds >= 0 for seconds in phases.values())
    assert phases["warmup"] > 0 and phases["update"] > 0 and phases["evaluation"] > 0
    assert sum(phases.values()) <= summary["wall_s"]  # the phases are disjoint stretches of the run


def test_weights_are_synced_every_interval(run):
    output, result, _ = run
    rows = list(csv.DictReader(result.metrics_csv.open()))
    assert [int(r["served_version"]) for r in rows] == [1, 2]


def test_resume_continues_from_the_checkpoint(run, tmp_path):
    output, _, _ = run
    notes: list[str] = []
    result = RLTrainer(tiny_config(output, training={"iterations_per_epoch": 3}), on_note=notes.append).run()
    assert any(n.startswith("resumed from") and "iteration 2" in n for n in notes)
    assert result.iterations == 3
    rows = list(csv.DictReader(result.metrics_csv.open()))
    assert [int(r["step"]) for r in rows] == [1, 2, 3]


def test_the_kl_reference_is_the_starting_policy_and_survives_a_resume(tmp_path):
    import torch

    output = tmp_path / "run"
    settings = {"kl_coef": 0.1, "updates_per_batch": 2, "iterations_per_epoch": 1}
    first = RLTrainer(tiny_config(output, training=settings))
    first.run()
    saved = torch.load(output / "checkpoint" / "reference.pt", weights_only=True)
    trained = torch.load(output / "checkpoint" / "model.pt", weights_only=True)
    assert saved.keys() == trained.keys()
    assert any(not torch.equal(saved[k], trained[k]) for k in saved)  # the update moved the policy, not the reference
    again = RLTrainer(tiny_config(output, training={**settings, "iterations_per_epoch": 2}))
    again.run()
    reference = again.reference.state_dict()
    assert all(torch.equal(reference[k], saved[k]) for k in saved)  # the resumed run kept the starting policy


def test_overlapped_rollouts_are_one_update_old_and_no_seed_is_lost(tmp_path):
    """With ``training.overlap_rollouts`` the next batch is collected during the update, by the weights before it
    (staleness 1, never more); without it every batch is sampled by the weights just synced."""
    import torch

    rows = {}
    threads = torch.get_num_threads()
    for overlap in (False, True):
        output = tmp_path / f"overlap-{overlap}"
        # overlapped as the tiny config ships: one torch thread for the update, one for the served policy
        trainer = RLTrainer(tiny_config(output, training={"iterations_per_epoch": 3, "overlap_rollouts": overlap,
                                                          "cpu_threads": 1 if overlap else None}))
        try:
            result = trainer.run()
            if overlap:
                assert torch.get_num_threads() == 1 and trainer.server.backend.threads == 1
        finally:
            torch.set_num_threads(threads)
        rows[overlap] = list(csv.DictReader(result.metrics_csv.open()))
        assert [int(r["served_version"]) for r in rows[overlap]] == [1, 2, 3]
        assert all(int(r["valid"]) + int(r["invalid"]) == 4 for r in rows[overlap])
        state = (output / "checkpoint" / "state.json").read_text()
        assert '"seed_cursor": 6' in state  # 3 batches x 2 seeds: the last iteration collects nothing ahead
    assert [int(r["sampled_version"]) for r in rows[False]] == [0, 1, 2]
    assert [int(r["sampled_version"]) for r in rows[True]] == [0, 0, 1]
    assert all(float(r["overlap_wait_s"]) == 0.0 for r in rows[False])


def test_the_learning_rate_rises_over_lr_warmup_iterations(tmp_path):
    trainer = RLTrainer(tiny_config(tmp_path / "ramp", training={"iterations_per_epoch": 2, "learning_rate": 4e-4,
                                                                  "lr_warmup_iterations": 4}))
    trainer.run()
    # the second update ran at 2/4 of the rate (the first at 1/4)
    assert trainer.optimizer.param_groups[0]["lr"] == pytest.approx(2e-4)
