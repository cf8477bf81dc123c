"""Math is trained like the other domains: the shipped run config behind TRL's reward-function convention and
veRL's ``compute_score`` pays the gold answer the top reward, a wrong one less, and never raises. The prompt (with
its problem marker) is what tells the parser the gold answer; a dataset's own gold column is not needed."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("math_verify", reason="the math verifier needs Math-Verify: pip install 'proofgym[math]'")

from proofgym.integrations import TRLRewardFunction  # noqa: E402
from proofgym.integrations._verl import compute_score_batch  # noqa: E402
from proofgym.math import build_math_prompt, builtin_math_problems  # noqa: E402

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "run" / "math.yaml"
PROBLEMS = list(builtin_math_problems().values())[:6]
PROMPTS = [[{"role": "user", "content": build_math_prompt(p)}] for p in PROBLEMS]


def completion(text: str) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": text}]


def test_the_trl_reward_function_pays_gold_top_and_abstains_on_nothing():
    from proofgym.config import load_run_config

    with load_run_config(CONFIG).reward_function() as reward_fn:
        fn = TRLRewardFunction(reward_fn, name="math")
        top = reward_fn.shaper.bounds[1]
        gold = fn(PROMPTS, [completion(f"\\boxed{{{p.answer.strip('$')}}}") for p in PROBLEMS])
        wrong = fn(PROMPTS, [completion("\\boxed{\\frac{1}{7} + 1000003}") for _ in PROBLEMS])
        hedge = fn(PROMPTS, [completion("\\boxed{1} \\boxed{2}") for _ in PROBLEMS])
    assert gold == [pytest.approx(top)] * len(PROBLEMS)
    assert all(w is not None and w < top for w in wrong)
    assert hedge == [reward_fn.shaper.bounds[0]] * len(PROBLEMS)


def test_verl_compute_score_reads_the_gold_answer_from_the_prompt():
    scores = compute_score_batch([str(CONFIG)] * 2, ["\\boxed{" + PROBLEMS[0].answer.strip("$") + "}", "\\boxed{-1}"],
                                 [PROBLEMS[0].answer] * 2, [{"prompt": build_math_prompt(PROBLEMS[0])}] * 2)
    assert [s["outcome"] for s in scores] == ["certified", "refuted"]
    assert scores[0]["score"] > scores[1]["score"]
