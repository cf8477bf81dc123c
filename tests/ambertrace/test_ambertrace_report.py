"""The platform's QueryResult is normalised into the embedded kernel's report shape, whatever it holds."""

import asyncio
import json

from ambertrace_fakes import data
from hypothesis import given, settings
from hypothesis import strategies as st

from proofgym.core import Claim, Verdict
from proofgym.ambertrace import AmberTraceVerifier, ambertrace_report

# The keys of the embedded kernel's report (docs/rulebooks.md, "The report"), plus the backend's own.
KERNEL_KEYS = {"decision", "status", "proof_checked", "proof_summary", "confidence", "certified_fact_summary",
               "rejected_facts", "symbolic_trace", "proof", "deciding_rules", "checker_problems"}
BACKEND_KEYS = {"backend", "platform_id", "schema_version"}


def test_certified_permit_maps_hosted_names_onto_the_kernel_report():
    report = ambertrace_report(data("query_certified_permit"), platform_id=7)
    assert set(report) == KERNEL_KEYS | BACKEND_KEYS
    assert report["backend"] == "ambertrace" and report["platform_id"] == 7 and report["schema_version"] == 1
    assert (report["decision"], report["status"], report["proof_checked"]) == ("permit", "decided", True)
    assert report["proof_summary"].startswith("Decision independently certified: 6 rule(s) fired")
    assert report["confidence"] == {"overall": 0.93, "symbolic": 1.0, "neural": 0.81}
    assert report["certified_fact_summary"] == {"accepted": 4, "rejected": 0, "derived": 5}
    assert report["rejected_facts"] == []
    trace = report["symbolic_trace"]
    assert (trace["rules_evaluated"], trace["rules_fired"], len(trace["rules"])) == (14, 6, 14)
    assert trace["rules"][0] == {"rule_id": 101, "rule_name": "is_adult", "rule_type": "derive",
                                 "action_type": "derive", "required": False, "fired": True,
                                 "explanation": "the applicant is at least 18 years old"}
    assert report["deciding_rules"] == ["permit_eligible"]
    assert report["proof"]["inputs"] == {"age": 34, "annual_income": 21000, "resident": True,
                                         "has_active_grant": False}
    assert report["checker_problems"] == []


def test_certified_verdict_carries_the_report_as_evidence():
    class Platforms:
        def query(self, platform_id, **options):
            return data("query_certified_deny")

    class Client:
        platforms = Platforms()

    [verdict] = asyncio.run(AmberTraceVerifier(7, client=Client()).verify_many([Claim(facts={})]))
    assert verdict.decision == "deny"
    assert verdict.evidence == ambertrace_report(data("query_certified_deny"), platform_id=7)
    assert Verdict.from_json(verdict.to_json()) == verdict


def test_missing_keys_become_empty_values():
    report = ambertrace_report({})
    assert set(report) == KERNEL_KEYS | BACKEND_KEYS
    assert report["decision"] is None and report["status"] is None and report["proof_checked"] is False
    assert report["confidence"] == {"overall": None, "symbolic": None, "neural": None}
    assert report["symbolic_trace"] == {"rules_evaluated": 0, "rules_fired": 0, "rules": []}
    assert report["proof"] is None and report["deciding_rules"] == []


def test_counts_fall_back_to_the_listed_rules_and_facts():
    report = ambertrace_report({"explanation": {
        "symbolic_trace": {"rules": [{"rule_name": "a", "fired": True}, {"rule_name": "b", "fired": "yes"}]},
        "certified_facts": [{"field": "age"}],
        "rejected_facts": ["legacy_field_name", {"field": "x", "value": float("nan"), "reasons": "too low"}],
    }})
    assert report["symbolic_trace"]["rules_evaluated"] == 2 and report["symbolic_trace"]["rules_fired"] == 1
    assert report["certified_fact_summary"]["accepted"] == 1 and report["certified_fact_summary"]["rejected"] == 2
    assert report["rejected_facts"] == [{"field": "legacy_field_name", "value": None, "reasons": []},
                                        {"field": "x", "value": None, "reasons": ["too low"]}]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
known_keys = st.sampled_from(["decision", "status", "proof_checked", "proof_summary", "explanation", "confidence",
                              "symbolic_trace", "rules", "rejected_facts", "certified_fact_summary", "proof",
                              "derived", "deciding_rules", "fired", "rule_name", "field", "reasons"])
results = st.recursive(
    json_values,
    lambda inner: st.dictionaries(known_keys, inner, max_size=6) | st.lists(inner, max_size=3),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(results)
def test_report_never_raises_and_is_json_native(result):
    report = ambertrace_report(result if isinstance(result, dict) else {"explanation": result})
    json.dumps(report, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(results)
def test_any_answer_becomes_a_serialisable_verdict(result):
    verdict = AmberTraceVerifier(7, client=object())._answer(result)
    assert isinstance(verdict, Verdict)
    verdict.to_json()


error_objects = st.dictionaries(
    st.sampled_from(["code", "message", "status_code", "status", "details", "rejected_facts", "missing_atoms",
                     "deciding_rule", "stalled_stage", "query_diagnostics"]),
    results, max_size=6,
)
batch_items = st.fixed_dictionaries(
    {"index": st.just(0), "status": st.sampled_from(["ok", "error", "other"])},
    optional={"data": results, "error": error_objects | results},
)


@settings(max_examples=200, deadline=None)
@given(batch_items)
def test_any_batch_item_becomes_a_serialisable_verdict(item):
    verdict = AmberTraceVerifier(7, client=object())._batch_item(item)
    assert isinstance(verdict, Verdict)
    verdict.to_json()
