"""The proof checker: the trusted base of the embedded rule kernel.

``check_proof`` re-derives a decision from the canonical rulebook AST and the proof's inputs with its own small
three-valued interpreter (the semantics of docs/rulebooks.md), then compares every part of the proof with that
derivation. It shares no code with the engine, only the AST, so a bug in the engine's generated code cannot
certify itself. It never raises: a malformed proof is a problem like any other, and only an empty list of problems
means the proof is accepted.
"""

from __future__ import annotations

import operator
import reprlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

from ._ast import All, AnyOf, Arith, Compare, Const, FactRef, FactSpec, Member, Not, Rulebook

__all__ = ["check_proof", "derive_decision"]

_PROOF_KEYS = ("rulebook", "inputs", "firings", "defaults", "facts", "constraints", "candidates", "decision")
_PROOF_KEY_SET = frozenset(_PROOF_KEYS)

# Values compare by kind: a number never equals a boolean or a string, but 1 == 1.0.
_KIND = {bool: "boolean", int: "number", float: "number", str: "string"}
_NUMBERS = frozenset({int, float})  # for ordering and arithmetic; a boolean is not a number
_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_ARITH = {"add": operator.add, "sub": operator.sub, "mul": operator.mul}
_FLOAT_MAX = sys.float_info.max  # numbers beyond the float range are unknown (arithmetic) or invalid (inputs)
_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 40
_short = _REPR.repr  # bounded: a proof may hold anything


def _is_mapping(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)  # the ABC check only off the usual path


def _same(a: Any, b: Any) -> bool:
    # Mostly both have one type: then a single identity test settles the kind.
    kind = type(a)
    return a == b and (kind is type(b) and kind in _KIND or _KIND.get(kind, 0) == _KIND.get(type(b)))


# ---- the interpreter: None means unknown ----

def _value(expr: Any, env: dict[str, Any]) -> Any:
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
    if type(left) not in _NUMBERS or type(right) not in _NUMBERS or (expr.op == "div" and right == 0):
        return None
    try:
        result = left / right if expr.op == "div" else _ARITH[expr.op](left, right)
    except OverflowError:  # an int too large for a float
        return None
    return result if -_FLOAT_MAX <= result <= _FLOAT_MAX else None  # an overflow is unknown too


def _holds(cond: Any, env: dict[str, Any]) -> bool | None:
    """True, False or None (unknown). ``cond`` is a condition of the AST as ``_planned`` leaves it: its usual
    comparisons {fact: F, op: OP, value: V} as (fact, op, literal) tuples."""
    kind = type(cond)
    if kind is tuple:
        name, op, right = cond
        left = env.get(name)
    elif kind is Compare:
        op, left, right = cond.op, _value(cond.left, env), _value(cond.right, env)
    elif kind is All or kind is AnyOf:
        decisive = kind is AnyOf  # the item value that settles the combination: True for any, False for all
        result: bool | None = not decisive
        for item in cond.items:
            outcome = _holds(item, env)
            if outcome is decisive:
                return decisive
            if outcome is None:
                result = None
        return result
    elif kind is Not:
        inner = _holds(cond.item, env)
        return None if inner is None else not inner
    elif kind is Member:
        left = _value(cond.left, env)
        if left is None:
            return None
        for value in cond.values:
            if _same(left, value):
                return not cond.negated
        negated: bool = cond.negated
        return negated
    else:
        raise TypeError(f"not a condition: {kind.__name__}")
    # a comparison of two values
    if left is None or right is None:
        return None
    if op == "==":
        return _same(left, right)
    if op == "!=":
        return not _same(left, right)
    if type(left) not in _NUMBERS or type(right) not in _NUMBERS:
        return None  # ordering is defined on numbers only (the loader rejects anything else)
    return _ORDER[op](left, right)


def _planned(cond: Any) -> Any:
    """``cond`` with each comparison of a fact with a literal as a (fact, op, literal) tuple, which ``_holds``
    unpacks faster than it reads the node's attributes; the meaning is unchanged."""
    kind = type(cond)
    if kind is tuple:  # only this function makes the tuples _holds reads: none may come from the rulebook
        raise TypeError("not a condition: tuple")
    if kind is Compare and type(cond.left) is FactRef and type(cond.right) is Const:
        return (cond.left.name, cond.op, cond.right.value)
    if kind is All or kind is AnyOf:
        return kind(tuple(map(_planned, cond.items)))
    if kind is Not:
        return Not(_planned(cond.item))
    return cond


def _references(node: Any, into: dict[str, None]) -> dict[str, None]:
    """The names of the facts an expression or condition reads, in order of first appearance (as keys)."""
    kind = type(node)
    if kind is FactRef:
        into.setdefault(node.name)
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


# ---- what the check needs about one rulebook, flattened once ----

