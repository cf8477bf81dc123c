"""reasoning-gym style: on every shipped (generated) problem the gold answer earns the top reward and a perturbed
answer does not; the shipped set is what reasoning-gym generates, and reasoning-gym's own scorer agrees."""

from __future__ import annotations

import re
from fractions import Fraction
from decimal import Decimal

import pytest

pytest.importorskip("math_verify", reason="the math verifier needs Math-Verify: pip install 'proofgym[math]'")

from proofgym.config import parse_run_config  # noqa: E402
from proofgym.core import ConfigError  # noqa: E402
from proofgym.math import (  # noqa: E402
    GENERATED_PER_TASK,
    GENERATED_SEED,
    GENERATED_TASKS,
    MathProblem,
    build_math_prompt,
    builtin_math_problems,
    default_math_run_config,
    load_problems,
    write_problems,
)

PROBLEMS = builtin_math_problems()


def perturbed(gold: str) -> str:
    """A wrong answer near the gold one: the first number of it changed by one (for a fraction, its numerator)."""
    text = gold.strip().strip("$")
    match = re.search(r"-?\d+(?:\.\d+)?", text)
    assert match, gold
    number = match.group(0)
    bumped = str(Decimal(number) + 1) if "." in number else str(int(number) + 1)
    return text[: match.start()] + bumped + text[match.end() :]


@pytest.fixture(scope="module")
def reward_fn():
    data = default_math_run_config().model_dump(mode="python", exclude_none=True)
    data["runtime"] = {"executor": "in_process", "cache_size": 0}  # in the test process: no workers to start
    data["parser"] = {"kind": "math", "problems": "builtin"}
    with parse_run_config(data).reward_function() as function:
        yield function


def test_the_shipped_set_covers_every_task():
    assert len(PROBLEMS) == len(GENERATED_TASKS) * GENERATED_PER_TASK
    assert {p.task for p in PROBLEMS.values()} == set(GENERATED_TASKS)


def test_the_gold_answer_scores_top_and_a_perturbed_one_does_not(reward_fn):
    problems = list(PROBLEMS.values())
    prompts = [build_math_prompt(p) for p in problems]
    top = reward_fn.shaper.bounds[1]
    gold = reward_fn.score(prompts, [f"Therefore \\boxed{{{p.answer.strip('$')}}}." for p in problems])
    wrong = reward_fn.score(prompts, [f"Answer: {perturbed(p.answer)}" for p in problems])
    assert [(p.id, item.outcome) for p, item in zip(problems, gold) if item.reward != pytest.approx(top)] == []
    assert [(p.id, item.outcome) for p, item in zip(problems, wrong) if item.outcome != "refuted"] == []
    assert max(item.reward for item in wrong) < top


def test_perturbing_changes_the_value():
    assert perturbed("$741/928$") == "742/928" and perturbed("-3.625, 0.0") == "-2.625, 0.0"
    assert Fraction(perturbed("12")) == 13 and perturbed("12.3630") == "13.3630"


def test_the_shipped_set_is_what_reasoning_gym_generates():
    pytest.importorskip("reasoning_gym", reason="reasoning-gym is not installed: pip install 'proofgym[math]'")
    from proofgym.math import generate_problems

    assert {p.id: p for p in generate_problems()} == PROBLEMS


def test_reasoning_gym_s_own_scorer_agrees_gold_top_perturbed_not():
    reasoning_gym = pytest.importorskip("reasoning_gym", reason="reasoning-gym is not installed: "
                                                                "pip install 'proofgym[math]'")
    for task in GENERATED_TASKS:
        dataset = reasoning_gym.create_dataset(task, size=2 * GENERATED_PER_TASK, seed=GENERATED_SEED)
        for problem in (p for p in PROBLEMS.values() if p.task == task):
            entry = dataset[int(problem.id.rsplit("-", 1)[1])]
            assert dataset.score_answer(problem.answer, entry) == 1.0, problem
            assert dataset.score_answer(perturbed(problem.answer), entry) < 1.0, problem


def test_a_problem_file_round_trips_and_bad_rows_name_file_line_and_key(tmp_path):
    path = write_problems([MathProblem("a-1", "1 + 1?", "2", "hand")], tmp_path / "p.jsonl")
    assert load_problems(path) == {"a-1": MathProblem("a-1", "1 + 1?", "2", "hand")}
    for text, words in [('{"id": "a", "question": "q"}', "2: answer: expected a string"),
                        ('{"id": "a", "question": "q", "answer": "1", "gold": 1}', "2: gold: unknown key"),
                        ('{"id": "a b", "question": "q", "answer": "1"}', "whitespace"),
                        ('{"id": "a-1", "question": "q", "answer": "1"}', "2: id: problem 'a-1' is given twice"),
                        ('[1]', "2: expected a JSON object"), ('{"id": ', "2:")]:
        path.write_text('{"id": "a-1", "question": "q", "answer": "1"}\n' + text + "\n", encoding="utf-8")
        with pytest.raises(ConfigError, match=re.escape(words)):
            load_problems(path)
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="no problems"):
        load_problems(path)
