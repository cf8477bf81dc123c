"""The batch path: per-item results, whole-batch failures, malformed batches, and what is sent."""

import asyncio

import pytest
from ambertrace_fakes import FakePlatform, QueryOnlyClient, payload, sdk_client

from proofgym.core import Claim, ErrorKind, Outcome
from proofgym.verifiers import TransientVerifierError
from proofgym.ambertrace import DEFAULT_QUERY, AmberTraceRequestRefused, AmberTraceVerifier


def claims(n):
    return [Claim(decision="permit", facts={"age": 20 + i, "resident": True}, reasoning=f"r{i}") for i in range(n)]


def verify(verifier, items):
    return asyncio.run(verifier.verify_many(items))


def batch_verifier(monkeypatch, name=None, **options):
    platform = FakePlatform(lambda facts: payload("query_certified_permit"),
                            batch=None if name is None else payload(name))
    return platform, AmberTraceVerifier(7, client=sdk_client(platform, monkeypatch), **options)


def test_mixed_batch_is_classified_item_by_item(monkeypatch):
    platform, verifier = batch_verifier(monkeypatch, "batch_mixed")
    verdicts = verify(verifier, claims(6))
    assert [(v.outcome, v.error_kind, v.decision) for v in verdicts] == [
        (Outcome.CERTIFIED, None, "permit"),
        (Outcome.CERTIFIED, None, "deny"),
        (Outcome.REFUTED, None, None),
        (Outcome.INVALID, ErrorKind.TIMEOUT, None),
        (Outcome.INVALID, ErrorKind.RATE_LIMITED, None),
        (Outcome.INVALID, ErrorKind.MALFORMED, None),
    ]
    assert [f.field for f in verdicts[2].rejected_facts] == ["age"]
    assert len(platform.requests) == 1


def test_batch_items_are_matched_by_index_not_position(monkeypatch):
    recorded = payload("batch_mixed")
    recorded["body"]["data"]["results"].reverse()
    platform = FakePlatform(lambda facts: {}, batch=recorded)
    verdicts = verify(AmberTraceVerifier(7, client=sdk_client(platform, monkeypatch)), claims(6))
    assert verdicts[0].decision == "permit" and verdicts[1].decision == "deny"


def test_batch_with_the_wrong_number_of_results_is_malformed_for_every_item(monkeypatch):
    _, verifier = batch_verifier(monkeypatch, "batch_short")
    verdicts = verify(verifier, claims(3))
    assert all(v.error_kind is ErrorKind.MALFORMED for v in verdicts)
    assert "2 results for 3 queries" in verdicts[0].reason


@pytest.mark.parametrize("body", [
    {"data": ["not", "a", "dict"]},
    {"data": {"platform_id": 7}},
    {"data": {"platform_id": 7, "results": [{"index": 0, "status": "ok", "data": {}},
                                            {"index": 0, "status": "ok", "data": {}}]}},
    {"data": {"platform_id": 7, "results": ["x", "y"]}},
])
def test_batch_answer_of_the_wrong_shape_is_malformed(body, monkeypatch):
    platform = FakePlatform(lambda facts: {}, batch={"status": 200, "body": body})
    verdicts = verify(AmberTraceVerifier(7, client=sdk_client(platform, monkeypatch)), claims(2))
    assert [v.error_kind for v in verdicts] == [ErrorKind.MALFORMED] * 2


@pytest.mark.parametrize("item", [
    {"index": 0, "status": "pending"},
    {"index": 0, "status": "ok"},
    {"index": 0, "status": "error", "error": "boom"},
])
def test_batch_item_of_the_wrong_shape_is_malformed(item, monkeypatch):
    platform = FakePlatform(lambda facts: {}, batch={"status": 200, "body": {"data": {"results": [item]}}})
    [verdict] = verify(AmberTraceVerifier(7, client=sdk_client(platform, monkeypatch)), claims(1))
    assert verdict.error_kind is ErrorKind.MALFORMED


