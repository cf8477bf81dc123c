"""The engine compiles a rulebook into generated Python: names and literals never become code, and neither deep
conditions nor many rules make code Python cannot compile. Each case is cross-checked by the proof checker."""

import ast

from checker._support import build_rulebook

from proofgym.rules import compile_rulebook
from proofgym.rules._ast import (
    All,
    AnyOf,
    Arith,
    Compare,
    Const,
    ConstraintRule,
    DecisionRule,
    DerivedSpec,
    DeriveRule,
    FactRef,
    FactSpec,
    Member,
    Not,
)
from proofgym.rules._checker import check_proof, derive_decision

# Strings that would break or inject code if pasted into the source unquoted.
HOSTILE = ['x"); import os; os.system("echo pwned', "a'b", 'tri"""ple', "back\\slash", "new\nline # comment",
           "{braces} %s %(x)s", "\x00nul", "ünï"]


def _agree(rulebook, inputs):
    proof = compile_rulebook(rulebook).evaluate(inputs)
    assert check_proof(rulebook, proof) == [], proof
    assert proof["decision"] == derive_decision(rulebook, inputs)
    return proof


def test_names_and_string_literals_are_data_never_code():
    facts = [FactSpec(name, "string", required=False) for name in HOSTILE]
    derived = [DerivedSpec(f"d{i}" + name, "string") for i, name in enumerate(HOSTILE)]
    rules = [DeriveRule(f"rule {i} " + name, spec.name, Compare("==", FactRef(fact.name), Const(fact.name)),
                        Const(name), "", 0)
             for i, (name, fact, spec) in enumerate(zip(HOSTILE, facts, derived))]
    decisions = [DecisionRule("decide " + name, name, 100 - i, Compare("==", FactRef(spec.name), Const(name)), "")
                 for i, (name, spec) in enumerate(zip(HOSTILE, derived))]
    rulebook = build_rulebook("hostile", facts=facts, derived=derived, rules=rules, decision_rules=decisions,
                              constraints=[ConstraintRule("c " + HOSTILE[0],
                                                          Member(FactRef(HOSTILE[1]), tuple(HOSTILE)),
                                                          (HOSTILE[2],), "")],
                              decisions=HOSTILE, posture="deny", default_decision=HOSTILE[-1])
    tree = ast.parse(compile_rulebook(rulebook).source)
    assert not [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert "os" not in {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}  # "os" only in strings
    for i, name in enumerate(HOSTILE):
        proof = _agree(rulebook, {name: name, HOSTILE[1]: HOSTILE[1]})
        assert proof["facts"][derived[i].name] == name
        assert {firing["rule"] for firing in proof["firings"]} == {f"rule {i} {name}", f"rule 1 {HOSTILE[1]}"}
    assert _agree(rulebook, {HOSTILE[1]: HOSTILE[1]})["decision"]["decision"] == HOSTILE[1]


def test_deep_conditions_and_many_rules_compile_flat():
    facts = [FactSpec("n", "integer", minimum=0, maximum=1000), FactSpec("flag", "boolean")]
    deep = Compare(">=", FactRef("n"), Const(0))
    for depth in range(150):  # deeper than Python code can be indented (100 levels): only flat code compiles
        deep = [All((deep, Compare("==", FactRef("flag"), Const(True)))), Not(deep),
                AnyOf((deep, Compare("<", FactRef("n"), Const(-1))))][depth % 3]
    decisions = [DecisionRule(f"at_least_{k}", "high" if k % 2 else "low", k,
                              Compare(">=", Arith("add", FactRef("n"), Const(k)), Const(2 * k)), "")
                 for k in range(1, 600)]
    rulebook = build_rulebook("big", facts=facts, derived=[DerivedSpec("deep", "boolean")],
                              rules=[DeriveRule("deep_rule", "deep", deep, Const(True), "", 0)],
                              decision_rules=decisions, decisions=["high", "low"], posture="abstain")
    for n in (0, 1, 2, 299, 300, 598, 1000):
        for flag in (True, False):
            proof = _agree(rulebook, {"n": n, "flag": flag})
            assert len(proof["candidates"]) == min(n, 599)


def test_the_source_is_kept_for_inspection():
    rulebook = build_rulebook("tiny", facts=[FactSpec("b", "boolean")], decisions=["yes"], posture="abstain",
                              decision_rules=[DecisionRule("r", "yes", 1, Compare("==", FactRef("b"), Const(True)),
                                                           "")])
    engine = compile_rulebook(rulebook)
    assert engine.source.startswith("def run(accepted):")
    assert engine.evaluate({"b": True})["decision"]["decision"] == "yes"
    assert engine.evaluate({"b": False})["decision"]["status"] == "indeterminate"
