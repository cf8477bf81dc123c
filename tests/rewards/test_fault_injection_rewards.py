"""10,000 rewards through the whole path with 20 % injected verifier faults."""

import hashlib
import json

from proofgym.parsers import JSONBlockParser
from proofgym.rewards import RewardFunction
from proofgym.runtime import RuntimeConfig, SQLiteVerdictCache, VerificationRuntime
from proofgym.testing import FakeVerifier, Fault, certified

FAULTS = [Fault.TIMEOUT, Fault.HANG, Fault.EXCEPTION, Fault.TRANSIENT, Fault.GARBAGE, Fault.WRONG_LENGTH,
          Fault.INVALID]
N = 10_000


def digest(i: int) -> int:
    return int(hashlib.sha256(str(i).encode()).hexdigest()[:8], 16)


def fault_of(claim):
    i = claim.facts["i"]
    return FAULTS[digest(i) % len(FAULTS)] if digest(i) % 100 < 20 else None


def truth(i: int) -> str:
    return "permit" if digest(i + 7) % 2 else "deny"


def test_faults_abstain_and_healthy_items_get_their_reward(tmp_path):
    verifier = FakeVerifier(lambda claim: certified(truth(claim.facts["i"])), fault=fault_of)
    config = RuntimeConfig(max_concurrency=256, batch_size=32, timeout_s=0.05, retries=1, backoff_base_s=0.001,
                           backoff_max_s=0.005, breaker_failure_threshold=10**9, cache_path=str(tmp_path / "c.db"))
    runtime = VerificationRuntime(verifier, config)
    completions, refs = [], []
    for i in range(N):
        decision = truth(i) if i % 3 else ("deny" if truth(i) == "permit" else "permit")  # a third answer wrong
        completions.append("<decision>" + json.dumps({"classification": decision, "facts": {"i": i}})
                           + "</decision>")
        refs.append({"gold": truth(i)})
    with RewardFunction(JSONBlockParser(decisions=["permit", "deny"]), runtime) as reward_fn:
        items = reward_fn.score(None, completions, refs)  # no exception escapes
        good_reward = max(item.reward for item in items if item.reward is not None)
        faulted = healthy = 0
        faulted_keys = []
        for i, item in enumerate(items):
            claim = item.claim
            if fault_of(claim) is not None:
                faulted += 1
                assert item.reward is None and item.outcome == "invalid", (i, item)
                assert runtime.cache_key(claim) not in runtime.memory_cache
                faulted_keys.append(runtime.cache_key(claim))
            else:
                healthy += 1
                assert item.outcome == "certified"
                right = claim.decision == truth(i)
                assert (item.reward == good_reward) == right, (i, item)
                assert item.components["correct"] == float(right)
    persistent = SQLiteVerdictCache(tmp_path / "c.db")
    assert len(persistent) == healthy and not any(key in persistent for key in faulted_keys)
    persistent.close()
    assert faulted > 1500 and healthy > 7500
    assert reward_fn.stats.outcomes["invalid"] == faulted
    assert reward_fn.stats.outcomes["certified"] == healthy
