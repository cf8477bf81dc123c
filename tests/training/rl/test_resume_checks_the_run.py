"""A run resumes only from a checkpoint of the same run: another seed or a changed config is refused before anything
starts, with one line naming what differs and what to do; the keys a resume may change do not count; a checkpoint
written before the record resumes with a warning."""

from __future__ import annotations

import json
import shutil

import pytest

pytest.importorskip("torch", reason="the RL trainer needs torch (pip install -e '.[train]')")
pytest.importorskip("transformers", reason="the RL trainer needs transformers (pip install -e '.[train]')")

from proofgym.training.rl import RLError, RLTrainer, load_rl_config  # noqa: E402
from proofgym.traces import TraceStore  # noqa: E402

from ._run import train  # noqa: E402


@pytest.fixture
def seed_5(trained_seed_5, tmp_path):
    """A copy of the run ``proofgym train --config rl.toml --seed 5`` left: one iteration, checkpointed."""
    config, output, _ = trained_seed_5
    return config, _copy(output, tmp_path / "seed_5")


def _copy(output, folder):
    shutil.copytree(output, folder / "run")
    return folder / "run"


def _config(path, *, seed=5, **sections):
    config = load_rl_config(path)
    config.training.seed = seed
    for section, values in sections.items():
        for key, value in values.items():
            setattr(getattr(config, section), key, value)
    return config


def test_another_seed_is_refused_naming_both_seeds(seed_5):
    config, output = seed_5
    state = (output / "checkpoint" / "state.json").read_text()
    with pytest.raises(RLError) as refused:
        RLTrainer(_config(config, seed=6), output_dir=output).run()
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"cannot resume from {output / 'checkpoint'}: it was written with training.seed 5, "
                              "this run has 6.")
    assert "give --seed 5" in message and "another --output-dir" in message
    # refused before anything started: no run in the trace store, the checkpoint untouched
    with TraceStore(output / "traces.db") as store:
        assert [run.run_id for run in store.list_runs(counts=False)] == ["run"]
    assert (output / "checkpoint" / "state.json").read_text() == state


def test_a_changed_config_is_refused_naming_the_keys(seed_5):
    config, output = seed_5
    changed = _config(config, training={"learning_rate": 1e-3}, rollout={"max_turns": 4})
    with pytest.raises(RLError, match=r"the config changed since \(rollout.max_turns, training.learning_rate\)\. "
                                      r"To resume that run, use the config it was written with"):
        RLTrainer(changed, output_dir=output).run()
    with pytest.raises(RLError, match=r"training.seed 5, this run has 7; the config changed since "
                                      r"\(training.learning_rate\)"):
        RLTrainer(_config(config, seed=7, training={"learning_rate": 1e-3}), output_dir=output).run()


def test_the_command_refuses_another_seed_in_one_line(seed_5, tmp_path):
    config, output = seed_5
    done = train(config, _copy(output, tmp_path), "--seed", "6")
    assert done.returncode != 0
    assert "Traceback" not in done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if "cannot resume" in line]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "training.seed 5, this run has 6" in lines[0]


def test_the_keys_a_resume_may_change_leave_it_resumable(seed_5, tmp_path):
    config, output = seed_5
    notes: list[str] = []
    resumable = _config(config, training={"iterations_per_epoch": 2, "max_error_share": 0.9, "checkpoint_every": 5,
                                          "cpu_threads": 1},
                        evaluation={"every_n_iters": 2, "stop_at": 0.99, "stop_streak": 3})
    import torch

    threads = torch.get_num_threads()
    try:
        result = RLTrainer(resumable, output_dir=_copy(output, tmp_path), on_note=notes.append).run()
    finally:
        torch.set_num_threads(threads)  # training.cpu_threads set this process's
    assert any(n.startswith("resumed from") and "iteration 1" in n for n in notes)
    assert result.iterations == 2


def test_a_checkpoint_written_before_the_record_resumes_with_a_warning(seed_5, tmp_path):
    config, output = seed_5
    output = _copy(output, tmp_path)
    path = output / "checkpoint" / "state.json"
    state = json.loads(path.read_text())
    for key in ("seed", "config_hash", "config"):  # what a checkpoint of an earlier proofgym holds
        state.pop(key)
    path.write_text(json.dumps(state))
    notes: list[str] = []
    result = RLTrainer(_config(config, seed=6, training={"iterations_per_epoch": 2}), output_dir=output,
                       on_note=notes.append).run()
    assert result.iterations == 2
    assert any("records no config hash or seed" in n and "resuming it unchecked" in n for n in notes)
    assert json.loads(path.read_text())["seed"] == 6  # the checkpoint now records the run that resumed it
