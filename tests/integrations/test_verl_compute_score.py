"""veRL's entry point: the score with its breakdown, config resolution, invalid fill, threads and processes."""

import json
import multiprocessing
import threading

import pytest

from proofgym.integrations import (
    compute_score,
    compute_score_batch,
    reward_function_for_run_config,
)
from proofgym.integrations._verl import CONFIG_ENV, INVALID_SCORE_ENV

from ._support import flip_decision, outage_config, rows_and_gold

KEYS = {"score", "reward", "outcome", "decision", "certified_decision", "valid", "abstained", "format", "certified",
        "correct", "grounded", "graded", "rejected"}


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    monkeypatch.delenv(INVALID_SCORE_ENV, raising=False)


def test_a_gold_response_scores_the_ceiling_with_its_breakdown():
    rows, gold = rows_and_gold(1)
    result = compute_score("grant_eligibility", gold[0], rows[0]["gold"], {"source_facts": rows[0]["source_facts"]})
    top = reward_function_for_run_config("grant_eligibility").shaper.bounds[1]
    assert result["score"] == pytest.approx(top) and result["reward"] == result["score"]
    assert result["outcome"] == "certified" and result["valid"] == 1.0
    assert result["decision"] == result["certified_decision"] == rows[0]["gold"]
    assert result["certified"] == result["correct"] == result["grounded"] == 1.0


def test_every_outcome_carries_the_same_keys_as_veRL_collects_them_per_batch(tmp_path):
    rows, gold = rows_and_gold(2)
    results = [
        compute_score("grant_eligibility", gold[0], rows[0]["gold"]),
        compute_score("grant_eligibility", flip_decision(gold[1]), rows[1]["gold"]),
        compute_score("grant_eligibility", "no decision block here", "permit"),
        compute_score("anything", gold[0], None, {"proofgym_config": str(outage_config(tmp_path / "o.yaml"))}),
    ]
    assert [r["outcome"] for r in results] == ["certified", "certified", "format_error", "invalid"]
    assert results[1]["correct"] == 0.0 and results[1]["score"] < results[0]["score"]
    assert results[2]["score"] == -1.0 and results[2]["decision"] == ""
    for result in results:
        assert set(result) == KEYS
        assert isinstance(result["score"], float)


def test_ground_truth_may_be_a_gold_string_an_object_or_its_json_text():
    rows, gold = rows_and_gold(1)
    reference = {"gold": rows[0]["gold"], "source_facts": rows[0]["source_facts"]}
    scores = {compute_score("grant_eligibility", gold[0], truth)["score"]
              for truth in (reference, json.dumps(reference))}
    assert len(scores) == 1
    # Facts that are not the record's are not credited, whichever way they arrive.
    wrong = {**reference, "source_facts": {**reference["source_facts"], "age": 3}}
    assert compute_score("grant_eligibility", gold[0], wrong)["grounded"] == 0.0
    assert compute_score("grant_eligibility", gold[0], rows[0]["gold"], {"source_facts": wrong["source_facts"]}
                         )["grounded"] == 0.0
    with pytest.raises(ValueError, match=r"ground_truth\[0\]: looks like JSON"):
        compute_score("grant_eligibility", gold[0], "{broken")
    with pytest.raises(ValueError, match=r"ground_truth\[0\]: expected the gold decision"):
        compute_score("grant_eligibility", gold[0], 42)


def test_the_run_config_comes_from_extra_info_then_the_environment_then_the_data_source(tmp_path, monkeypatch):
    rows, gold = rows_and_gold(1)
    outage = str(outage_config(tmp_path / "outage.yaml"))
    assert compute_score("proofgym/grant_eligibility", gold[0], "permit")["outcome"] == "certified"
    monkeypatch.setenv(CONFIG_ENV, outage)
    assert compute_score("grant_eligibility", gold[0], "permit")["outcome"] == "invalid"
    assert compute_score("x", gold[0], "permit", {"proofgym_config": "grant_eligibility"})["outcome"] == "certified"
    monkeypatch.delenv(CONFIG_ENV)
    with pytest.raises(ValueError, match="neither a run config file nor a shipped domain"):
        compute_score("openai/gsm8k", gold[0], "permit")


def test_invalid_verifications_get_the_configured_fill_and_are_flagged(tmp_path, monkeypatch):
    config = str(outage_config(tmp_path / "outage.yaml"))
    _, gold = rows_and_gold(1)
    result = compute_score("x", gold[0], "permit", {"proofgym_config": config})
    assert (result["score"], result["reward"], result["valid"], result["abstained"]) == (0.0, None, 0.0, 1.0)
    monkeypatch.setenv(INVALID_SCORE_ENV, "-0.25")
    assert compute_score("x", gold[0], "permit", {"proofgym_config": config})["score"] == -0.25
    assert compute_score("x", gold[0], "permit", {"proofgym_config": config, "invalid_score": 0.5})["score"] == 0.5
    with pytest.raises(ValueError, match="invalid_score"):
        compute_score("x", gold[0], "permit", {"proofgym_config": config, "invalid_score": "nan"})


def test_the_batch_entry_point_matches_one_at_a_time_and_verifies_duplicates_once():
    rows, gold = rows_and_gold(4)
    responses = gold + gold + [flip_decision(gold[0])]
    truths = [r["gold"] for r in rows] * 2 + [rows[0]["gold"]]
    reward_fn = reward_function_for_run_config("grant_eligibility")
    batch = compute_score_batch(["grant_eligibility"] * 9, responses, truths, [None] * 9)
    metrics = reward_fn.runtime.last_batch_metrics()
    assert metrics.claims == 9 and metrics.dedup_saves + metrics.cache_hits_memory >= 4
    single = [compute_score("grant_eligibility", r, t) for r, t in zip(responses, truths)]
    assert batch == single
    with pytest.raises(ValueError, match="ground_truths has 1 items but solution_strs has 2"):
        compute_score_batch(["grant_eligibility"] * 2, gold[:2], ["permit"])


def test_worker_threads_share_one_reward_function_and_agree():
    rows, gold = rows_and_gold(8)
    expected = [compute_score("grant_eligibility", g, r["gold"]) for g, r in zip(gold, rows)]
    results: dict[int, list] = {}
    errors = []

    def worker(k):
        try:
            results[k] = [compute_score("grant_eligibility", g, r["gold"]) for g, r in zip(gold, rows)]
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors
    assert all(results[k] == expected for k in range(8))
    assert (reward_function_for_run_config("grant_eligibility")
            is reward_function_for_run_config("proofgym:grant_eligibility"))


def _score_in_child(args):
    response, truth = args
    return compute_score("grant_eligibility", response, truth)


def test_a_spawned_process_scores_like_this_one():
    rows, gold = rows_and_gold(3)
    jobs = [(g, r["gold"]) for g, r in zip(gold, rows)] + [("garbage", "deny")]
    expected = [_score_in_child(job) for job in jobs]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        assert pool.map(_score_in_child, jobs, chunksize=1) == expected
