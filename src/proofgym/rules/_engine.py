"""The rule engine: a rulebook compiled once into closures, evaluated per query into a proof.

Conditions are three-valued: a closure returns True, False or None (unknown). An expression returns its value or
None (unknown: an absent fact, a division by zero, an overflow). Gated facts are never None, so None is free to
mean unknown. Nothing here walks the AST per query, copies deeply or serialises.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Mapping

from proofgym.rules._ast import (
    All,
    AnyOf,
    Arith,
    Compare,
    Condition,
    Const,
    Expr,
    FactRef,
    Member,
    Not,
    Rulebook,
)
from proofgym.rules._loader import referenced_facts
from proofgym.rules._values import FLOAT_MAX

Facts = dict[str, Any]
Test = Callable[[Facts], "bool | None"]
Value = Callable[[Facts], Any]

_COMPARE = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_ARITH = {"add": operator.add, "sub": operator.sub, "mul": operator.mul}


def compile_rulebook(rulebook: Rulebook) -> CompiledRulebook:
    """Compile every condition and expression of a loaded rulebook into closures, once."""
    return CompiledRulebook(rulebook)


class CompiledRulebook:
    """A rulebook ready to evaluate. :meth:`evaluate` turns gated facts into the proof dict of
    docs/rulebooks.md; it never raises on facts the gate accepted."""

    def __init__(self, rulebook: Rulebook) -> None:
        self.rulebook = rulebook
        strata: dict[int, tuple[list[tuple[Any, ...]], list[tuple[str, Any]], list[str]]] = {}
        for spec in rulebook.derived:
            rules, defaults, names = strata.setdefault(spec.stratum, ([], [], []))
            names.append(spec.name)
            if spec.has_default:
                defaults.append((spec.name, spec.default))
        for rule in rulebook.derive_rules:
            premises = tuple(referenced_facts(rule.when, rule.value))
            compiled = (rule.name, rule.target, _condition(rule.when), _expression(rule.value), premises, rule.stratum)
            strata[rule.stratum][0].append(compiled)
        # (derive rules, (fact, default) pairs, derived facts) per stratum, lowest first
        self._strata = tuple(strata[level] for level in sorted(strata))
        self._constraints = tuple(
            (rule.name, _condition(rule.require), rule.blocks, frozenset(rule.blocks)) for rule in rulebook.constraints
        )
        self._decision_rules = tuple(
            (rule.name, rule.decision, _condition(rule.when)) for rule in rulebook.decision_rules
        )
        self._default = rulebook.default_decision if rulebook.posture == "deny" else None

    def evaluate(self, accepted: Mapping[str, Any]) -> dict[str, Any]:
        """The proof of the decision these (gated) facts lead to, as JSON-native data."""
        return self.run(accepted)[0]

    def run(self, accepted: Mapping[str, Any]) -> tuple[dict[str, Any], list[bool]]:
        """The proof, and whether each rule fired (derive rules in evaluation order, then constraints, then
        decision rules by priority): what the report's trace needs, without re-reading the proof."""
        facts: Facts = dict(accepted)
        fired: list[bool] = []
        mark = fired.append
        firings: list[dict[str, Any]] = []
        defaults: dict[str, Any] = {}
        conflicts: set[str] = set()
        for rules, stratum_defaults, derived in self._strata:
            # A derived fact is only ever set in its own stratum, and no rule of a stratum reads a fact of that
            # stratum: so setting it at once is safe, and "in facts" means "derived by a rule of this stratum".
            for name, target, when, value, premises, stratum in rules:
                result = value(facts) if when(facts) is True else None
                if result is None:
                    mark(False)
                    continue
                mark(True)
                firings.append({
                    "rule": name,
                    "stratum": stratum,
                    "premises": {fact: facts[fact] for fact in premises if fact in facts},
                    "conclusion": {"fact": target, "value": result},
                })
                if target not in facts:
                    facts[target] = result
                elif facts[target] != result:
                    conflicts.add(target)
            for name, default in stratum_defaults:
                if name not in facts:
                    facts[name] = defaults[name] = default
            if conflicts:
                for name in derived:
                    if name in conflicts:
                        del facts[name]

        constraints: list[dict[str, Any]] = []
        failed: list[tuple[str, frozenset[str]]] = []
        blocked: set[str] = set()
        for name, require, blocks, block_set in self._constraints:
            held = require(facts) is True
            mark(held)
            constraints.append({"rule": name, "held": held, "blocks": list(blocks)})
            if not held:
                failed.append((name, block_set))
                blocked |= block_set

        candidates: list[str] = []
        candidate_decisions: set[str] = set()
        decider: tuple[str, str] | None = None
        for name, decision, when in self._decision_rules:
            ok = when(facts) is True
            mark(ok)
            if ok:
                candidates.append(name)
                candidate_decisions.add(decision)
                if decider is None and decision not in blocked:
                    decider = (name, decision)

        if conflicts:
            outcome = {"status": "indeterminate", "decision": None, "deciding_rules": [], "by_default": False}
        elif decider is not None:
            outcome = {"status": "decided", "decision": decider[1], "deciding_rules": [decider[0]], "by_default": False}
        elif self._default is not None:
            blockers = [name for name, block_set in failed if not block_set.isdisjoint(candidate_decisions)]
            outcome = {"status": "decided", "decision": self._default, "deciding_rules": blockers, "by_default": True}
        else:
            outcome = {"status": "indeterminate", "decision": None, "deciding_rules": [], "by_default": False}
        proof = {
            "rulebook": {"name": self.rulebook.name, "hash": self.rulebook.content_hash},
            "inputs": dict(accepted),
            "firings": firings,
            "defaults": defaults,
            "facts": facts,
            "constraints": constraints,
            "candidates": candidates,
            "decision": outcome,
        }
        return proof, fired


