"""Every Verilog problem has a measured difficulty and a split; ``difficulty`` / ``split`` / ``index`` select the
environment's problems deterministically."""

from collections import Counter
from pathlib import Path

import pytest
from pydantic import ValidationError

from proofgym.core import ConfigError
from proofgym.envs import SPLITS, make
from proofgym.verilog import (
    DIFFICULTIES,
    Problem,
    builtin_problems,
    load_verilogeval,
    problem_difficulty,
    problem_splits,
)

from ._support import requires_judge

VERILOGEVAL = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "verilog-eval-v2"


def _problem(problem_id: str, body: str) -> Problem:
    return Problem(problem_id, "spec", f"module RefModule (input clk, input a, output q);\n{body}\nendmodule\n", "tb")


def test_the_difficulty_rule_reads_the_reference():
    assert problem_difficulty(_problem("p", "  assign q = a;  // posedge in a comment does not count")) == "easy"
    eleven = "\n".join(f"  wire w{i} = a;" for i in range(10)) + "\n  assign q = w0;"
    assert problem_difficulty(_problem("p", eleven)) == "medium"  # combinational, more than 10 lines
    assert problem_difficulty(_problem("p", "  reg r;\n  always @(posedge clk) r <= a;\n  assign q = r;")) == "medium"
    fsm = ("  reg state;\n  always @(posedge clk)\n    case (state)\n      1'b0: state <= a;\n    endcase\n"
           "  assign q = state;")
    assert problem_difficulty(_problem("p", fsm)) == "hard"
    long = "  reg r;\n  always @(posedge clk) r <= a;\n" + "\n".join(f"  wire w{i} = a;" for i in range(18))
    assert problem_difficulty(_problem("p", long + "\n  assign q = r;")) == "hard"  # sequential, 20+ lines


def test_the_builtin_problems_have_every_difficulty():
    problems = builtin_problems().values()
    counts = Counter(problem_difficulty(problem) for problem in problems)
    assert counts == {"easy": 16, "medium": 16, "hard": 6}
    assert problem_difficulty(builtin_problems()["Prob001_and_gate"]) == "easy"
    assert problem_difficulty(builtin_problems()["Prob022_counter4"]) == "medium"
    assert problem_difficulty(builtin_problems()["Prob035_traffic_light"]) == "hard"


@pytest.mark.skipif(not VERILOGEVAL.is_dir(), reason=f"the VerilogEval v2 data is not at {VERILOGEVAL}")
def test_the_verilogeval_problems_have_every_difficulty():
    problems = load_verilogeval(VERILOGEVAL)
    assert Counter(problem_difficulty(problem) for problem in problems) == {"easy": 72, "medium": 53, "hard": 31}
    splits = problem_splits(problems)
    for level in DIFFICULTIES:  # stratified: every level is in every split
        assert {splits[p.id] for p in problems if problem_difficulty(p) == level} == set(SPLITS)


def test_problems_are_split_by_problem_stratified_by_difficulty():
    problems = list(builtin_problems().values())
    splits = problem_splits(problems)
    assert set(splits) == {problem.id for problem in problems}
    for level in DIFFICULTIES:
        ids = sorted(p.id for p in problems if problem_difficulty(p) == level)
        assert [splits[i] for i in ids] == ["test" if j % 10 == 2 else "val" if j % 10 == 7 else "train"
                                           for j in range(len(ids))]
    assert Counter(splits.values()) == {"train": 31, "val": 2, "test": 5}


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_difficulty_selects_the_problems_of_that_difficulty(difficulty):
    with make("verilog", difficulty=difficulty) as env:
        chosen = {env.reset(seed).data["problem_id"] for seed in range(40)}
        assert chosen == {p.id for p in builtin_problems().values() if problem_difficulty(p) == difficulty}
        assert env.reset(0).data["difficulty"] == difficulty


def test_an_unknown_difficulty_names_the_allowed_values():
    with pytest.raises(ValidationError, match="'easy', 'medium' or 'hard'") as info:
        make("verilog", difficulty="extreme")
    assert info.value.errors()[0]["loc"] == ("difficulty",)
    with pytest.raises(ValueError, match="difficulty: problem_id 'Prob001_and_gate' is easy, not hard"):
        make("verilog", problem_id="Prob001_and_gate", difficulty="hard")


def test_split_index_seed_and_difficulty_combine_deterministically():
    splits = problem_splits(builtin_problems().values())
    for split in SPLITS:
        with make("verilog", difficulty="medium", split=split) as env:
            first = [env.reset(i).data["problem_id"] for i in range(8)]
            assert first == [env.reset(i).data["problem_id"] for i in range(8)]
            assert {splits[problem_id] for problem_id in first} == {split}
            assert {problem_difficulty(builtin_problems()[problem_id]) for problem_id in first} == {"medium"}
    with make("verilog", difficulty="medium", split="test", index=1) as env:
        assert env.reset(1).data["problem_id"] == "Prob029_clock_divider"
        with pytest.raises(ConfigError, match="index"):
            env.reset(0)


def test_a_problems_split_does_not_depend_on_the_difficulty():
    with make("verilog", split="test") as every, make("verilog", split="test", difficulty="hard") as hard:
        all_test = {every.reset(i).data["problem_id"] for i in range(20)}
        hard_test = {hard.reset(i).data["problem_id"] for i in range(5)}
    assert hard_test <= all_test and len(all_test) == 5


def test_a_split_with_no_problem_of_the_difficulty_is_refused():
    with pytest.raises(ConfigError, match=r"no task in split 'val' \(tasks per split: train 5, val 0, test 1\)"):
        make("verilog", difficulty="hard", split="val")


@requires_judge
def test_the_oracle_passes_on_every_split_and_difficulty():
    for difficulty in DIFFICULTIES:
        with make("verilog", difficulty=difficulty, split="test") as env:
            for step in (actions := env.oracle_actions(0)):
                result = env.step(step)
            assert len(actions) == 2 and result.done and result.outcome_score == 1.0


@pytest.mark.skipif(not VERILOGEVAL.is_dir(), reason=f"the VerilogEval v2 data is not at {VERILOGEVAL}")
def test_a_verilogeval_folder_is_a_problem_set_with_difficulties_and_splits():
    problems = {p.id: p for p in load_verilogeval(VERILOGEVAL)}
    splits = problem_splits(problems.values())
    with make("verilog", problem_set=str(VERILOGEVAL), difficulty="hard", split="val") as env:
        chosen = [env.reset(i).data["problem_id"] for i in range(3)]
    assert len(set(chosen)) == 3
    assert all(problem_difficulty(problems[i]) == "hard" and splits[i] == "val" for i in chosen)
    with pytest.raises(ValueError, match="problem_set: '/nonexistent' is neither 'builtin' nor an existing folder"):
        make("verilog", problem_set="/nonexistent")
    with pytest.raises(ValueError, match="not both"):
        make("verilog", problem_set=str(VERILOGEVAL), problems=list(builtin_problems().values()))


@requires_judge
@pytest.mark.skipif(not VERILOGEVAL.is_dir(), reason=f"the VerilogEval v2 data is not at {VERILOGEVAL}")
def test_the_oracle_passes_a_verilogeval_problem_of_each_difficulty():
    for difficulty in DIFFICULTIES:
        with make("verilog", problem_set=str(VERILOGEVAL), difficulty=difficulty, split="test") as env:
            for step in env.oracle_actions(0):
                result = env.step(step)
            assert result.done and result.outcome_score == 1.0, (difficulty, result.observation.text)
