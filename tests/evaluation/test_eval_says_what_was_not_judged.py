"""An environment that cannot judge (its toolchain missing, its verifier down) makes the rollout ``invalid``, with
the reason: shown per seed, counted apart from passed and failed rollouts, and an eval that judged nothing exits 1."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.envs import Observation, Tool, ToolCall, ToolEnv, ToolResult, register_env
from proofgym.envs import ENVIRONMENTS
from proofgym.traces import TraceStore
from proofgym.verilog import detect_toolchain

from ._support import write_eval_toml

runner = CliRunner()
CONFIGS = Path(__file__).resolve().parents[2] / "configs"
SUBMIT = Tool("submit", "Submit; judged on even seeds only.")
OFFLINE = "the judge is offline; retry in a minute"


class EvenSeedsJudgedEnv(ToolEnv):
    """One ``submit``: certified on even seeds; on odd ones the judge is offline (an invalid outcome)."""

    def __init__(self) -> None:
        super().__init__([SUBMIT], max_turns=2)

    def _reset(self, seed: int) -> Observation:
        self._seed = seed
        return Observation("Submit.", {"task_id": f"task-{seed}"})

    def _call_tool(self, call: ToolCall) -> ToolResult:
        if self._seed % 2:  # ``passed`` False too: an invalid outcome still is no failure
            return ToolResult(Observation("not judged"), done=True,
                              info={"outcome": "invalid", "passed": False, "reason": OFFLINE})
        return ToolResult(Observation("passed"), {"submit": 1.0}, done=True, info={"outcome": "certified"})


@pytest.fixture
def even_seeds_judged():
    register_env("even-seeds-judged-test", EvenSeedsJudgedEnv)
    yield "even-seeds-judged-test"
    ENVIRONMENTS.unregister("even-seeds-judged-test")


@pytest.fixture
def no_toolchain(tmp_path, monkeypatch):
    """A PATH without iverilog, vvp or bwrap (the toolchain's lookup is cached: cleared on both sides)."""
    with monkeypatch.context() as patch:
        patch.setenv("PATH", str(tmp_path / "empty-bin"))
        detect_toolchain.cache_clear()
        yield
    detect_toolchain.cache_clear()


def test_the_verilog_eval_without_a_toolchain_is_invalid_on_every_seed_and_exits_1(tmp_path, monkeypatch,
                                                                                     no_toolchain):
    monkeypatch.chdir(tmp_path)  # the config stores traces under ./traces
    result = runner.invoke(app, ["eval", "--config", str(CONFIGS / "eval" / "verilog.toml"), "--json-out", "s.json"])
    assert result.exit_code == 1, result.output
    seed_lines = [line for line in result.output.splitlines() if line.startswith("seed ")]
    assert len(seed_lines) == 8 and all("outcome invalid (iverilog not installed) " in line for line in seed_lines)
    assert "8 rollouts: 0 passed, 0 not passed, 8 invalid (not judged), 0 failed to run" in result.output
    assert "apt-get install -y iverilog bubblewrap" in result.output
    assert "no rollout was judged: all 8 are invalid (iverilog not installed)" in " ".join(result.output.split())
    report = json.loads((tmp_path / "s.json").read_text())
    summary = report["summary"]
    assert (summary["ok"], summary["failed"], summary["passed"], summary["invalid"]) == (8, 0, 0, 8)
    assert summary["pass_rate"] is None and summary["mean_outcome"] is None and summary["mean_return"] is None
    [(reason, count)] = summary["invalid_reasons"].items()
    assert count == 8 and reason.startswith("iverilog not installed; ") and "apt-get install" in reason
    assert all(r["invalid"] and r["invalid_reason"] == reason and r["outcome_score"] is None and not r["passed"]
               for r in report["results"])
    with TraceStore(tmp_path / "traces" / "eval.db", create=False) as store:
        [run] = store.list_runs()
        assert run.status == "error" and run.summary["invalid"] == 8


def test_a_run_with_some_invalid_rollouts_exits_0_and_counts_them_apart(tmp_path, even_seeds_judged):
    config = write_eval_toml(tmp_path / "e.toml", {"env_name": even_seeds_judged, "policy_name": "scripted",
                                                   "seeds": "0-3", "traces": str(tmp_path / "t.db")},
                             policy_config={"actions": [{"tool": "submit", "args": {}}]})
    result = runner.invoke(app, ["eval", "--config", str(config), "--json-out", str(tmp_path / "s.json")])
    assert result.exit_code == 0, result.output
    lines = {int(line.split()[1]): line for line in result.output.splitlines() if line.startswith("seed ")}
    assert all("outcome invalid (the judge is offline) " in lines[seed] for seed in (1, 3))
    assert all("outcome 1 " in lines[seed] for seed in (0, 2))
    assert "4 rollouts: 2 passed, 0 not passed, 2 invalid (not judged), 0 failed to run" in result.output
    assert f"invalid 2 of 4 (not judged): {OFFLINE}" in result.output
    summary = json.loads((tmp_path / "s.json").read_text())["summary"]
    assert (summary["passed"], summary["invalid"], summary["failed"]) == (2, 2, 0)
    assert summary["invalid_reasons"] == {OFFLINE: 2}
    # Means and pass rate are over the judged rollouts: the invalid ones are neither right nor wrong.
    assert summary["pass_rate"] == 1.0 and summary["mean_outcome"] == 1.0 and summary["mean_return"] == 1.0
