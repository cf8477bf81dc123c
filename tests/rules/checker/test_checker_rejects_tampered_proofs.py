"""Every tampered proof is rejected: each semantic point by hand, then random tampering with hypothesis."""

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proofgym.rules._checker import check_proof

from ._strategies import same, tampered
from ._support import GRANT_PROOFS, grant_proof


def _set(proof, path, value):
    *parents, last = path
    for step in parents:
        proof = proof[step]
    proof[last] = value


def _swap(items, i, j):
    items[i], items[j] = items[j], items[i]


# (case, tampering, a word the problems must mention)
TAMPERING = {
    "flipped conclusion value": ("permit", lambda p: _set(p, ["firings", 0, "conclusion", "value"], False), "firing"),
    "conclusion names another fact": (
        "permit", lambda p: _set(p, ["firings", 0, "conclusion", "fact"], "low_income"), "firing"),
    "dropped premise": ("permit", lambda p: p["firings"][0]["premises"].clear(), "firing"),
    "added premise": ("permit", lambda p: _set(p, ["firings", 0, "premises", "income"], 6000), "firing"),
    "premise of a fact absent at that point": (
        "conflict", lambda p: _set(p, ["firings", 1, "premises", "income"], 0), "firing"),
    "wrong premise value": ("permit", lambda p: _set(p, ["firings", 2, "premises", "monthly"], 400.0), "firing"),
    "swapped firings across strata": ("permit", lambda p: _swap(p["firings"], 1, 2), "order"),
    "swapped firings within a stratum (file order)": ("permit", lambda p: _swap(p["firings"], 0, 1), "order"),
    "forged firing of a rule that did not fire": (
        "permit", lambda p: p["firings"].insert(2, {"rule": "band_senior", "stratum": 1, "premises": {"age": 34},
                                                    "conclusion": {"fact": "band", "value": 1}}), "does not fire"),
    "firing of a decision rule": (
        "permit", lambda p: p["firings"].append({"rule": "permit_low_income", "stratum": 3, "premises": {},
                                                 "conclusion": {"fact": "low_income", "value": True}}),
        "not a derive rule"),
    "firing of an unknown rule": (
        "permit", lambda p: p["firings"].append({"rule": "made_up", "stratum": 1, "premises": {},
                                                 "conclusion": {"fact": "band", "value": 1}}), "not a derive rule"),
    "removed firing": ("permit", lambda p: p["firings"].pop(), "missing"),
    "removed conflicting firing": ("conflict", lambda p: p["firings"].pop(), "missing"),
    "wrong stratum number": ("permit", lambda p: _set(p, ["firings", 2, "stratum"], 1), "firing"),
    "stratum True for 1": ("permit", lambda p: _set(p, ["firings", 0, "stratum"], True), "firing"),
    "conclusion 1 for True": ("permit", lambda p: _set(p, ["firings", 0, "conclusion", "value"], 1), "firing"),
    "extra key in a firing": ("permit", lambda p: _set(p, ["firings", 0, "note"], "x"), "firing"),
    "changed decision": ("permit", lambda p: _set(p, ["decision", "decision"], "deny"), "decision"),
    "changed deciding rule": ("agreeing_rules", lambda p: _set(p, ["decision", "deciding_rules"], ["deny_nonresident"]),
                              "decision"),
    "higher-priority unblocked candidate missed": (
        "agreeing_rules", lambda p: (_set(p, ["decision", "decision"], "deny"),
                                     _set(p, ["decision", "deciding_rules"], ["deny_nonresident"])), "decision"),
    "blocked candidate decides": (
        "blocked", lambda p: _set(p, ["decision"], {"status": "decided", "decision": "permit",
                                                    "deciding_rules": ["permit_low_income"], "by_default": False}),
        "decision"),
    "deny posture not marked by_default": ("blocked", lambda p: _set(p, ["decision", "by_default"], False), "decision"),
    "by_default 0 for False": ("permit", lambda p: _set(p, ["decision", "by_default"], 0), "decision"),
    "deny by default without naming the blocking constraint": (
        "blocked", lambda p: _set(p, ["decision", "deciding_rules"], []), "decision"),
    "abstain posture gives a decision": (
        "blocked_abstain", lambda p: _set(p, ["decision"], {"status": "decided", "decision": "deny",
                                                            "deciding_rules": [], "by_default": True}), "decision"),
    "conflict hidden": ("conflict", lambda p: _set(p, ["decision"], {"status": "decided", "decision": "deny",
                                                                     "deciding_rules": ["deny_nonresident"],
                                                                     "by_default": False}), "decision"),
    "conflicting fact claimed known": ("conflict", lambda p: _set(p, ["facts", "band"], 1), "facts"),
    "missing candidate": ("agreeing_rules", lambda p: p["candidates"].pop(), "candidates"),
    "candidates out of priority order": ("agreeing_rules", lambda p: p["candidates"].reverse(), "candidates"),
    "blocked candidate left out": ("blocked", lambda p: p["candidates"].clear(), "candidates"),
    "candidates as a tuple": ("agreeing_rules", lambda p: _set(p, ["candidates"], tuple(p["candidates"])),
                              "candidates"),
    "failed constraint marked held": ("blocked", lambda p: _set(p, ["constraints", 0, "held"], True), "constraints"),
    "held 1 for True": ("permit", lambda p: _set(p, ["constraints", 0, "held"], 1), "constraints"),
    "constraint blocks changed": ("permit", lambda p: _set(p, ["constraints", 0, "blocks"], []), "constraints"),
    "constraint dropped": ("permit", lambda p: p["constraints"].pop(), "constraints"),
    "wrong default value": ("review", lambda p: _set(p, ["defaults", "is_adult"], True), "defaults"),
    "default for a derived fact": ("permit", lambda p: _set(p, ["defaults", "is_adult"], False), "defaults"),
    "default left out": ("review", lambda p: p["defaults"].pop("low_income"), "defaults"),
    "fact left out": ("permit", lambda p: p["facts"].pop("monthly"), "facts"),
    "extra fact": ("permit", lambda p: _set(p, ["facts", "band"], 1), "facts"),
    "fact value changed": ("permit", lambda p: _set(p, ["facts", "age"], 35), "facts"),
    "fact 500 for 500.0": ("permit", lambda p: _set(p, ["facts", "monthly"], 500), "facts"),
    "wrong hash": ("permit", lambda p: _set(p, ["rulebook", "hash"], "0" * 64), "rulebook"),
    "wrong rulebook name": ("permit", lambda p: _set(p, ["rulebook", "name"], "other"), "rulebook"),
    "unknown input fact": ("permit", lambda p: _set(p, ["inputs", "nickname"], "al"), "nickname"),
    "derived fact given as input": ("permit", lambda p: _set(p, ["inputs", "is_adult"], True), "is_adult"),
    "required input missing": ("permit", lambda p: p["inputs"].pop("resident"), "resident"),
    "input out of range": ("permit", lambda p: _set(p, ["inputs", "age"], 131), "age"),
    "input of the wrong type": ("permit", lambda p: _set(p, ["inputs", "age"], "34"), "age"),
    "boolean input for an integer": ("permit", lambda p: _set(p, ["inputs", "age"], True), "age"),
    "float input for an integer": ("permit", lambda p: _set(p, ["inputs", "age"], 34.0), "age"),
    "enum input outside its values": ("review", lambda p: _set(p, ["inputs", "status"], "student"), "status"),
    "NaN input": ("permit", lambda p: _set(p, ["inputs", "income"], math.nan), "income"),
    "infinite input": ("permit", lambda p: _set(p, ["inputs", "income"], math.inf), "income"),
    "input changed without re-deriving": ("permit", lambda p: _set(p, ["inputs", "age"], 35), "facts"),
    "NaN fact": ("permit", lambda p: _set(p, ["facts", "monthly"], math.nan), "facts"),
    "NaN premise": ("permit", lambda p: _set(p, ["firings", 2, "premises", "monthly"], math.nan), "firing"),
    "None for the firings": ("permit", lambda p: _set(p, ["firings"], None), "firings"),
    "string for a firing": ("permit", lambda p: _set(p, ["firings", 0], "adult"), "firing"),
    "string for the premises": ("permit", lambda p: _set(p, ["firings", 0, "premises"], "age"), "firing"),
    "string for the inputs": ("permit", lambda p: _set(p, ["inputs"], "age=34"), "inputs"),
    "None for the decision": ("permit", lambda p: _set(p, ["decision"], None), "decision"),
    "list for the facts": ("permit", lambda p: _set(p, ["facts"], list(p["facts"].items())), "facts"),
    "string for a constraint": ("permit", lambda p: _set(p, ["constraints", 0], "adult_required"), "constraints"),
    "extra top-level key": ("permit", lambda p: _set(p, ["verdict"], "permit"), "keys"),
    "missing top-level key": ("permit", lambda p: p.pop("defaults"), "keys"),
}


