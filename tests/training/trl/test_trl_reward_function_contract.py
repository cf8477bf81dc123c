"""The TRL reward function: TRL's calling convention, plain and chat, None for invalid, metrics through TRL's hooks."""

import asyncio
import inspect
import json

import pytest

from proofgym.integrations import domain_run_config
from proofgym.training import AsyncTRLRewardFunction, trl_reward_function
from proofgym.rewards import RewardFunction

from integrations._support import flip_decision, rows_and_gold, scripted_reward_function


@pytest.fixture(scope="module")
def reward():
    fn = trl_reward_function(domain_run_config("grant_eligibility"))
    yield fn
    fn.close()


def _columns(rows):
    return {"gold": [r["gold"] for r in rows], "source_facts": [r["source_facts"] for r in rows],
            "branch": [r["branch"] for r in rows], "id": [r["id"] for r in rows]}


def test_plain_completions_are_scored_against_the_dataset_columns(reward):
    rows, gold = rows_and_gold(6)
    wrong = [flip_decision(c) for c in gold]
    rewards = reward([r["prompt"] for r in rows + rows], gold + wrong, **_columns(rows + rows))
    top = reward.reward_fn.shaper.bounds[1]
    assert rewards[:6] == [pytest.approx(top)] * 6
    assert all(r is not None and r < top - 0.5 for r in rewards[6:])


def test_chat_prompts_and_completions_read_only_the_assistant_message(reward):
    rows, gold = rows_and_gold(4, chat=True)
    completions = [[{"role": "assistant", "content": c}] for c in gold]
    rewards = reward([r["prompt"] for r in rows], completions, **_columns(rows))
    assert rewards == [pytest.approx(reward.reward_fn.shaper.bounds[1])] * 4
    # The system prompt's example block, sent back as if it were the answer, never pays.
    echoed = [[{"role": "assistant", "content": r["prompt"][0]["content"]}] for r in rows]
    assert reward([r["prompt"] for r in rows], echoed, **_columns(rows)) == [-1.0] * 4


def test_trl_keyword_arguments_are_not_mistaken_for_references(reward):
    rows, gold = rows_and_gold(2)
    seen = {}
    rewards = reward(prompts=[r["prompt"] for r in rows], completions=gold, completion_ids=[[1], [2]],
                     trainer_state=object(), log_extra=lambda *a: None, environments=None,
                     log_metric=lambda name, value: seen.setdefault(name, value), **_columns(rows))
    assert rewards == [pytest.approx(reward.reward_fn.shaper.bounds[1])] * 2
    assert seen["proofgym/certified_share"] == 1.0


def test_source_facts_may_come_as_json_text_or_in_a_reference_column(reward):
    rows, gold = rows_and_gold(3)
    as_text = reward(None, gold, gold=[r["gold"] for r in rows],
                     source_facts=[json.dumps(r["source_facts"]) for r in rows])
    as_reference = reward(None, gold, reference=[json.dumps({"gold": r["gold"], "source_facts": r["source_facts"]})
                                                 for r in rows])
    top = reward.reward_fn.shaper.bounds[1]
    assert as_text == as_reference == [pytest.approx(top)] * 3
    # Facts that are not the record's: the certificate is not credited.
    other = [json.dumps({**r["source_facts"], "age": r["source_facts"]["age"] + 1}) for r in rows]
    assert all(x < top for x in reward(None, gold, gold=[r["gold"] for r in rows], source_facts=other))


@pytest.mark.parametrize("columns, message", [
    ({"gold": ["permit"]}, "dataset column 'gold' must have one value per completion (2)"),
    ({"gold": "permit"}, "dataset column 'gold' must have one value per completion"),
    ({"source_facts": ["{not json", "{}"]}, "dataset column 'source_facts', row 0: expected a JSON object"),
    ({"reference": [[1], None]}, "dataset column 'reference', row 0: expected an object"),
])
def test_malformed_reference_columns_are_refused_with_the_column_named(reward, columns, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        reward(None, ["a", "b"], **columns)


def test_invalid_verifications_are_none_and_counted():
    reward_fn, verifier = scripted_reward_function(invalid_every=2)
    fn = trl_reward_function(reward_fn)
    texts = ["ab", "abc", "abcd", "b", "bcd", "", "xyzw"]
    logged, extra = {}, {}
    rewards = fn(None, texts, log_metric=logged.__setitem__, log_extra=extra.__setitem__)
    outcomes = extra["proofgym_outcome"]
    assert [r is None for r in rewards] == [o == "invalid" for o in outcomes]
    assert "invalid" in outcomes and "certified" in outcomes and "format_error" in outcomes
    verified = len(texts) - outcomes.count("format_error")
    assert logged["proofgym/invalid_share"] == pytest.approx(outcomes.count("invalid") / verified)
    assert logged["proofgym/outcome/format_error"] == pytest.approx(1 / len(texts))
    assert fn.last_metrics == logged
    reward_fn.close()


def test_metrics_carry_the_breakdown_and_the_runtime_counters(reward):
    rows, gold = rows_and_gold(4)
    logged = {}
    # A GRPO group repeats itself: the second copy of each completion is answered by the runtime's dedup.
    reward(None, gold + gold, log_metric=logged.__setitem__, **_columns(rows + rows))
    assert logged["proofgym/component/certified"] == 1.0
    assert logged["proofgym/component/grounded"] == 1.0
    assert logged["proofgym/runtime/dedup_saves"] + logged["proofgym/runtime/cache_hits_memory"] >= 4
    assert logged["proofgym/runtime/claims"] == 8
    assert all(isinstance(value, float) for value in logged.values())


def test_the_name_is_what_trl_logs_the_reward_under():
    from trl.trainer.utils import get_callable_name, is_async_callable

    config = domain_run_config("grant_eligibility")
    fn = trl_reward_function(config)
    afn = trl_reward_function(config, asynchronous=True, name="grant_async")
    try:
        assert get_callable_name(fn) == "grant_eligibility"
        assert get_callable_name(afn) == "grant_async"
        assert not is_async_callable(fn)
        assert is_async_callable(afn) and isinstance(afn, AsyncTRLRewardFunction)
    finally:
        fn.close()
        afn.close()
    with pytest.raises(ValueError, match="identifier"):
        trl_reward_function(config.reward_function(), name="not a name")


def test_the_async_variant_scores_like_the_sync_one_from_a_foreign_event_loop(reward):
    rows, gold = rows_and_gold(4)
    afn = trl_reward_function(reward.reward_fn, asynchronous=True)
    assert inspect.iscoroutinefunction(afn.__call__)
    completions = gold[:2] + [flip_decision(c) for c in gold[2:]]
    expected = reward(None, completions, **_columns(rows))

    async def main():
        return await afn(None, completions, **_columns(rows))

    assert asyncio.run(main()) == expected


def test_a_bare_reward_function_is_not_closed_by_the_adapter():
    rows, gold = rows_and_gold(1)
    inner: RewardFunction = domain_run_config("grant_eligibility").reward_function()
    fn = trl_reward_function(inner)
    fn.close()
    assert fn(None, gold, **_columns(rows)) == [pytest.approx(inner.shaper.bounds[1])]
    inner.close()
