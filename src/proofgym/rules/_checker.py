"""The proof checker: the trusted base of the embedded rule kernel.

``check_proof`` re-derives a decision from the canonical rulebook AST and the proof's inputs with its own small
three-valued interpreter (the semantics of docs/rulebooks.md), then compares every part of the proof with that
derivation. It shares no code with the engine, only the AST, so a bug in the engine's compiled closures cannot
certify itself. It never raises: a malformed proof is a problem like any other, and only an empty list of problems
means the proof is accepted.
"""

from __future__ import annotations

import operator
import reprlib
import sys
from collections.abc import Mapping
from typing import Any

from ._ast import All, AnyOf, Arith, Compare, Const, FactRef, FactSpec, Member, Not, Rulebook

__all__ = ["check_proof", "derive_decision"]

_PROOF_KEYS = ("rulebook", "inputs", "firings", "defaults", "facts", "constraints", "candidates", "decision")
_PROOF_KEY_SET = frozenset(_PROOF_KEYS)

# Values compare by kind: a number never equals a boolean or a string, but 1 == 1.0.
_KIND = {bool: "boolean", int: "number", float: "number", str: "string"}
_ORDER = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_ARITH = {"add": operator.add, "sub": operator.sub, "mul": operator.mul}
_FLOAT_MAX = sys.float_info.max  # numbers beyond the float range are unknown (arithmetic) or invalid (inputs)
_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 40
_short = _REPR.repr  # bounded: a proof may hold anything


def _same(a: Any, b: Any) -> bool:
    # Mostly both have one type: then a single identity test settles the kind.
    kind = type(a)
    return a == b and (kind is type(b) and kind in _KIND or _KIND.get(kind, 0) == _KIND.get(type(b)))


# ---- the interpreter: None means unknown ----

def _value(expr: Any, env: dict) -> Any:
    """An expression's value, or None when unknown (an absent fact, a non-number operand, division by zero, a
    result beyond the float range)."""
    kind = type(expr)
    if kind is Const:  # a derive rule's usual value
        return expr.value
    if kind is FactRef:
        return env.get(expr.name)
    if kind is not Arith:
        raise TypeError(f"not an expression: {kind.__name__}")
    left, right = _value(expr.left, env), _value(expr.right, env)
    if _KIND.get(type(left)) != "number" or _KIND.get(type(right)) != "number" or (expr.op == "div" and right == 0):
        return None
    try:
        result = left / right if expr.op == "div" else _ARITH[expr.op](left, right)
    except OverflowError:  # an int too large for a float
        return None
    return result if -_FLOAT_MAX <= result <= _FLOAT_MAX else None  # an overflow is unknown too


def _holds(cond: Any, env: dict) -> bool | None:
    """True, False or None (unknown)."""
    kind = type(cond)
    if kind is Compare:
        left, right = cond.left, cond.right  # the common shape {fact, op, value} without two calls
        left = env.get(left.name) if type(left) is FactRef else _value(left, env)
        right = right.value if type(right) is Const else _value(right, env)
        if left is None or right is None:
            return None
        op = cond.op
        if op == "==":
            return _same(left, right)
        if op == "!=":
            return not _same(left, right)
        if _KIND.get(type(left)) != "number" or _KIND.get(type(right)) != "number":
            return None  # ordering is defined on numbers only (the loader rejects anything else)
        return _ORDER[op](left, right)
    if kind is Member:
        left = _value(cond.left, env)
        if left is None:
            return None
        return any(_same(left, v) for v in cond.values) != cond.negated
    if kind is Not:
        inner = _holds(cond.item, env)
        return None if inner is None else not inner
    if kind is not All and kind is not AnyOf:
        raise TypeError(f"not a condition: {kind.__name__}")
    decisive = kind is AnyOf  # the item value that settles the combination: True for any, False for all
    result: bool | None = not decisive
    for item in cond.items:
        outcome = _holds(item, env)
        if outcome is decisive:
            return decisive
        if outcome is None:
            result = None
    return result


def _references(node: Any, into: set) -> set:
    """The names of the facts an expression or condition reads."""
    kind = type(node)
    if kind is FactRef:
        into.add(node.name)
    elif kind is Arith or kind is Compare:
        _references(node.left, into)
        _references(node.right, into)
    elif kind is Member:
        _references(node.left, into)
    elif kind is Not:
        _references(node.item, into)
    elif kind is All or kind is AnyOf:
        for item in node.items:
            _references(item, into)
    return into


# ---- what the check needs about one rulebook, computed once ----