class _Plan:
    """The rulebook as flat tuples for the derivation: input specs; per stratum (recomputed here, not taken from
    the loader) the derive rules as (name, target, when, value, facts read) and the defaults; constraints as
    (name, require, blocks); decision rules as (name, decision, when), highest priority first."""

    __slots__ = ("rulebook", "header", "inputs", "strata", "derive_names", "constraints", "decision_rules",
                 "fallback")

    def __init__(self, rb: Rulebook) -> None:
        self.rulebook = rb
        self.header = {"name": rb.name, "hash": rb.content_hash}  # what the proof's "rulebook" must equal
        self.inputs = {spec.name: spec for spec in rb.facts}
        derived = {spec.name: spec for spec in rb.derived}
        refs = {rule.name: tuple(_references(rule.value, _references(rule.when, {}))) for rule in rb.derive_rules}
        rules_for: dict[str, list[Any]] = {}
        for rule in rb.derive_rules:
            if rule.target not in derived:
                raise ValueError(f"rule {rule.name} derives the undeclared fact {rule.target}")
            rules_for.setdefault(rule.target, []).append(rule)
        level: dict[str, int] = {}

        def stratum(fact: str, path: tuple[str, ...]) -> int:
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
            (s, tuple((rule.name, rule.target, _planned(rule.when), rule.value, refs[rule.name])
                      for rule in ordered if level[rule.target] == s),
             tuple((spec.name, spec.default) for spec in rb.derived if spec.has_default and level[spec.name] == s))
            for s in range(1, top + 1))
        self.derive_names = frozenset(refs)
        self.constraints = tuple((c.name, _planned(c.require), tuple(c.blocks)) for c in rb.constraints)
        self.decision_rules = tuple((rule.name, rule.decision, _planned(rule.when))
                                    for rule in sorted(rb.decision_rules, key=lambda rule: -rule.priority))
        # the deny posture's fail-closed fallback decision (constraints do not block it); abstain has none
        self.fallback = (rb.default_decision,) if rb.posture == "deny" else None


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

