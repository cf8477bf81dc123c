"""Through the VerificationRuntime and the reward function: outages abstain and are never cached,
denials are refuted and cached, a missing key or SDK never raises out of the reward path."""

import logging
import sys

import pytest
from ambertrace_fakes import FakePlatform, httpx, payload, sdk_client

from proofgym.core import Claim, ErrorKind, Outcome
from proofgym.parsers import JSONBlockParser
from proofgym.rewards import DefaultRewardShaper, RewardFunction
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.ambertrace import AmberTraceVerifier

FAST = RuntimeConfig(retries=2, backoff_base_s=0.001, backoff_max_s=0.002)
PERMIT = {"age": 34, "annual_income": 21000, "resident": True, "has_active_grant": False}


def by_case(facts):
    """The recorded answer named by the claim's ``case`` fact; certified permit otherwise."""
    return payload(facts.get("case", "query_certified_permit"))


def claim(case=None, decision="permit"):
    return Claim(decision=decision, facts={**PERMIT, **({"case": case} if case else {})})


@pytest.fixture(params=[True, False], ids=["batch", "per_claim"])
def use_batch(request):
    return request.param


def runtime_for(platform, monkeypatch, use_batch=True, config=FAST):
    verifier = AmberTraceVerifier(7, client=sdk_client(platform, monkeypatch), use_batch=use_batch)
    return VerificationRuntime(verifier, config)


@pytest.mark.parametrize("case", ["query_503_proxy", "query_503_engine_unavailable", "network_error",
                                  "query_429", "timeout"])
def test_outage_is_retried_then_invalid_never_cached_never_refuted_and_abstains(case, use_batch, monkeypatch):
    platform = FakePlatform(by_case)
    outage = claim(case)
    with runtime_for(platform, monkeypatch, use_batch) as runtime:
        [verdict] = runtime.verify_many_sync([outage])
        assert verdict.outcome is Outcome.INVALID and verdict.error_kind.transient
        assert runtime.metrics().retries == FAST.retries
        assert runtime.cache_lookup(outage) is None
        assert DefaultRewardShaper().shape(verdict, outage).reward is None
        calls = len(platform.requests)
        runtime.verify_many_sync([outage])  # not cached: asked again
        assert len(platform.requests) > calls


def test_outage_that_clears_on_retry_certifies(monkeypatch):
    answers = iter([payload("query_503_engine_unavailable"), payload("query_certified_permit")])
    platform = FakePlatform(lambda facts: next(answers))
    with runtime_for(platform, monkeypatch, use_batch=False) as runtime:
        [verdict] = runtime.verify_many_sync([claim()])
    assert verdict.certified and verdict.decision == "permit"


def test_fail_closed_denial_is_refuted_and_cached(use_batch, monkeypatch):
    platform = FakePlatform(by_case)
    denied = claim("query_503_fail_closed_rejected")
    with runtime_for(platform, monkeypatch, use_batch) as runtime:
        [verdict] = runtime.verify_many_sync([denied])
        assert verdict.outcome is Outcome.REFUTED and runtime.metrics().retries == 0
        assert runtime.cache_lookup(denied) == verdict
        calls = len(platform.requests)
        [again] = runtime.verify_many_sync([denied])
        assert again == verdict and len(platform.requests) == calls
    shaped = DefaultRewardShaper().shape(verdict, denied)
    assert shaped.outcome == "refuted" and shaped.components["certified"] == 0.0


def test_claims_that_differ_only_in_their_decision_share_one_platform_query(monkeypatch):
    platform = FakePlatform(by_case)
    with runtime_for(platform, monkeypatch) as runtime:
        verdicts = runtime.verify_many_sync([claim(decision="permit"), claim(decision="deny")])
    assert [v.decision for v in verdicts] == ["permit", "permit"] and len(platform.queries) == 1
    assert DefaultRewardShaper().shape(verdicts[1], claim(decision="deny")).components["certified"] == 0.0


def test_mixed_batch_through_the_runtime_retries_only_the_transient_items(monkeypatch):
    cases = [None, "query_certified_deny", "query_503_fail_closed_rejected", "query_429", "query_500"]
    platform = FakePlatform(by_case)
    claims = [claim(case) for case in cases]
    with runtime_for(platform, monkeypatch) as runtime:
        verdicts = runtime.verify_many_sync(claims)
        assert [(v.outcome, v.error_kind) for v in verdicts] == [
            (Outcome.CERTIFIED, None), (Outcome.CERTIFIED, None), (Outcome.REFUTED, None),
            (Outcome.INVALID, ErrorKind.RATE_LIMITED), (Outcome.INVALID, ErrorKind.OUTAGE),
        ]
        assert [len(body["queries"]) for _, body in platform.requests] == [5, 2, 2]
        assert [runtime.cache_lookup(c) is not None for c in claims] == [True, True, True, False, False]


