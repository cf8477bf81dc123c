"""Nothing a policy writes makes a reward function raise, loses the batch or pays more than the gold answer.

The shipped run configs (the two rulebook domains and Verilog) score completions built from any code point
(lone surrogates, NUL, controls) and any JSON (non-finite numbers, huge integers, deep nesting), as text and as
chat messages, each batch mixed with the gold answer, which must keep its reward.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _judge import requires_judge
from _untrusted import UNTRUSTED_JSON, UNTRUSTED_TEXT, json_text, nested
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proofgym.config import load_run_config, parse_run_config, read_config_file
from proofgym.core import Claim
from proofgym.parsers import ParseResult
from proofgym.rewards import RewardFunction
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.testing import FakeVerifier, certified
from proofgym.verilog import builtin_problems

ROOT = Path(__file__).resolve().parents[2]


def _records(domain: str) -> list[dict]:
    lines = (ROOT / "examples" / domain / "completions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module", params=["grant_eligibility", "loan"])
def rulebook(request):
    """A rulebook domain's reward function and its gold record."""
    gold = next(record for record in _records(request.param) if "gold" in str(record.get("note", "")))
    with load_run_config(ROOT / "configs" / "run" / f"{request.param}.yaml").reward_function() as reward_fn:
        yield reward_fn, gold


def _hostile_decisions(text: str, data) -> list[str]:
    """Completions that put ``text`` / ``data`` where a parser looks: the reasoning, the decision block, the facts."""
    dumped = json_text(data)
    return [
        text,
        f"<reasoning>{text}</reasoning><decision>{{\"classification\": \"permit\", \"facts\": {dumped}}}</decision>",
        f"<decision>{{\"classification\": {json.dumps(text)}, \"facts\": {{\"age\": {dumped}}}}}</decision>",
        f"<decision>{dumped}</decision>",
        f"<decision>{text}</decision>",
        f"<decision>{'[' * 10_000}{']' * 10_000}</decision>",
        f"<decision>{{\"classification\": \"permit\", \"facts\": {{\"age\": {'9' * 5000}}}}}</decision>",
    ]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(text=UNTRUSTED_TEXT, data=UNTRUSTED_JSON, as_chat=st.booleans())
def test_a_rulebook_reward_never_raises_and_never_pays_more_than_gold(rulebook, text, data, as_chat):
    reward_fn, gold = rulebook
    hostile = _hostile_decisions(text, data)
    if as_chat:
        hostile = [[{"role": "assistant", "content": completion}] for completion in hostile]
    completions = [gold["completion"], *hostile]
    ref = {"gold": gold["gold"], "source_facts": gold["source_facts"]}
    items = reward_fn.score([gold["prompt"]] * len(completions), completions, [ref] * len(completions))
    assert len(items) == len(completions)
    gold_reward = items[0].reward
    assert gold_reward is not None and items[0].outcome == "certified"
    for item in items[1:]:
        assert item.reward is None or item.reward <= gold_reward
        json.dumps(item.to_dict(), allow_nan=False, default=str).encode("utf-8")


def test_a_claim_that_cannot_be_hashed_costs_only_its_own_item():
    """A parser (a plugin) may build a claim the runtime cannot hash (a 5,000-digit integer, nesting past the
    encoder's recursion limit): that item is invalid, the honest items keep their verdicts."""

    class Passthrough:
        def parse(self, completion, prompt=None):
            return ParseResult(claim=completion)

    runtime = VerificationRuntime(FakeVerifier(lambda claim: certified("permit")), RuntimeConfig(timeout_s=1.0))
    with RewardFunction(Passthrough(), runtime) as reward_fn:
        honest = Claim(decision="permit", facts={"a": 1})
        items = reward_fn.score(None, [honest, Claim(decision="permit", facts={"a": 10**5000}),
                                       Claim(decision="permit", payload={"x": nested(5000)}), honest])
    assert [item.outcome for item in items] == ["certified", "invalid", "invalid", "certified"]
    assert "verification raised" in items[1].verdict.reason


def _verilog_reward_fn() -> RewardFunction:
    data = read_config_file(ROOT / "configs" / "run" / "verilog.yaml")
    data["runtime"] = {"executor": "in_process", "batch_size": 8, "timeout_s": 70, "max_concurrency": 2}
    return parse_run_config(data).reward_function()


def _verilog_completions(text: str) -> tuple[str, list[str]]:
    problem = builtin_problems()[sorted(builtin_problems())[0]]
    reference = problem.reference.replace("module RefModule", "module TopModule", 1)
    gold = f"```verilog\n{reference}\n```"
    commented = reference.replace("endmodule", f"// {text.replace(chr(10), ' ')}\nendmodule", 1)
    return problem.id, [gold, f"```verilog\n{commented}\n```", f"```verilog\nmodule TopModule({text});\nendmodule\n```",
                        text, f"module TopModule; /* {text} */ endmodule"]


@requires_judge
def test_the_verilog_reward_scores_a_lone_surrogate_in_a_comment_like_the_gold_design():
    """The reproducer: a completion holding ``\\ud800``, even in a comment, raised out of the reward function."""
    problem_id, completions = _verilog_completions("\ud800 and \x00 and \udfff")
    prompt = f"<!-- problem: {problem_id} -->"
    with _verilog_reward_fn() as reward_fn:
        items = reward_fn.score([prompt] * len(completions), completions)
    assert len(items) == len(completions)
    assert items[1].outcome == items[0].outcome == "certified"  # the commented design is the gold design


@requires_judge
@settings(max_examples=15, deadline=None)
@given(text=UNTRUSTED_TEXT)
def test_the_verilog_reward_never_raises_on_any_text(text):
    problem_id, completions = _verilog_completions(text)
    with _verilog_reward_fn() as reward_fn:
        items = reward_fn.score([f"<!-- problem: {problem_id} -->"] * len(completions), completions)
    assert items[0].outcome == "certified"
    assert all(item.reward is None or item.reward <= items[0].reward for item in items)