@pytest.mark.parametrize("name, kind", [
    ("query_503_proxy", ErrorKind.OUTAGE),
    ("query_503_engine_unavailable", ErrorKind.OUTAGE),
    ("query_503_fail_closed_rejected", ErrorKind.OUTAGE),  # denials come per item, never for a whole batch
    ("network_error", ErrorKind.OUTAGE),
    ("timeout", ErrorKind.TIMEOUT),
    ("query_429", ErrorKind.RATE_LIMITED),
    ("query_401", ErrorKind.CRASH),
    ("query_403_capability", ErrorKind.CRASH),
])
def test_whole_batch_failure_no_claim_can_cause_is_answered_per_item(name, kind, monkeypatch):
    _, verifier = batch_verifier(monkeypatch, name)
    verdicts = verify(verifier, claims(3))
    assert [v.error_kind for v in verdicts] == [kind] * 3


def test_whole_batch_app_error_is_raised_as_transient_so_the_runtime_bisects(monkeypatch):
    _, verifier = batch_verifier(monkeypatch, "query_500")
    with pytest.raises(TransientVerifierError, match="internal_error"):
        verify(verifier, claims(3))


@pytest.mark.parametrize("name", ["query_400_bad_request", "query_422_gate_rejection"])
def test_whole_batch_refusal_is_raised_so_the_runtime_isolates_the_claim(name, monkeypatch):
    _, verifier = batch_verifier(monkeypatch, name)
    with pytest.raises(AmberTraceRequestRefused):
        verify(verifier, claims(3))


def test_request_carries_facts_query_and_projection_but_never_the_decision(monkeypatch):
    platform, verifier = batch_verifier(monkeypatch)
    verify(verifier, [Claim(decision="deny", facts={"age": {"value": 34, "confidence": 0.9}}, reasoning="secret")])
    [(path, body)] = platform.requests
    assert path == "/api/v1/platforms/7/query-batch"
    assert body["projection"] == ["decision", "status", "proof_checked", "proof_summary", "explanation"]
    assert body["queries"] == [{"query": DEFAULT_QUERY, "facts": {"age": {"value": 34, "confidence": 0.9}},
                                "explain": True}]


def test_projection_off_asks_for_the_full_answer(monkeypatch):
    platform, verifier = batch_verifier(monkeypatch, projection=False, use_batch=False)
    verify(verifier, claims(1))
    [(path, body)] = platform.requests
    assert path == "/api/v1/platforms/7/query" and "projection" not in body and body["explain"] is True


def test_use_batch_false_sends_one_query_per_claim(monkeypatch):
    platform, verifier = batch_verifier(monkeypatch, use_batch=False, query="Is this applicant eligible?")
    verdicts = verify(verifier, claims(4))
    assert all(v.certified for v in verdicts)
    assert [path for path, _ in platform.requests] == ["/api/v1/platforms/7/query"] * 4
    assert {body["query"] for _, body in platform.requests} == {"Is this applicant eligible?"}


def test_client_without_query_batch_falls_back_to_one_query_per_claim(monkeypatch):
    platform = FakePlatform(lambda facts: payload("query_certified_deny"))
    verifier = AmberTraceVerifier(7, client=QueryOnlyClient(sdk_client(platform, monkeypatch)))
    assert all(v.decision == "deny" for v in verify(verifier, claims(3)))
    assert len(platform.requests) == 3


def test_a_large_call_is_split_into_batches_of_max_batch_size(monkeypatch):
    platform, verifier = batch_verifier(monkeypatch)
    assert verifier.max_batch_size == 50
    verdicts = verify(verifier, claims(120))
    assert len(verdicts) == 120 and all(v.certified for v in verdicts)
    assert sorted(len(body["queries"]) for _, body in platform.requests) == [20, 50, 50]


def test_empty_call_sends_nothing(monkeypatch):
    platform, verifier = batch_verifier(monkeypatch)
    assert verify(verifier, []) == []
    assert platform.requests == []