def test_whole_batch_app_error_is_bisected_to_the_claim_that_causes_it(monkeypatch):
    class PoisonPlatform(FakePlatform):
        """Fails any batch that carries the poison claim with an app 500, as a server bug would."""

        def __call__(self, request):
            if request.url.path.endswith("/query-batch") and b'"poison"' in request.content:
                self.requests.append((request.url.path, {"queries": []}))
                recorded = payload("query_500")
                return httpx.Response(recorded["status"], json=recorded["body"])
            return super().__call__(request)

    platform = PoisonPlatform(lambda facts: payload("query_certified_permit"))
    claims = [claim(), claim("poison"), Claim(facts={**PERMIT, "age": 50}), Claim(facts={**PERMIT, "age": 60})]
    with runtime_for(platform, monkeypatch) as runtime:
        verdicts = runtime.verify_many_sync(claims)
    assert [v.outcome for v in verdicts] == [Outcome.CERTIFIED, Outcome.INVALID, Outcome.CERTIFIED,
                                             Outcome.CERTIFIED]
    assert verdicts[1].error_kind is ErrorKind.OUTAGE and "internal_error" in verdicts[1].reason


COMPLETIONS = [
    '<reasoning>adult resident</reasoning><decision>{"classification": "permit", "facts": '
    '{"age": 34, "annual_income": 21000, "resident": true, "has_active_grant": false}}</decision>',
    '<reasoning>too rich</reasoning><decision>{"classification": "deny", "facts": '
    '{"age": 41, "annual_income": 52000, "resident": true, "has_active_grant": false}}</decision>',
    "no decision block at all",
]


def reward_function(verifier):
    return RewardFunction(JSONBlockParser(decisions=["permit", "deny"]), VerificationRuntime(verifier, FAST))


def test_missing_api_key_gives_invalid_for_every_item_and_never_raises(monkeypatch, caplog):
    monkeypatch.delenv("AMBERTRACE_API_KEY", raising=False)
    with reward_function(AmberTraceVerifier(7)) as reward_fn, caplog.at_level(logging.ERROR):
        for _ in range(2):
            assert reward_fn(None, COMPLETIONS) == [None, None, -1.0]
        items = reward_fn.score(None, COMPLETIONS)
    for item in items[:2]:
        assert item.verdict.error_kind is ErrorKind.CRASH and "AMBERTRACE_API_KEY" in item.verdict.reason
    assert reward_fn.runtime.metrics().retries == 0
    assert reward_fn.stats.outcomes["invalid"] == 6 and "refuted" not in reward_fn.stats.outcomes
    ours = [r for r in caplog.records if r.name == "proofgym.verifiers.ambertrace"]
    assert len(ours) == 1 and "AMBERTRACE_API_KEY" in ours[0].getMessage()


def test_missing_sdk_gives_invalid_for_every_item_and_never_raises(monkeypatch):
    monkeypatch.setenv("AMBERTRACE_API_KEY", "at_test_0123456789abcdef")
    monkeypatch.setitem(sys.modules, "ambertraceai", None)  # makes `import ambertraceai` fail
    with reward_function(AmberTraceVerifier(7)) as reward_fn:
        items = reward_fn.score(None, COMPLETIONS)
    assert [item.reward for item in items] == [None, None, -1.0]
    assert all("not installed" in item.verdict.reason for item in items[:2])


def test_custom_key_variable_is_the_only_place_the_key_is_read(monkeypatch):
    monkeypatch.setenv("AMBERTRACE_API_KEY", "at_test_0123456789abcdef")
    monkeypatch.delenv("TEAM_AMBERTRACE_KEY", raising=False)
    with reward_function(AmberTraceVerifier(7, api_key_env="TEAM_AMBERTRACE_KEY")) as reward_fn:
        items = reward_fn.score(None, COMPLETIONS[:1])
    assert "TEAM_AMBERTRACE_KEY" in items[0].verdict.reason


def test_reward_function_over_the_platform_pays_certified_and_abstains_on_outage(monkeypatch):
    answers = {21000: "query_certified_permit", 52000: "query_503_engine_unavailable"}
    platform = FakePlatform(lambda facts: payload(answers[facts["annual_income"]]))
    verifier = AmberTraceVerifier(7, client=sdk_client(platform, monkeypatch))
    with reward_function(verifier) as reward_fn:
        rewards = reward_fn(None, COMPLETIONS, [{"gold": "permit"}, {"gold": "deny"}, None])
    weights = DefaultRewardShaper().config.weights
    # Certified, correct and grounded; no graded credit (the backend reports no graded component).
    assert rewards[0] == pytest.approx(weights.format + weights.certified + weights.correct + weights.grounded)
    assert rewards[1] is None and rewards[2] == -1.0
