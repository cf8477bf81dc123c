"""An eval on one split: ``split`` in ``[evaluation.env_config]``, and each seed is then a position in that split."""

from proofgym.envs import make
from proofgym.evaluation import parse_eval_config, run_eval


def test_an_eval_runs_the_splits_seeds_here(tmp_path):
    section = parse_eval_config({"evaluation": {"env_name": "grant_eligibility", "policy_name": "oracle",
                                                "seeds": "0-3", "traces": str(tmp_path / "t.db"),
                                                "env_config": {"split": "test"}}}).evaluation
    report = run_eval(section)
    assert all(result.ok and result.passed for result in report.results)
    with make("grant_eligibility", split="test") as env:
        expected = [env.reset(seed).data["record_id"] for seed in range(4)]
    with make("grant_eligibility") as plain:
        assert expected == [plain.reset(seed).data["record_id"] for seed in (72, 73, 74, 75)]
    assert [result.task_id for result in report.results] == expected
