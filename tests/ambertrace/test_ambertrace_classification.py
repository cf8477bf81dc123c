"""Each recorded platform answer maps to the documented outcome, through the real SDK, on both paths."""

import asyncio

import pytest
from ambertrace_fakes import FakePlatform, QueryOnlyClient, data, sdk_client

from proofgym.core import Claim, ErrorKind, Outcome
from proofgym.ambertrace import AmberTraceVerifier

C, R, I = Outcome.CERTIFIED, Outcome.REFUTED, Outcome.INVALID  # noqa: E741  (the table's one-letter columns)

# payload -> (outcome, error kind, certified decision)
TABLE = {
    "query_certified_permit": (C, None, "permit"),
    "query_certified_deny": (C, None, "deny"),
    "query_200_abstain": (R, None, None),
    "query_200_unverified": (I, ErrorKind.MALFORMED, None),
    "query_200_malformed": (I, ErrorKind.MALFORMED, None),
    "query_503_fail_closed_rejected": (R, None, None),
    "query_503_fail_closed_missing": (R, None, None),
    "query_503_engine_unavailable": (I, ErrorKind.OUTAGE, None),
    "query_503_proxy": (I, ErrorKind.OUTAGE, None),
    "query_429": (I, ErrorKind.RATE_LIMITED, None),
    "query_500": (I, ErrorKind.OUTAGE, None),
    "query_401": (I, ErrorKind.CRASH, None),
    "query_403_capability": (I, ErrorKind.CRASH, None),
    "query_422_gate_rejection": (R, None, None),
    "query_400_bad_request": (I, ErrorKind.CRASH, None),
    "network_error": (I, ErrorKind.OUTAGE, None),
    "timeout": (I, ErrorKind.TIMEOUT, None),
}

CLAIM = Claim(decision="permit", facts={"age": 34, "annual_income": 21000, "resident": True, "has_active_grant": False})


def verify(verifier, claims):
    return asyncio.run(verifier.verify_many(claims))


@pytest.fixture(params=["batch", "per_claim"])
def path(request):
    return request.param


def make_verifier(platform, monkeypatch, path):
    api = sdk_client(platform, monkeypatch)
    return AmberTraceVerifier(7, client=api if path == "batch" else QueryOnlyClient(api))


@pytest.mark.parametrize("name", sorted(TABLE))
def test_recorded_answer_is_classified_as_documented(name, path, monkeypatch):
    outcome, error_kind, decision = TABLE[name]
    platform = FakePlatform.always(name)
    [verdict] = verify(make_verifier(platform, monkeypatch, path), [CLAIM])
    assert (verdict.outcome, verdict.error_kind, verdict.decision) == (outcome, error_kind, decision), verdict.reason
    assert verdict.reason
    verdict.to_json()  # evidence is JSON-native
    assert platform.requests[0][0].endswith("/query-batch" if path == "batch" else "/query")


def test_fail_closed_denial_carries_the_rejected_facts_and_why(path, monkeypatch):
    [verdict] = verify(make_verifier(FakePlatform.always("query_503_fail_closed_rejected"), monkeypatch, path), [CLAIM])
    assert [(f.field, f.value, f.reasons) for f in verdict.rejected_facts] == [
        ("age", 34, ("confidence 0.41 below tau 0.8",)),
        ("pet_name", "Rex", ("undeclared field: not in the domain schema",)),
    ]
    assert "could not be certified" in verdict.reason
    assert verdict.evidence["status"] == "abstain" and verdict.evidence["proof_checked"] is False
    assert verdict.evidence["decision"] is None and verdict.evidence["backend"] == "ambertrace"
    assert verdict.evidence["rejected_facts"][0] == {"field": "age", "value": 34,
                                                     "reasons": ["confidence 0.41 below tau 0.8"]}
    assert verdict.evidence["certified_fact_summary"]["rejected"] == 2


def test_missing_input_denial_is_indeterminate(path, monkeypatch):
    [verdict] = verify(make_verifier(FakePlatform.always("query_503_fail_closed_missing"), monkeypatch, path), [CLAIM])
    assert verdict.outcome is Outcome.REFUTED and verdict.rejected_facts == ()
    assert verdict.evidence["status"] == "indeterminate"
    if path == "per_claim":  # the SDK surfaces the top-level diagnostics on its error
        assert verdict.evidence["error"]["missing_atoms"] == ["resident"]