@pytest.mark.parametrize("name", TAMPERING)
def test_tampering_is_rejected(name):
    case, tamper, mentioned = TAMPERING[name]
    rulebook, proof = grant_proof(case)
    tamper(proof)
    problems = check_proof(rulebook, proof)
    assert problems, f"{name}: accepted"
    assert all(type(problem) is str for problem in problems)
    assert mentioned in " ".join(problems), problems


def test_a_proof_for_the_other_posture_is_rejected():
    rulebook, _ = grant_proof("blocked_abstain")
    _, proof = grant_proof("blocked")
    assert check_proof(rulebook, proof)


@settings(max_examples=1000, deadline=None)
@given(data=st.data(), case=st.sampled_from(GRANT_PROOFS))
def test_random_tampering_is_rejected(data, case):
    rulebook, proof = grant_proof(case)
    changed = data.draw(tampered(proof))
    problems = check_proof(rulebook, changed)
    assert type(problems) is list and all(type(problem) is str for problem in problems)
    if not same(changed, proof):
        assert problems


def test_strata_are_recomputed_not_taken_from_the_rulebook():
    """A loader that put 'low' (which reads the stratum-1 fact 'monthly') in stratum 1 cannot make the checker
    accept a proof that says so: the checker stratifies the rules itself."""
    rulebook, proof = grant_proof("permit")
    misplaced = dataclasses.replace(rulebook, derive_rules=tuple(
        dataclasses.replace(rule, stratum=1) for rule in rulebook.derive_rules))
    assert check_proof(misplaced, proof) == []
    proof["firings"][2]["stratum"] = 1
    assert check_proof(misplaced, proof)
