import asyncio
import json
import threading

import pytest

from proofgym.core import ErrorKind
from proofgym.parsers import JSONBlockParser
from proofgym.rewards import DefaultRewardShaper, ErrorBudget, ErrorBudgetExceeded, RewardFunction, ShaperConfig
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.testing import FakeVerifier, certified, invalid_verdict

FACTS = {"age": 30}


def completion(decision="permit", facts=FACTS, reasoning="ok"):
    return f"<reasoning>{reasoning}</reasoning><decision>" + json.dumps(
        {"classification": decision, "facts": facts}) + "</decision>"


def make(verifier=None, *, on_invalid="abstain", budget=None, runtime_config=None):
    verifier = verifier or FakeVerifier(lambda claim: certified("permit"))
    runtime = VerificationRuntime(verifier, runtime_config or RuntimeConfig(timeout_s=1.0, retries=0))
    shaper = DefaultRewardShaper(ShaperConfig(on_invalid=on_invalid))
    return RewardFunction(JSONBlockParser(decisions=["permit", "deny"]), runtime, shaper,
                          error_budget=budget or ErrorBudget())


def test_certified_grounded_correct_beats_wrong_and_format_failure():
    with make() as reward_fn:
        ref = {"gold": "permit", "source_facts": FACTS}
        good, wrong, broken = reward_fn([None] * 3, [completion(), completion("deny"), "no block"], [ref] * 3)
    floor, ceiling = reward_fn.shaper.bounds
    assert good == pytest.approx(ceiling - 0.2)  # everything but graded credit, which this verifier never gives
    assert floor < wrong < good
    assert broken == floor


def test_invalid_abstains_by_default_and_is_counted():
    verifier = FakeVerifier(lambda claim: invalid_verdict(ErrorKind.OUTAGE))
    with make(verifier) as reward_fn:
        assert reward_fn(None, [completion(), completion("deny")]) == [None, None]
    assert reward_fn.last_batch.abstained == 2
    assert reward_fn.stats.outcomes["invalid"] == 2


def test_invalid_can_be_floored():
    verifier = FakeVerifier(lambda claim: invalid_verdict(ErrorKind.OUTAGE))
    with make(verifier, on_invalid="floor") as reward_fn:
        assert reward_fn(None, [completion()]) == [reward_fn.shaper.bounds[0]]
    assert reward_fn.last_batch.floored_invalid == 1


def test_error_budget_abort_raises_after_counting():
    verifier = FakeVerifier(lambda claim: invalid_verdict(ErrorKind.OUTAGE))
    with make(verifier, budget=ErrorBudget(max_invalid_share=0.1, action="abort")) as reward_fn:
        with pytest.raises(ErrorBudgetExceeded, match="1 of 1 verifications were invalid"):
            reward_fn(None, [completion()])
    assert reward_fn.stats.budget_breaches == 1


def test_error_budget_warn_logs(caplog):
    verifier = FakeVerifier(lambda claim: invalid_verdict(ErrorKind.OUTAGE))
    with make(verifier) as reward_fn, caplog.at_level("ERROR", logger="proofgym.rewards"):
        (item,) = reward_fn.score(None, [completion()])
    assert "error budget exceeded" in caplog.text
    assert item.reason and f"the first: {item.reason}" in caplog.text  # the line says what went wrong


def test_format_errors_do_not_count_against_the_error_budget():
    with make(budget=ErrorBudget(max_invalid_share=0.0, action="abort")) as reward_fn:
        assert reward_fn(None, ["garbage", "<decision>{</decision>"]) == [-1.0, -1.0]


def test_crashing_parser_abstains():
    class Broken:
        def parse(self, completion, prompt=None):
            raise RuntimeError("bug")

    runtime = VerificationRuntime(FakeVerifier(), RuntimeConfig())
    with RewardFunction(Broken(), runtime) as reward_fn:
        items = reward_fn.score(None, [completion()])
    assert items[0].reward is None and items[0].outcome == "invalid"
    assert items[0].verdict.error_kind is ErrorKind.CRASH


def test_caller_mistakes_raise_clear_errors():
    with make() as reward_fn:
        with pytest.raises(ValueError, match="prompts has 2 items but completions has 1"):
            reward_fn(["a", "b"], [completion()])
        with pytest.raises(ValueError, match=r"refs\[0\]"):
            reward_fn(None, [completion()], [{"gold": 3}])


def test_prompt_plus_response_scores_the_response():
    prompt = "System: answer like <decision>{\"classification\": \"deny\", \"facts\": {}}</decision>\nUser: go\n"
    with make() as reward_fn:
        items = reward_fn.score([prompt], [prompt + completion()], [{"gold": "permit"}])
    assert items[0].outcome == "certified" and items[0].claim.decision == "permit"


def test_reasoning_only_differences_share_one_verification():
    verifier = FakeVerifier(lambda claim: certified("permit"))
    with make(verifier) as reward_fn:
        reward_fn(None, [completion(reasoning=f"variant {i}") for i in range(8)])
    assert verifier.claims_verified == 1


def test_callable_from_threads_and_event_loops():
    with make() as reward_fn:
        results = []

        def worker():
            results.append(reward_fn(None, [completion()] * 4))

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

        async def inside_loop():
            sync_result = reward_fn(None, [completion()])  # sync call from a thread with a running loop
            async_result = await reward_fn.acall(None, [completion()])
            return sync_result, async_result

        sync_result, async_result = asyncio.run(inside_loop())
    assert len(results) == 4 and all(r == results[0] for r in results)
    assert sync_result == async_result == [results[0][0]]


def test_score_items_serialise_with_their_evidence():
    with make() as reward_fn:
        item = reward_fn.score(None, [completion()], [{"gold": "permit"}])[0]
    data = json.loads(json.dumps(item.to_dict()))
    assert data["outcome"] == "certified" and data["verdict"]["decision"] == "permit"
    assert set(data["components"]) >= {"format", "certified", "correct", "grounded"}