def test_outage_reason_never_reads_like_a_denial(monkeypatch):
    [verdict] = verify(make_verifier(FakePlatform.always("query_503_proxy"), monkeypatch, "per_claim"), [CLAIM])
    assert "backend_unavailable" in verdict.reason and verdict.rejected_facts == () and verdict.evidence == {}


def test_a_decision_whose_proof_did_not_check_is_invalid_not_paid_nor_punished(monkeypatch):
    answer = {**data("query_certified_permit"), "proof_checked": False}
    platform = FakePlatform(lambda facts: {"status": 200, "body": {"data": answer}})
    [verdict] = verify(make_verifier(platform, monkeypatch, "batch"), [CLAIM])
    assert verdict.error_kind is ErrorKind.CRASH and "proof did not check" in verdict.reason


def test_status_unavailable_on_a_200_is_an_outage(monkeypatch):
    answer = {**data("query_200_abstain"), "status": "unavailable"}
    platform = FakePlatform(lambda facts: {"status": 200, "body": {"data": answer}})
    [verdict] = verify(make_verifier(platform, monkeypatch, "per_claim"), [CLAIM])
    assert verdict.error_kind is ErrorKind.OUTAGE


@pytest.mark.parametrize("change", [
    {"decision": 3}, {"decision": ""}, {"status": "maybe"}, {"proof_checked": 1},
    {"status": "abstain"},  # abstain with a decision
    {"decision": None, "status": "decided"},
])
def test_inconsistent_or_mistyped_answer_is_malformed(change, monkeypatch):
    answer = {**data("query_certified_permit"), **change}
    platform = FakePlatform(lambda facts: {"status": 200, "body": {"data": answer}})
    [verdict] = verify(make_verifier(platform, monkeypatch, "per_claim"), [CLAIM])
    assert verdict.error_kind is ErrorKind.MALFORMED


def test_older_server_without_status_is_understood(monkeypatch):
    answer = {k: v for k, v in data("query_certified_deny").items() if k != "status"}
    platform = FakePlatform(lambda facts: {"status": 200, "body": {"data": answer}})
    [verdict] = verify(make_verifier(platform, monkeypatch, "per_claim"), [CLAIM])
    assert verdict.certified and verdict.decision == "deny" and verdict.evidence["status"] == "decided"


def test_api_key_never_appears_in_a_reason(monkeypatch):
    from ambertrace_fakes import API_KEY

    monkeypatch.setenv("AMBERTRACE_API_KEY", API_KEY)
    leaky = {"status": 400, "body": {"error": {"code": "bad_request", "message": f"bad header Bearer {API_KEY}"}}}
    [verdict] = verify(make_verifier(FakePlatform(lambda facts: leaky), monkeypatch, "per_claim"), [CLAIM])
    assert API_KEY not in verdict.reason and "***" in verdict.reason


def test_unexpected_client_exception_is_a_crash_of_that_claim_only():
    class Platforms:
        def query(self, platform_id, **kwargs):
            if kwargs["facts"].get("boom"):
                raise KeyError("boom")
            return data("query_certified_permit")

    class Client:
        platforms = Platforms()

    verdicts = verify(AmberTraceVerifier(7, client=Client()), [Claim(facts={"boom": True}), CLAIM])
    assert verdicts[0].error_kind is ErrorKind.CRASH and "KeyError" in verdicts[0].reason
    assert verdicts[1].certified


@pytest.mark.parametrize("error, kind", [(ConnectionResetError("reset"), ErrorKind.OUTAGE),
                                         (TimeoutError("slow"), ErrorKind.TIMEOUT)])
def test_network_errors_a_client_raises_itself_are_transient(error, kind):
    class Platforms:
        def query(self, platform_id, **kwargs):
            raise error

    class Client:
        platforms = Platforms()

    [verdict] = verify(AmberTraceVerifier(7, client=Client()), [CLAIM])
    assert verdict.error_kind is kind and kind.transient
