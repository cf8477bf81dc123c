"""Hypothesis strategies: random valid rulebooks with gated fact sets, and random tampering with proofs."""

from __future__ import annotations

import copy
import dataclasses
import math
import random

from hypothesis import strategies as st

from proofgym.rules._ast import (
    ALWAYS, All, AnyOf, Arith, Compare, Const, ConstraintRule, DecisionRule, DerivedSpec, DeriveRule, FactRef, FactSpec,
    Member, Not,
)

from ._support import build_rulebook

_INTS = (-2, -1, 0, 1, 2, 3, 5, 10)
_FLOATS = (-1.5, 0.5, 2.5, 3.0)
_STRINGS = ("", "a", "b", "ab", "abc")
_HUGE = (1e308, -1e308, 10 ** 300)  # finite literals whose arithmetic can overflow (unknown)
_ENUM_VALUES = ("red", "green", "blue", "grey")
_DECISIONS = ("permit", "deny", "review")
_NUMERIC = ("integer", "number")


# ---- random valid rulebooks ----
# Built with a seeded random.Random rather than composed hypothesis strategies, which are two orders of magnitude
# slower at this size; hypothesis draws the sizes (so it can shrink them) and the seed.

class _Generator:
    """Random well-typed facts, expressions, conditions and rules (the load-time rules of docs/rulebooks.md)."""

    def __init__(self, seed: int) -> None:
        self.rnd = random.Random(seed)

    def input_fact(self, name: str) -> FactSpec:
        rnd = self.rnd
        kind = rnd.choice(("integer", "number", "boolean", "enum", "string"))
        required = rnd.random() < 0.5
        if kind == "integer":
            return FactSpec(name, kind, required, minimum=rnd.choice((None, -3, 0, 1)),
                            maximum=rnd.choice((None, 2, 5, 10)))
        if kind == "number":
            return FactSpec(name, kind, required, minimum=rnd.choice((None, -2.5, 0, 1)),
                            maximum=rnd.choice((None, 2, 5.5, 10)))
        if kind == "enum":
            return FactSpec(name, kind, required, values=tuple(rnd.sample(_ENUM_VALUES, rnd.randint(1, 3))))
        if kind == "string":
            return FactSpec(name, kind, required, max_length=rnd.choice((None, 1, 2)))
        return FactSpec(name, kind, required)

    def value_of(self, spec: FactSpec):
        """A gated value of a declared input fact: the right type, within its bounds."""
        rnd = self.rnd
        if spec.type == "boolean":
            return rnd.random() < 0.5
        if spec.type == "enum":
            return rnd.choice(spec.values)
        if spec.type == "string":
            return rnd.choice([s for s in _STRINGS if spec.max_length is None or len(s) <= spec.max_length])
        low = -6 if spec.minimum is None else spec.minimum
        high = 12 if spec.maximum is None else spec.maximum
        pooled = [x for x in _FLOATS if low <= x <= high]
        pick = rnd.random()
        if spec.type == "integer" or pick < 0.5:
            return rnd.randint(math.ceil(low), math.floor(high))
        if pick < 0.75 and pooled:
            return rnd.choice(pooled)
        return rnd.uniform(low, high)

    def inputs(self, facts) -> dict:
        """A fact set as the gate accepts it: every required fact, some optional ones."""
        return {spec.name: self.value_of(spec) for spec in facts if spec.required or self.rnd.random() < 0.6}

    def number(self, avail: dict, depth: int, integer_only: bool = False):
        rnd = self.rnd
        if depth > 0 and rnd.random() < 0.3:
            ops = ("add", "sub", "mul") if integer_only else ("add", "sub", "mul", "div")
            return Arith(rnd.choice(ops), self.number(avail, depth - 1, integer_only),
                         self.number(avail, depth - 1, integer_only))
        kinds = ("integer",) if integer_only else _NUMERIC
        names = [name for name, spec in avail.items() if spec.type in kinds]
        if names and rnd.random() < 0.7:
            return FactRef(rnd.choice(names))
        if rnd.random() < 0.05:
            return Const(10 ** 300 if integer_only else rnd.choice(_HUGE))
        return Const(rnd.choice(_INTS if integer_only or rnd.random() < 0.6 else _FLOATS))

    def atom(self, avail: dict):
        rnd = self.rnd
        name = rnd.choice(list(avail))
        spec, fact = avail[name], FactRef(name)
        equality = rnd.choice(("==", "!="))
        member = rnd.random() < 0.3
        if spec.type == "boolean":
            others = [other for other, s in avail.items() if s.type == "boolean"]
            right = FactRef(rnd.choice(others)) if rnd.random() < 0.3 else Const(rnd.random() < 0.5)
            return Compare(equality, fact, right)
        if spec.type in ("enum", "string"):
            pool = spec.values if spec.type == "enum" else _STRINGS + _ENUM_VALUES[:1]  # a string may hold an enum's
            if member:
                return Member(fact, tuple(rnd.sample(pool, rnd.randint(1, len(pool)))), rnd.random() < 0.5)
            return Compare(equality, fact, Const(rnd.choice(pool)))
        left = self.number(avail, 1) if rnd.random() < 0.3 else fact
        if member:
            pool = _INTS if spec.type == "integer" and left is fact else _INTS + _FLOATS
            return Member(left, tuple(rnd.sample(pool, rnd.randint(1, 3))), rnd.random() < 0.5)
        return Compare(rnd.choice(("==", "!=", "<", "<=", ">", ">=")), left, self.number(avail, 1))

    def condition(self, avail: dict, depth: int = 2):
        rnd = self.rnd
        pick = rnd.random()
        if depth == 0 or pick < 0.55:
            return self.atom(avail)
        if pick < 0.7:
            return Not(self.condition(avail, depth - 1))
        items = tuple(self.condition(avail, depth - 1) for _ in range(rnd.randint(1, 3)))  # never empty
        return All(items) if pick < 0.85 else AnyOf(items)

    def when(self, avail: dict):
        """A rule's condition; an omitted ``when`` (ALWAYS) now and then."""
        return ALWAYS if self.rnd.random() < 0.1 else self.condition(avail)

    def derive_value(self, spec: DerivedSpec, avail: dict):
        """A value of the derived fact's own type (a derive value of another type is a load error)."""
        rnd = self.rnd
        if spec.type in _NUMERIC:
            return self.number(avail, 2, integer_only=spec.type == "integer")
        # an enum may set a string, or an enum whose values include all of its own
        names = [name for name, other in avail.items()
                 if other.type == spec.type != "enum" or (spec.type == "string" and other.type == "enum")
                 or (spec.type == "enum" and other.type == "enum" and set(other.values) <= set(spec.values))]
        if names and rnd.random() < 0.4:
            return FactRef(rnd.choice(names))
        return Const(rnd.random() < 0.5 if spec.type == "boolean" else self.default(spec))

    def default(self, spec: DerivedSpec):
        rnd = self.rnd
        if spec.type == "boolean":
            return rnd.random() < 0.5
        if spec.type in ("string", "enum"):
            return rnd.choice(spec.values or _STRINGS)
        return rnd.choice(_INTS if spec.type == "integer" else _INTS + _FLOATS)