def _derive(plan: _Plan, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The proof (less ``rulebook`` and ``inputs``) that the rulebook gives for these inputs."""
    env = dict(inputs)
    firings, defaults, conflicted = [], {}, set()
    for s, rules, defaultable in plan.strata:
        concluded: dict[str, Any] = {}
        for name, target, when, expr, reads in rules:
            if _holds(when, env) is not True:
                continue
            value = expr.value if type(expr) is Const else _value(expr, env)  # a constant, usually
            if value is None:
                continue  # an unknown value derives nothing: the fact stays unknown
            premises = {}  # the facts it read that are known (a loop: cheaper than a comprehension here)
            for fact in reads:
                if fact in env:
                    premises[fact] = env[fact]
            firings.append({"rule": name, "stratum": s, "premises": premises,
                            "conclusion": {"fact": target, "value": value}})
            if target not in concluded:
                concluded[target] = value
            elif not _same(concluded[target], value):
                conflicted.add(target)
        # Facts of this stratum become known only now: no rule of a stratum reads a fact of its own stratum.
        for fact, value in concluded.items():
            if fact not in conflicted:
                env[fact] = value
        for fact, default in defaultable:
            if fact not in concluded:
                env[fact] = defaults[fact] = default
    blocked: set[str]
    constraints, failed, blocked = [], [], set()
    for name, require, blocks in plan.constraints:
        held = _holds(require, env) is True
        constraints.append({"rule": name, "held": held, "blocks": list(blocks)})
        if not held:
            failed.append((name, blocks))
            blocked.update(blocks)
    candidates = []
    for name, decided, when in plan.decision_rules:
        if _holds(when, env) is True:
            candidates.append((name, decided))
    decision: dict[str, Any] = {"status": "indeterminate", "decision": None, "deciding_rules": [], "by_default": False}
    if not conflicted:  # a conflict leaves the decision indeterminate whatever the posture
        for name, wanted in candidates:  # the highest-priority candidate that no failed constraint blocks decides
            if wanted not in blocked:
                decision = {"status": "decided", "decision": wanted, "deciding_rules": [name], "by_default": False}
                break
        else:
            if plan.fallback is not None:  # the deny posture: it names the failed constraints that blocked a candidate
                candidate_decisions = {decision for _, decision in candidates}
                blockers = [name for name, blocks in failed if not candidate_decisions.isdisjoint(blocks)]
                decision = {"status": "decided", "decision": plan.fallback[0], "deciding_rules": blockers,
                            "by_default": True}
    return {"firings": firings, "defaults": defaults, "facts": env, "constraints": constraints,
            "candidates": [name for name, _ in candidates], "decision": decision}


def derive_decision(rulebook: Rulebook, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The checker's own {status, decision, deciding_rules, by_default} for gated inputs (plain values)."""
    decision: dict[str, Any] = _derive(_plan(rulebook), inputs)["decision"]
    return decision


# ---- the check ----
# A part of the proof is accepted when it is exactly the derived part: equal by builtin == (mappings compare
# regardless of key order, a list never equals a tuple) and, since == also holds for True == 1 == 1.0, with the
# derived types for its numbers and booleans. Strings and None equal nothing else, so they need no type check.

def _typed_values(given: Any, expected: dict[str, Any]) -> bool:
    """Whether a mapping that == ``expected`` (fact names to values) has the types of its values."""
    for name, value in expected.items():
        item = given[name]
        if item is not value and type(item) is not type(value):  # mostly the same object: one identity test
            return False
    return True


def _typed_firings(given: Any, expected: list[Any]) -> bool:
    """Whether a list of firings that == ``expected`` has its types (one loop: this is the hot part)."""
    if type(given) is not list:
        return False
    for firing, want in zip(given, expected):
        if (type(firing["stratum"]) is not int
                or type(firing["conclusion"]["value"]) is not type(want["conclusion"]["value"])):
            return False
        premises = firing["premises"]
        for name, value in want["premises"].items():
            item = premises[name]
            if item is not value and type(item) is not type(value):
                return False
    return True


def _typed_constraints(given: Any, expected: list[Any]) -> bool:
    for constraint in given:
        if type(constraint["held"]) is not bool:
            return False
    return True


# Whether a part that == the derived part has its types.
_TYPED = {
    "firings": _typed_firings,
    "defaults": _typed_values,
    "facts": _typed_values,
    "constraints": _typed_constraints,
    "candidates": None,  # names: strings equal nothing else
    "decision": lambda given, expected: type(given["by_default"]) is bool,
}


def _fits(spec: FactSpec, value: Any) -> bool:
    """Whether a gated input value has the declared type and lies in range (the gate already checked; cheap)."""
    kind, declared = type(value), spec.type
    if declared == "integer" or declared == "number":
        return ((kind is int or kind is float and declared == "number")
                and -_FLOAT_MAX <= value <= _FLOAT_MAX  # NaN fails this too
                and (spec.minimum is None or value >= spec.minimum) and (spec.maximum is None or value <= spec.maximum))
    if declared == "boolean":
        return kind is bool
    if declared == "enum":
        return kind is str and value in spec.values
    if declared == "string":
        return kind is str and (spec.max_length is None or len(value) <= spec.max_length)
    return False


def _input_problems(plan: _Plan, inputs: Any) -> list[str]:
    if not _is_mapping(inputs):
        return ["inputs is not a mapping"]
    problems = []
    if not inputs.keys() <= plan.inputs.keys():  # one set comparison in the usual case
        problems = [f"input {_short(name)} is not an input fact of the rulebook"
                    for name in inputs if name not in plan.inputs]
    for name, spec in plan.inputs.items():
        if name not in inputs:
            if spec.required:
                problems.append(f"required input {name} is missing")
        elif not _fits(spec, inputs[name]):
            problems.append(f"input {name} = {_short(inputs[name])} is not a valid {spec.type}")
    return problems


def _firing_problems(plan: _Plan, given: Any, expected: list[Any]) -> list[str]:
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
            for i, (firing, want) in enumerate(zip(given, expected))
            if not (firing == want and _typed_firings([firing], [want]))]


def _check(rb: Rulebook, proof: Any) -> list[str]:
    if not _is_mapping(proof):
        return ["the proof is not a mapping"]
    if proof.keys() != _PROOF_KEY_SET:
        return [f"the proof's keys must be exactly {list(_PROOF_KEYS)}"]
    plan = _plan(rb)
    problems = [] if proof["rulebook"] == plan.header else ["the proof is for another rulebook (name or hash differs)"]
    input_problems = _input_problems(plan, proof["inputs"])
    if input_problems:
        return problems + input_problems  # nothing can be re-derived from invalid inputs
    for key, expected in _derive(plan, proof["inputs"]).items():  # firings, defaults, ... decision
        given = proof[key]
        typed = _TYPED[key]
        if not (given == expected and (typed is None or typed(given, expected))):
            problems += (_firing_problems(plan, given, expected) if key == "firings"
                         else [f"{key} should be {_short(expected)}"])
    return problems


def check_proof(rulebook: Rulebook, proof: Mapping[str, Any]) -> list[str]:
    """The problems with ``proof`` as a proof of its decision under ``rulebook``; empty means accepted."""
    try:
        return _check(rulebook, proof)
    except Exception as exc:  # the trusted base never raises: whatever breaks the check rejects the proof
        detail = exc.args[0] if exc.args and type(exc.args[0]) is str else ""
        return [f"the check could not complete: {type(exc).__name__} {detail}".rstrip()]