class _Plan:
    """Input specs, strata (recomputed here, not taken from the loader) and each derive rule's referenced facts."""

    __slots__ = ("rulebook", "header", "inputs", "strata", "derive_names", "decision_rules")

    def __init__(self, rb: Rulebook) -> None:
        self.rulebook = rb
        self.header = {"name": rb.name, "hash": rb.content_hash}  # what the proof's "rulebook" must equal
        self.inputs = {spec.name: spec for spec in rb.facts}
        derived = {spec.name: spec for spec in rb.derived}
        refs = {rule.name: tuple(sorted(_references(rule.value, _references(rule.when, set()))))
                for rule in rb.derive_rules}
        rules_for: dict[str, list] = {}
        for rule in rb.derive_rules:
            if rule.target not in derived:
                raise ValueError(f"rule {rule.name} derives the undeclared fact {rule.target}")
            rules_for.setdefault(rule.target, []).append(rule)
        level: dict[str, int] = {}

        def stratum(fact: str, path: tuple) -> int:
            if fact not in derived:
                return 0
            if fact in path:
                raise ValueError(f"cycle among derive rules: {' -> '.join(path + (fact,))}")
            if fact not in level:
                level[fact] = 1 + max((stratum(read, path + (fact,)) for rule in rules_for.get(fact, ())
                                       for read in refs[rule.name]), default=0)
            return level[fact]

        top = max((stratum(name, ()) for name in derived), default=0)
        # A stable sort keeps file order within a stratum (the AST lists rules by stratum, then file order).
        ordered = sorted(rb.derive_rules, key=lambda rule: level[rule.target])
        self.strata = tuple(
            (s, tuple((rule, refs[rule.name]) for rule in ordered if level[rule.target] == s),
             tuple(spec for spec in rb.derived if spec.has_default and level[spec.name] == s))
            for s in range(1, top + 1))
        self.derive_names = frozenset(refs)
        self.decision_rules = tuple(sorted(rb.decision_rules, key=lambda rule: -rule.priority))


_PLANS: dict[str, _Plan] = {}


def _plan(rb: Rulebook) -> _Plan:
    plan = _PLANS.get(rb.content_hash)
    if plan is None or plan.rulebook is not rb:  # a plan serves one rulebook object: no deep comparison per call
        plan = _Plan(rb)
        if len(_PLANS) >= 64:
            _PLANS.clear()
        _PLANS[rb.content_hash] = plan
    return plan


# ---- the derivation ----

def _derive(plan: _Plan, inputs: Mapping) -> dict:
    """The proof (less ``rulebook`` and ``inputs``) that the rulebook gives for these inputs."""
    rb = plan.rulebook
    env = dict(inputs)
    firings, defaults, conflicted = [], {}, set()
    for s, rules, defaultable in plan.strata:
        concluded: dict[str, Any] = {}
        for rule, refs in rules:
            if _holds(rule.when, env) is not True:
                continue
            value = _value(rule.value, env)
            if value is None:
                continue  # an unknown value derives nothing: the fact stays unknown
            target = rule.target
            firings.append({"rule": rule.name, "stratum": s,
                            "premises": {fact: env[fact] for fact in refs if fact in env},
                            "conclusion": {"fact": target, "value": value}})
            if target in concluded:
                if not _same(concluded[target], value):
                    conflicted.add(target)
            else:
                concluded[target] = value
        # Facts of this stratum become known only now: no rule of a stratum reads a fact of its own stratum.
        for fact, value in concluded.items():
            if fact not in conflicted:
                env[fact] = value
        for spec in defaultable:
            if spec.name not in concluded:
                env[spec.name] = defaults[spec.name] = spec.default
    constraints, failed = [], []
    for c in rb.constraints:
        held = _holds(c.require, env) is True
        constraints.append({"rule": c.name, "held": held, "blocks": list(c.blocks)})
        if not held:
            failed.append(c)
    blocked = {d for c in failed for d in c.blocks}
    candidates = [rule for rule in plan.decision_rules if _holds(rule.when, env) is True]
    decision = {"status": "indeterminate", "decision": None, "deciding_rules": [], "by_default": False}
    if not conflicted:  # a conflict leaves the decision indeterminate whatever the posture
        for rule in candidates:  # the highest-priority candidate that no failed constraint blocks decides
            if rule.decision not in blocked:
                decision = {"status": "decided", "decision": rule.decision, "deciding_rules": [rule.name],
                            "by_default": False}
                break
        else:
            if rb.posture == "deny":  # the fail-closed fallback, which constraints do not block
                wanted = {rule.decision for rule in candidates}
                blockers = [c.name for c in failed if not wanted.isdisjoint(c.blocks)]
                decision = {"status": "decided", "decision": rb.default_decision, "deciding_rules": blockers,
                            "by_default": True}
    return {"firings": firings, "defaults": defaults, "facts": env,
            "constraints": constraints,
            "candidates": [rule.name for rule in candidates], "decision": decision}


def derive_decision(rulebook: Rulebook, inputs: Mapping) -> dict:
    """The checker's own {status, decision, deciding_rules, by_default} for gated inputs (plain values)."""
    return _derive(_plan(rulebook), inputs)["decision"]


