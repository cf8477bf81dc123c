"""Differential: on random valid rulebooks and gated fact sets, the compiled engine's proof is accepted by the
independent checker, and the engine decides exactly as the checker's own derivation does."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proofgym.rules._ast import ALWAYS, All, AnyOf, Const, FactRef, Member, Not
from proofgym.rules._checker import check_proof, derive_decision

from ._strategies import rulebooks_with_inputs, same, tampered

try:
    from proofgym.rules._engine import compile_rulebook
except ModuleNotFoundError as exc:  # written in parallel; only its absence skips, never a broken import
    if exc.name != "proofgym.rules._engine":
        raise
    compile_rulebook = None

needs_engine = pytest.mark.skipif(compile_rulebook is None,
                                  reason="the engine (proofgym.rules._engine) is not there yet")


def _agree(case) -> None:
    rulebook, fact_sets = case
    engine = compile_rulebook(rulebook)
    for inputs in fact_sets:
        proof = engine.evaluate(inputs)
        assert check_proof(rulebook, proof) == [], (rulebook, inputs, proof)
        assert proof["decision"] == derive_decision(rulebook, inputs), (rulebook, inputs, proof)


# 1,000 random rulebooks by default (about 5 s alone on 2 cores; 4,000 cost a minute of a loaded suite run), the
# deep search (50,000) below under -m slow: the same property, the same generator.
@needs_engine
@settings(max_examples=1000, deadline=None)
@given(case=rulebooks_with_inputs())
def test_engine_proofs_are_accepted_and_decide_like_the_checker(case):
    _agree(case)


@pytest.mark.slow
@needs_engine
@settings(max_examples=50_000, deadline=None)
@given(case=rulebooks_with_inputs())
def test_engine_and_checker_agree_on_tens_of_thousands_of_rulebooks(case):
    _agree(case)


@needs_engine
@settings(max_examples=1000, deadline=None)
@given(case=rulebooks_with_inputs(max_fact_sets=1), data=st.data())
def test_tampered_engine_proofs_are_rejected(case, data):
    rulebook, (inputs,) = case
    proof = compile_rulebook(rulebook).evaluate(inputs)
    changed = data.draw(tampered(proof))
    if not same(changed, proof):
        assert check_proof(rulebook, changed)


@settings(max_examples=500, deadline=None)
@given(case=rulebooks_with_inputs())
def test_the_checker_decides_every_generated_rulebook(case):
    """Without the engine too: the generator's rulebooks are ones the checker can derive, with a coherent result."""
    rulebook, fact_sets = case
    for inputs in fact_sets:
        decision = derive_decision(rulebook, inputs)
        if decision["status"] == "decided":
            assert decision["decision"] in rulebook.decisions
        else:
            assert decision == {"status": "indeterminate", "decision": None, "deciding_rules": [],
                                "by_default": False}


# ---- optional: the generated rulebooks are ones the loader gives back unchanged ----

try:
    from proofgym.rules._loader import parse_rulebook
except ModuleNotFoundError as exc:
    if exc.name != "proofgym.rules._loader":
        raise
    parse_rulebook = None


def _operand(expr):
    if isinstance(expr, FactRef):
        return {"fact": expr.name}
    if isinstance(expr, Const):
        return {"value": expr.value}
    return {expr.op: [_operand(expr.left), _operand(expr.right)]}


def _condition(cond):
    if isinstance(cond, (All, AnyOf)):
        return {"all" if isinstance(cond, All) else "any": [_condition(item) for item in cond.items]}
    if isinstance(cond, Not):
        return {"not": _condition(cond.item)}
    if isinstance(cond, Member):
        return {"left": _operand(cond.left), "op": "not_in" if cond.negated else "in", "right": list(cond.values)}
    return {"left": _operand(cond.left), "op": cond.op, "right": _operand(cond.right)}


def _when(cond) -> dict:
    return {} if cond == ALWAYS else {"when": _condition(cond)}


def _yaml_shaped(rb) -> dict:
    """The rulebook as its YAML would parse: what parse_rulebook takes."""
    def present(**entries):
        return {key: value for key, value in entries.items() if value not in (None, ())}

    return present(
        name=rb.name, decisions=list(rb.decisions), posture=rb.posture, default_decision=rb.default_decision,
        facts={f.name: present(type=f.type, required=f.required, min=f.minimum, max=f.maximum,
                               values=list(f.values) or None, max_length=f.max_length) for f in rb.facts},
        derived={d.name: {"type": d.type, **({"default": d.default} if d.has_default else {}),
                          **({"values": list(d.values)} if d.values else {})} for d in rb.derived},
        rules=[{"name": r.name, "derive": r.target, **_when(r.when), "value": _operand(r.value)}
               for r in rb.derive_rules],
        constraints=[{"name": c.name, "require": _condition(c.require), "blocks": list(c.blocks)}
                     for c in rb.constraints],
        decision_rules=[{"name": r.name, "decide": r.decision, "priority": r.priority, **_when(r.when)}
                        for r in rb.decision_rules])


_SAME_FIELDS = ("decisions", "posture", "default_decision", "facts", "derived", "derive_rules", "constraints",
                "decision_rules")


@pytest.mark.skipif(parse_rulebook is None, reason="the loader (proofgym.rules._loader) is not there yet")
@needs_engine
@settings(max_examples=300, deadline=None)
@given(case=rulebooks_with_inputs())
def test_generated_rulebooks_load_unchanged_and_still_agree(case):
    rulebook, fact_sets = case
    loaded = parse_rulebook(_yaml_shaped(rulebook))
    for field in _SAME_FIELDS:  # strata included: the loader stratifies as build_rulebook does
        assert getattr(loaded, field) == getattr(rulebook, field), field
    _agree((loaded, fact_sets))
