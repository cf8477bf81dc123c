"""Rulebooks built directly as canonical ASTs, and proofs for them written out by hand from docs/rulebooks.md.

The proofs here are worked by hand, not produced by the checker or the engine, so that accepting them tests the
checker against the documented semantics rather than against itself.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib

from proofgym.rules._ast import (
    ALWAYS, All, AnyOf, Arith, Compare, Const, ConstraintRule, DecisionRule, DerivedSpec, DeriveRule, FactRef,
    FactSpec, Member, Not, Rulebook,
)

__all__ = ["ALWAYS", "All", "AnyOf", "Arith", "Compare", "Const", "FactRef", "Member", "Not", "build_rulebook", "cmp",
           "derive", "grant_rulebook", "GRANT_PROOFS", "grant_proof"]


def cmp(fact: str, op: str, value) -> Compare:
    """``{fact: F, op: OP, value: V}``."""
    return Compare(op, FactRef(fact), Const(value))


def derive(name: str, target: str, when, value=Const(True)) -> DeriveRule:
    return DeriveRule(name, target, when, value, explain="", stratum=0)  # stratum filled in by build_rulebook


def _references(node) -> set[str]:
    if isinstance(node, FactRef):
        return {node.name}
    if isinstance(node, (Arith, Compare)):
        return _references(node.left) | _references(node.right)
    if isinstance(node, Member):
        return _references(node.left)
    if isinstance(node, Not):
        return _references(node.item)
    if isinstance(node, (All, AnyOf)):
        return set().union(*map(_references, node.items))
    return set()


def build_rulebook(name: str, *, facts, derived=(), rules=(), constraints=(), decision_rules=(), decisions,
                   posture="deny", default_decision=None) -> Rulebook:
    """A canonical Rulebook as the loader would give it: strata computed, rules sorted, content hashed.

    ``derived`` must list each derived fact after the derived facts its rules read (generators build them so).
    """
    stratum: dict[str, int] = {}
    for spec in derived:
        reads = {fact for rule in rules if rule.target == spec.name
                 for fact in _references(rule.when) | _references(rule.value)}
        stratum[spec.name] = 1 + max((stratum[f] for f in reads if f in stratum), default=0)
    derived = tuple(dataclasses.replace(spec, stratum=stratum[spec.name]) for spec in derived)
    rules = tuple(sorted((DeriveRule(r.name, r.target, r.when, r.value, r.explain, stratum[r.target]) for r in rules),
                         key=lambda r: r.stratum))
    fields = dict(name=name, version="1", description="", decisions=tuple(decisions), posture=posture,
                  default_decision=default_decision, min_confidence=0.0, facts=tuple(facts), derived=derived,
                  derive_rules=rules, constraints=tuple(constraints),
                  decision_rules=tuple(sorted(decision_rules, key=lambda r: -r.priority)))
    return Rulebook(**fields, content_hash=hashlib.sha256(repr(fields).encode()).hexdigest())


def grant_rulebook(posture: str = "deny") -> Rulebook:
    """A grant-eligibility-sized rulebook: 4 input facts, 6 derive rules over two strata (with a possible
    conflict), 2 constraints, 3 decision rules."""
    return build_rulebook(
        "grant",
        facts=[FactSpec("age", "integer", minimum=0, maximum=130), FactSpec("income", "number", minimum=0),
               FactSpec("resident", "boolean"),
               FactSpec("status", "enum", required=False, values=("employed", "unemployed", "retired"))],
        derived=[DerivedSpec("is_adult", "boolean", default=False, has_default=True),
                 DerivedSpec("monthly", "number"), DerivedSpec("band", "integer"),
                 DerivedSpec("low_income", "boolean", default=False, has_default=True)],
        rules=[derive("adult", "is_adult", cmp("age", ">=", 18)),
               derive("monthly_income", "monthly", cmp("income", ">", 0), Arith("div", FactRef("income"), Const(12))),
               derive("band_retired", "band", cmp("status", "==", "retired"), Const(1)),
               derive("band_senior", "band", cmp("age", ">=", 65), Const(1)),
               derive("band_unemployed", "band", Member(FactRef("status"), ("unemployed",)), Const(2)),
               derive("low", "low_income", cmp("monthly", "<", 1000))],
        constraints=[ConstraintRule("adult_required", cmp("is_adult", "==", True), ("permit",), ""),
                     ConstraintRule("income_recorded", cmp("income", ">=", 0), ("permit", "deny", "review"), "")],
        decision_rules=[DecisionRule("deny_nonresident", "deny", 10, cmp("resident", "==", False), ""),
                        DecisionRule("permit_low_income", "permit", 30,
                                     All((cmp("low_income", "==", True), cmp("resident", "==", True))), ""),
                        DecisionRule("review_band", "review", 20, cmp("band", ">=", 1), "")],
        decisions=["permit", "deny", "review"], posture=posture,
        default_decision="deny" if posture == "deny" else None)


_HELD = [{"rule": "adult_required", "held": True, "blocks": ["permit"]},
         {"rule": "income_recorded", "held": True, "blocks": ["permit", "deny", "review"]}]
_ADULT_FAILS = [{**_HELD[0], "held": False}, _HELD[1]]


def _firing(rule, stratum, premises, fact, value):
    return {"rule": rule, "stratum": stratum, "premises": premises, "conclusion": {"fact": fact, "value": value}}


# Each: (posture, inputs, firings, defaults, derived facts, constraints, candidates, decision), worked by hand.
_CASES = {
    # adult, low income: permit_low_income decides.
    "permit": ("deny", {"age": 34, "income": 6000, "resident": True},
               [_firing("adult", 1, {"age": 34}, "is_adult", True),
                _firing("monthly_income", 1, {"income": 6000}, "monthly", 500.0),
                _firing("low", 2, {"monthly": 500.0}, "low_income", True)],
               {}, {"is_adult": True, "monthly": 500.0, "low_income": True}, _HELD, ["permit_low_income"],
               {"status": "decided", "decision": "permit", "deciding_rules": ["permit_low_income"],
                "by_default": False}),
    # a minor who is unemployed: both defaults apply, review_band decides although adult_required fails.
    "review": ("deny", {"age": 16, "income": 24000, "resident": True, "status": "unemployed"},
               [_firing("monthly_income", 1, {"income": 24000}, "monthly", 2000.0),
                _firing("band_unemployed", 1, {"status": "unemployed"}, "band", 2)],
               {"is_adult": False, "low_income": False},
               {"monthly": 2000.0, "band": 2, "is_adult": False, "low_income": False}, _ADULT_FAILS, ["review_band"],
               {"status": "decided", "decision": "review", "deciding_rules": ["review_band"], "by_default": False}),
    # the only candidate is blocked: the deny posture decides and names the blocking constraint.
    "blocked": ("deny", {"age": 16, "income": 6000, "resident": True, "status": "employed"},
                [_firing("monthly_income", 1, {"income": 6000}, "monthly", 500.0),
                 _firing("low", 2, {"monthly": 500.0}, "low_income", True)],
                {"is_adult": False}, {"monthly": 500.0, "low_income": True, "is_adult": False}, _ADULT_FAILS,
                ["permit_low_income"],
                {"status": "decided", "decision": "deny", "deciding_rules": ["adult_required"], "by_default": True}),
    # the same under the abstain posture: indeterminate.
    "blocked_abstain": ("abstain", {"age": 16, "income": 6000, "resident": True, "status": "employed"},
                        [_firing("monthly_income", 1, {"income": 6000}, "monthly", 500.0),
                         _firing("low", 2, {"monthly": 500.0}, "low_income", True)],
                        {"is_adult": False}, {"monthly": 500.0, "low_income": True, "is_adult": False}, _ADULT_FAILS,
                        ["permit_low_income"],
                        {"status": "indeterminate", "decision": None, "deciding_rules": [], "by_default": False}),
    # no candidate at all: the deny posture decides with no blocking constraint.
    "no_candidate": ("deny", {"age": 30, "income": 120000, "resident": True},
                     [_firing("adult", 1, {"age": 30}, "is_adult", True),
                      _firing("monthly_income", 1, {"income": 120000}, "monthly", 10000.0)],
                     {"low_income": False}, {"is_adult": True, "monthly": 10000.0, "low_income": False}, _HELD, [],
                     {"status": "decided", "decision": "deny", "deciding_rules": [], "by_default": True}),
    # band_senior and band_unemployed derive band = 1 and band = 2: a conflict, band stays unknown; monthly is
    # unknown (income is 0), so low reads nothing and low_income takes its default.
    "conflict": ("deny", {"age": 70, "income": 0, "resident": False, "status": "unemployed"},
                 [_firing("adult", 1, {"age": 70}, "is_adult", True),
                  _firing("band_senior", 1, {"age": 70}, "band", 1),
                  _firing("band_unemployed", 1, {"status": "unemployed"}, "band", 2)],
                 {"low_income": False}, {"is_adult": True, "low_income": False}, _HELD, ["deny_nonresident"],
                 {"status": "indeterminate", "decision": None, "deciding_rules": [], "by_default": False}),
    # two rules derive band = 1: no conflict; review_band (20) outranks deny_nonresident (10).
    "agreeing_rules": ("deny", {"age": 80, "income": 36000, "resident": False, "status": "retired"},
                       [_firing("adult", 1, {"age": 80}, "is_adult", True),
                        _firing("monthly_income", 1, {"income": 36000}, "monthly", 3000.0),
                        _firing("band_retired", 1, {"status": "retired"}, "band", 1),
                        _firing("band_senior", 1, {"age": 80}, "band", 1)],
                       {"low_income": False}, {"is_adult": True, "monthly": 3000.0, "band": 1, "low_income": False},
                       _HELD, ["review_band", "deny_nonresident"],
                       {"status": "decided", "decision": "review", "deciding_rules": ["review_band"],
                        "by_default": False}),
}
GRANT_PROOFS = tuple(_CASES)


def grant_proof(case: str) -> tuple[Rulebook, dict]:
    """The grant rulebook for a hand-worked case and a fresh copy of its proof."""
    posture, inputs, firings, defaults, derived, constraints, candidates, decision = _CASES[case]
    rb = grant_rulebook(posture)
    proof = {"rulebook": {"name": rb.name, "hash": rb.content_hash}, "inputs": inputs, "firings": firings,
             "defaults": defaults, "facts": {**inputs, **derived}, "constraints": constraints,
             "candidates": candidates, "decision": decision}
    return rb, copy.deepcopy(proof)