# ---- the check ----
# A part of the proof is accepted when it == the derived part (builtin ==: mappings compare regardless of key order,
# a list never equals a tuple) and, since == also holds for True == 1 == 1.0, its non-string scalars have the
# derived types. Strings and None equal nothing else, so they need no type check.

def _same_values(given: Any, expected: dict) -> bool:
    """A mapping of fact names to values."""
    if given != expected:
        return False
    for name, value in expected.items():
        if type(given[name]) is not type(value):
            return False
    return True


def _same_firing(given: Any, expected: dict) -> bool:
    return (given == expected and type(given["stratum"]) is int
            and _same_values(given["premises"], expected["premises"])
            and type(given["conclusion"]["value"]) is type(expected["conclusion"]["value"]))


_SAME = {
    "firings": lambda given, expected: (type(given) is list and len(given) == len(expected)
                                        and all(map(_same_firing, given, expected))),
    "defaults": _same_values,
    "facts": _same_values,
    "constraints": lambda given, expected: given == expected and all(type(c["held"]) is bool for c in given),
    "candidates": operator.eq,
    "decision": lambda given, expected: given == expected and type(given["by_default"]) is bool,
}


def _fits(spec: FactSpec, value: Any) -> bool:
    """Whether a gated input value has the declared type and lies in range (the gate already checked; cheap)."""
    kind = type(value)
    if spec.type == "boolean":
        return kind is bool
    if spec.type == "enum":
        return kind is str and value in spec.values
    if spec.type == "string":
        return kind is str and (spec.max_length is None or len(value) <= spec.max_length)
    if spec.type not in ("integer", "number"):
        return False
    number = kind is int or (kind is float and spec.type == "number")
    return (number and -_FLOAT_MAX <= value <= _FLOAT_MAX  # NaN fails this too
            and (spec.minimum is None or value >= spec.minimum) and (spec.maximum is None or value <= spec.maximum))


def _input_problems(plan: _Plan, inputs: Any) -> list[str]:
    if not isinstance(inputs, Mapping):
        return ["inputs is not a mapping"]
    problems = []
    for name in inputs:
        if name not in plan.inputs:
            problems.append(f"input {_short(name)} is not an input fact of the rulebook")
    for name, spec in plan.inputs.items():
        if name not in inputs:
            if spec.required:
                problems.append(f"required input {name} is missing")
        elif not _fits(spec, inputs[name]):
            problems.append(f"input {name} = {_short(inputs[name])} is not a valid {spec.type}")
    return problems


def _firing_problems(plan: _Plan, given: Any, expected: list) -> list[str]:
    """Why the firings are not the derived ones (called only when they are not)."""
    if type(given) is not list:
        return ["firings is not a list"]
    names = [firing.get("rule") if isinstance(firing, Mapping) else None for firing in given]
    wanted = [firing["rule"] for firing in expected]
    if names != wanted:
        problems = [f"firing of {_short(name)}: "
                    + ("the rule does not fire" if isinstance(name, str) and name in plan.derive_names
                       else "not a derive rule of the rulebook")
                    for name in names if name not in wanted]
        problems += [f"firing of {name} is missing" for name in wanted if name not in names]
        return problems or [f"firings are not in evaluation order (stratum, then file order): expected {wanted}"]
    return [f"firing {i} ({want['rule']}) should be {_short(want)}"
            for i, (firing, want) in enumerate(zip(given, expected)) if not _same_firing(firing, want)]


def _check(rb: Rulebook, proof: Any) -> list[str]:
    if not isinstance(proof, Mapping):
        return ["the proof is not a mapping"]
    if proof.keys() != _PROOF_KEY_SET:
        return [f"the proof's keys must be exactly {list(_PROOF_KEYS)}"]
    problems = []
    plan = _plan(rb)
    if proof["rulebook"] != plan.header:
        problems.append("the proof is for another rulebook (name or hash differs)")
    input_problems = _input_problems(plan, proof["inputs"])
    if input_problems:
        return problems + input_problems  # nothing can be re-derived from invalid inputs
    expected = _derive(plan, proof["inputs"])
    if not _SAME["firings"](proof["firings"], expected["firings"]):
        problems += _firing_problems(plan, proof["firings"], expected["firings"])
    for key in _PROOF_KEYS[3:]:
        if not _SAME[key](proof[key], expected[key]):
            problems.append(f"{key} should be {_short(expected[key])}")
    return problems


def check_proof(rulebook: Rulebook, proof: Mapping) -> list[str]:
    """The problems with ``proof`` as a proof of its decision under ``rulebook``; empty means accepted."""
    try:
        return _check(rulebook, proof)
    except Exception as exc:  # the trusted base never raises: whatever breaks the check rejects the proof
        detail = exc.args[0] if exc.args and type(exc.args[0]) is str else ""
        return [f"the check could not complete: {type(exc).__name__} {detail}".rstrip()]