def random_case(n_facts: int, n_derived: int, n_decision_rules: int, n_constraints: int, n_fact_sets: int,
                seed: int):
    """(a random valid Rulebook, gated fact sets for it).

    Derived fact d<j> is read only by rules for later derived facts, so the rules are acyclic; a derived fact may
    have several rules (possible conflicts); the rules' file order is shuffled before build_rulebook stratifies them.
    """
    gen = _Generator(seed)
    rnd = gen.rnd
    facts = [gen.input_fact(f"i{n}") for n in range(n_facts)]
    avail: dict = {spec.name: spec for spec in facts}
    derived, rules = [], []
    for j in range(n_derived):
        kind = rnd.choice(("boolean", "integer", "number", "string", "enum"))
        values = tuple(rnd.sample(_ENUM_VALUES, rnd.randint(1, 4))) if kind == "enum" else ()
        spec = DerivedSpec(f"d{j}", kind, values=values)
        if rnd.random() < 0.4:
            spec = dataclasses.replace(spec, default=gen.default(spec), has_default=True)
        for _ in range(rnd.choice((0, 1, 1, 2, 2, 3))):
            rules.append(DeriveRule(f"r{len(rules)}", spec.name, gen.when(avail), gen.derive_value(spec, avail),
                                    "", 0))
        derived.append(spec)
        avail[spec.name] = spec
    rnd.shuffle(rules)
    posture = rnd.choice(("deny", "abstain"))
    default = rnd.choice(_DECISIONS) if posture == "deny" else None
    # An abstain rulebook needs a decision rule: without one no decision is reachable.
    priorities = rnd.sample(range(-5, 60), max(n_decision_rules, 1 if posture == "abstain" else 0))
    decision_rules = [DecisionRule(f"p{n}", rnd.choice(_DECISIONS), priority, gen.when(avail), "")
                      for n, priority in enumerate(priorities)]
    # Only reachable decisions are declared (an unreachable one is a load error).
    decisions = [d for d in _DECISIONS if d == default or any(r.decision == d for r in decision_rules)]
    constraints = [ConstraintRule(f"c{n}", gen.condition(avail),
                                  tuple(rnd.sample(decisions, rnd.randint(1, len(decisions)))), "")
                   for n in range(n_constraints)]
    rb = build_rulebook("random", facts=facts, derived=derived, rules=rules, constraints=constraints,
                        decision_rules=decision_rules, decisions=decisions, posture=posture,
                        default_decision=default)
    return rb, [gen.inputs(facts) for _ in range(n_fact_sets)]