# ---- compiling conditions and expressions into closures ----

def _always(facts: Facts) -> bool:
    return True


def _condition(cond: Condition) -> Test:
    if isinstance(cond, Compare):
        return _compare(cond)
    if isinstance(cond, Member):
        return _member(cond)
    if isinstance(cond, Not):
        item = _condition(cond.item)

        def negation(facts: Facts) -> bool | None:
            result = item(facts)
            return None if result is None else not result

        return negation
    items = tuple(_condition(c) for c in cond.items)
    if not items:  # ALWAYS (an omitted `when`); the loader allows no other empty list
        return _always
    if len(items) == 1:
        return items[0]
    if isinstance(cond, All):

        def conjunction(facts: Facts) -> bool | None:
            unknown = False
            for item in items:
                result = item(facts)
                if result is False:
                    return False
                if result is None:
                    unknown = True
            return None if unknown else True

        return conjunction
    assert isinstance(cond, AnyOf)

    def disjunction(facts: Facts) -> bool | None:
        unknown = False
        for item in items:
            result = item(facts)
            if result is True:
                return True
            if result is None:
                unknown = True
        return None if unknown else False

    return disjunction


def _compare(cond: Compare) -> Test:
    test = _COMPARE[cond.op]
    if isinstance(cond.left, FactRef) and isinstance(cond.right, Const):
        # The common shape {fact: F, op: OP, value: V}: one dict lookup, one comparison.
        name, const = cond.left.name, cond.right.value

        def fact_vs_literal(facts: Facts) -> bool | None:
            value = facts.get(name)
            return None if value is None else test(value, const)

        return fact_vs_literal
    left, right = _expression(cond.left), _expression(cond.right)

    def comparison(facts: Facts) -> bool | None:
        a = left(facts)
        if a is None:
            return None
        b = right(facts)
        return None if b is None else test(a, b)

    return comparison


def _member(cond: Member) -> Test:
    left, values, negated = _expression(cond.left), frozenset(cond.values), cond.negated

    def membership(facts: Facts) -> bool | None:
        value = left(facts)
        if value is None:
            return None
        return (value in values) is not negated

    return membership


def _expression(expr: Expr) -> Value:
    if isinstance(expr, FactRef):
        name = expr.name
        return lambda facts: facts.get(name)
    if isinstance(expr, Const):
        const = expr.value
        return lambda facts: const
    assert isinstance(expr, Arith)
    left, right = _expression(expr.left), _expression(expr.right)
    if expr.op == "div":

        def quotient(facts: Facts) -> Any:
            a = left(facts)
            b = right(facts) if a is not None else None
            if b is None or b == 0:
                return None
            try:
                result = a / b
            except OverflowError:  # an int quotient too large for a float
                return None
            return result if -FLOAT_MAX <= result <= FLOAT_MAX else None

        return quotient
    apply = _ARITH[expr.op]

    def arithmetic(facts: Facts) -> Any:
        a = left(facts)
        b = right(facts) if a is not None else None
        if b is None:
            return None
        try:
            result = apply(a, b)
        except OverflowError:
            return None
        # Beyond the float range (inf, or an int too large to serialise reliably) is an overflow: unknown.
        return result if -FLOAT_MAX <= result <= FLOAT_MAX else None

    return arithmetic