def rulebooks_with_inputs(max_fact_sets: int = 4):
    """A strategy for random_case: hypothesis draws the sizes, which it can shrink, and the seed."""
    return st.builds(random_case, st.integers(1, 4), st.integers(0, 5), st.integers(0, 4), st.integers(0, 3),
                     st.integers(1, max_fact_sets), st.integers(0, 2**32))


# ---- tampering ----

GARBAGE = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(), st.text(max_size=4),
                    st.builds(list), st.builds(dict), st.just(()),  # fresh containers: tampering may fill them
                    st.sampled_from(("permit", "deny", "decided", "i0", "r0", "age", "adult", float("nan"))))


def _paths(node, path=()):
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, path + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, path + (index,))


def same(a, b) -> bool:
    """Strict structural equality: True is not 1, 1 is not 1.0, NaN is not NaN; mapping key order is ignored."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(map(same, a, b))
    return a == b


@st.composite
def tampered(draw, proof: dict):
    """A copy of ``proof`` with one random change: a node replaced by garbage, a key dropped or added, an item
    dropped, duplicated or swapped, a boolean flipped, a number bumped, a string extended."""
    proof = copy.deepcopy(proof)
    path = draw(st.sampled_from(list(_paths(proof))))
    if not path:
        return draw(GARBAGE)
    parent = proof
    for step in path[:-1]:
        parent = parent[step]
    node = parent[path[-1]]
    changes = ["replace"]
    if isinstance(node, dict):
        changes += ["drop_key", "add_key"] if node else ["add_key"]
    if isinstance(node, list):
        changes += ["drop_item", "duplicate_item", "swap_items"] if node else ["add_item"]
    if type(node) is bool:
        changes.append("flip")
    if type(node) in (int, float):
        changes.append("bump")
    if type(node) is str:
        changes.append("extend")
    change = draw(st.sampled_from(changes))
    if change == "replace":
        parent[path[-1]] = draw(GARBAGE)
    elif change == "drop_key":
        del node[draw(st.sampled_from(sorted(node, key=repr)))]
    elif change == "add_key":
        node[draw(st.sampled_from(("extra", "i0", "d0", "age", "is_adult", "rule", "value")))] = draw(GARBAGE)
    elif change == "drop_item":
        del node[draw(st.integers(0, len(node) - 1))]
    elif change == "duplicate_item":
        index = draw(st.integers(0, len(node) - 1))
        node.insert(index, copy.deepcopy(node[index]))
    elif change == "swap_items":
        i, j = draw(st.integers(0, len(node) - 1)), draw(st.integers(0, len(node) - 1))
        node[i], node[j] = node[j], node[i]
    elif change == "add_item":
        node.append(draw(GARBAGE))
    elif change == "flip":
        parent[path[-1]] = not node
    elif change == "bump":
        parent[path[-1]] = node + 1 if node + 1 != node else -node - 1  # huge floats absorb + 1
    else:
        parent[path[-1]] = node + "x"
    return proof
