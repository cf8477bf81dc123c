"""The rule engine: a rulebook compiled once into one generated Python function, run per query into a proof.

The generated ``run(accepted)`` evaluates the derive rules stratum by stratum, then the constraints and the
decision rules, with every condition inline and flat: each step sets one local to True, False or None (unknown),
and each expression step to its value or None (unknown: an absent fact, a division by zero, an overflow). Gated
facts are never None, so None is free to mean unknown. Nothing walks the AST per query, copies deeply or
serialises. ``CompiledRulebook.source`` is the generated code.
"""

from __future__ import annotations

from typing import Any, Mapping

from proofgym.rules._ast import All, AnyOf, Arith, Compare, Const, FactRef, Member, Not, Rulebook
from proofgym.rules._loader import referenced_facts
from proofgym.rules._values import FLOAT_MAX

_COMPARE = frozenset({"==", "!=", "<", "<=", ">", ">="})


def compile_rulebook(rulebook: Rulebook) -> CompiledRulebook:
    """Compile a loaded rulebook into a generated evaluation function, once."""
    return CompiledRulebook(rulebook)


class CompiledRulebook:
    """A rulebook ready to evaluate. :meth:`evaluate` turns gated facts into the proof dict of
    docs/rulebooks.md; it never raises on facts the gate accepted."""

    def __init__(self, rulebook: Rulebook) -> None:
        self.rulebook = rulebook
        self.source, namespace = _Writer(rulebook).write()
        exec(compile(self.source, f"<rulebook {rulebook.name}>", "exec"), namespace)  # our own code, from the AST
        self._run = namespace["run"]

    def evaluate(self, accepted: Mapping[str, Any]) -> dict[str, Any]:
        """The proof of the decision these (gated) facts lead to, as JSON-native data."""
        proof: dict[str, Any] = self._run(accepted)[0]
        return proof

    def run(self, accepted: Mapping[str, Any]) -> tuple[dict[str, Any], list[bool]]:
        """The proof, and whether each rule fired (derive rules in evaluation order, then constraints, then
        decision rules by priority): what the report's trace needs, without re-reading the proof."""
        result: tuple[dict[str, Any], list[bool]] = self._run(accepted)
        return result


# ---- arithmetic: None when an operand is unknown, on division by zero and beyond the float range ----

def _finite(result: Any) -> Any:
    # Beyond the float range (inf, or an int too large to serialise reliably) is an overflow: unknown.
    return result if -FLOAT_MAX <= result <= FLOAT_MAX else None


def _add(a: Any, b: Any) -> Any:
    try:
        return None if a is None or b is None else _finite(a + b)
    except OverflowError:  # an int too large for a float
        return None


def _sub(a: Any, b: Any) -> Any:
    try:
        return None if a is None or b is None else _finite(a - b)
    except OverflowError:
        return None


def _mul(a: Any, b: Any) -> Any:
    try:
        return None if a is None or b is None else _finite(a * b)
    except OverflowError:
        return None


def _div(a: Any, b: Any) -> Any:
    try:
        return None if a is None or b is None or b == 0 else _finite(a / b)
    except OverflowError:  # an int quotient too large for a float
        return None


_HELPERS = {"_add": _add, "_sub": _sub, "_mul": _mul, "_div": _div}


# ---- the code writer ----

class _Writer:
    """Writes ``run(accepted) -> (proof, fired)`` for one rulebook. Every value the code needs that is not a plain
    string is passed in the function's globals (``K0``, ``K1`` ...), so nothing from the rulebook is parsed as code;
    strings are written with ``repr``."""

    def __init__(self, rulebook: Rulebook) -> None:
        self.rulebook = rulebook
        self.lines: list[str] = []
        self.namespace: dict[str, Any] = dict(_HELPERS)
        self.temps = 0
        self.reads: dict[str, str] = {}  # fact -> the local holding facts.get(fact), while it is still valid

    def write(self) -> tuple[str, dict[str, Any]]:
        rb = self.rulebook
        emit = self.emit
        emit("def run(accepted):")
        emit("    facts = dict(accepted)")
        emit("    get = facts.get")
        emit("    firings = []")
        emit("    defaults = {}")
        emit("    conflicts = set()")
        flags: list[str] = []
        strata: dict[int, tuple[list[Any], list[Any]]] = {}  # stratum -> (derive rules, derived specs)
        for spec in rb.derived:
            strata.setdefault(spec.stratum, ([], []))[1].append(spec)
        for derive in rb.derive_rules:
            strata.setdefault(derive.stratum, ([], []))[0].append(derive)
        for level in sorted(strata):
            rules, specs = strata[level]
            for rule in rules:
                flags.append(self.derive_rule(rule, level))
            # A derived fact is only ever set in its own stratum, and no rule of a stratum reads a fact of that
            # stratum: so a rule sets its fact at once, and "in facts" means "derived by a rule of this stratum".
            for spec in specs:
                if spec.has_default:
                    name = self.const(spec.name)
                    emit(f"    if {name} not in facts:")
                    emit(f"        facts[{name}] = defaults[{name}] = {self.const(spec.default)}")
            if specs:
                emit("    if conflicts:")
                emit(f"        for name in {self.const(tuple(spec.name for spec in specs))}:")
                emit("            if name in conflicts:")
                emit("                del facts[name]")

        self.reads = {}  # from here on the facts are final: a fact read once is read for all that follows
        held: list[str] = []
        for rule in rb.constraints:
            flag = self.temp("h")
            emit(f"    {flag} = {self.condition(rule.require)} is True")
            held.append(flag)
        candidate: list[str] = []
        for rule in rb.decision_rules:
            flag = self.temp("d")
            emit(f"    {flag} = {self.condition(rule.when)} is True")
            candidate.append(flag)
        flags += held + candidate

        emit("    candidates = []")
        for rule, flag in zip(rb.decision_rules, candidate):
            emit(f"    if {flag}:")
            emit(f"        candidates.append({self.const(rule.name)})")
        # Flat ifs rather than an elif chain, which would nest as deep as there are decision rules.
        undecided = '{"status": "indeterminate", "decision": None, "deciding_rules": [], "by_default": False}'
        emit(f"    outcome = {undecided} if conflicts else None")
        # The highest-priority candidate whose decision no failed constraint blocks decides.
        for rule, flag in zip(rb.decision_rules, candidate):
            unblocked = [h for c, h in zip(rb.constraints, held) if rule.decision in c.blocks]
            emit(f"    if outcome is None and {' and '.join([flag] + unblocked)}:")
            emit(f'        outcome = {{"status": "decided", "decision": {self.const(rule.decision)}, '
                 f'"deciding_rules": [{self.const(rule.name)}], "by_default": False}}')
        emit("    if outcome is None:")
        if rb.posture == "deny":  # the fail-closed default, naming the failed constraints that blocked a candidate
            emit("        deciding = []")
            for c, h in zip(rb.constraints, held):
                blocked = [d for r, d in zip(rb.decision_rules, candidate) if r.decision in c.blocks]
                if blocked:
                    emit(f"        if not {h} and ({' or '.join(blocked)}):")
                    emit(f"            deciding.append({self.const(c.name)})")
            emit(f'        outcome = {{"status": "decided", "decision": {self.const(rb.default_decision)}, '
                 f'"deciding_rules": deciding, "by_default": True}}')
        else:
            emit(f"        outcome = {undecided}")

        constraints = ", ".join(
            f'{{"rule": {self.const(c.name)}, "held": {h}, "blocks": [{", ".join(map(self.const, c.blocks))}]}}'
            for c, h in zip(rb.constraints, held))
        emit("    proof = {")
        emit(f'        "rulebook": {{"name": {self.const(rb.name)}, "hash": {self.const(rb.content_hash)}}},')
        emit('        "inputs": dict(accepted),')
        emit('        "firings": firings,')
        emit('        "defaults": defaults,')
        emit('        "facts": facts,')
        emit(f'        "constraints": [{constraints}],')
        emit('        "candidates": candidates,')
        emit('        "decision": outcome,')
        emit("    }")
        emit(f"    return proof, [{', '.join(flags)}]")
        return "\n".join(self.lines) + "\n", self.namespace

    def derive_rule(self, rule: Any, stratum: int) -> str:
        """Emit one derive rule; return the local that says whether it fired."""
        emit = self.emit
        self.reads = {}  # facts change between rules (in this stratum's targets and, after it, its defaults)
        emit(f"    # derive rule {rule.name!r}")
        when = self.condition(rule.when)
        value = self.expression(rule.value)
        fired = self.temp("f")
        known = type(rule.value) is Const and rule.value.value is not None
        emit(f"    {fired} = {when} is True" + ("" if known else f" and {value} is not None"))
        emit(f"    if {fired}:")
        reads = referenced_facts(rule.when, rule.value)
        if set(reads) <= _known_if_true(rule.when) | set(referenced_facts(rule.value)):
            premises = "{" + ", ".join(f"{self.const(fact)}: {self.reads[fact]}" for fact in reads) + "}"
        else:  # only the facts that are known
            premises = "premises"
            emit("        premises = {}")
            for fact in reads:
                emit(f"        if {self.reads[fact]} is not None:")
                emit(f"            premises[{self.const(fact)}] = {self.reads[fact]}")
        target = self.const(rule.target)
        emit(f'        firings.append({{"rule": {self.const(rule.name)}, "stratum": {self.const(stratum)}, '
             f'"premises": {premises}, "conclusion": {{"fact": {target}, "value": {value}}}}})')
        emit(f"        if {target} not in facts:")
        emit(f"            facts[{target}] = {value}")
        emit(f"        elif facts[{target}] != {value}:")
        emit(f"            conflicts.add({target})")
        return fired

    # Each step below emits flat code (no nesting, whatever the depth of the rulebook's conditions) and returns
    # what holds its result: a local, or a literal.

    def expression(self, expr: Any) -> str:
        kind = type(expr)
        if kind is Const:
            return self.const(expr.value)
        if kind is FactRef:
            if expr.name not in self.reads:
                self.reads[expr.name] = self.temp("v")
                self.emit(f"    {self.reads[expr.name]} = get({self.const(expr.name)})")
            return self.reads[expr.name]
        if kind is not Arith:
            raise TypeError(f"not an expression: {kind.__name__}")
        left, right = self.expression(expr.left), self.expression(expr.right)
        out = self.temp("v")
        self.emit(f"    {out} = _{expr.op}({left}, {right})")
        return out

    def condition(self, cond: Any) -> str:
        kind = type(cond)
        out = self.temp("c")
        if kind is Compare:
            if cond.op not in _COMPARE:
                raise ValueError(f"unknown comparison {cond.op!r}")
            left, right = self.expression(cond.left), self.expression(cond.right)
            unknown = [f"{side} is None" for side, node in ((left, cond.left), (right, cond.right))
                       if type(node) is not Const]
            test = f"{left} {cond.op} {right}"
            self.emit(f"    {out} = None if {' or '.join(unknown)} else {test}" if unknown else f"    {out} = {test}")
        elif kind is Member:
            left = self.expression(cond.left)
            test = f"{left} {'not in' if cond.negated else 'in'} {self.const(frozenset(cond.values))}"
            self.emit(f"    {out} = None if {left} is None else {test}" if type(cond.left) is not Const
                      else f"    {out} = {test}")
        elif kind is Not:
            inner = self.condition(cond.item)
            self.emit(f"    {out} = None if {inner} is None else not {inner}")
        elif kind is All or kind is AnyOf:
            items = [self.condition(item) for item in cond.items]
            decisive, other = ("True", "False") if kind is AnyOf else ("False", "True")
            if not items:  # ALWAYS (an omitted `when`) for all; any of nothing is false
                return other
            if len(items) == 1:
                return items[0]
            settled = " or ".join(f"{item} is {decisive}" for item in items)
            undecided = " or ".join(f"{item} is None" for item in items)
            self.emit(f"    {out} = {decisive} if {settled} else None if {undecided} else {other}")
        else:
            raise TypeError(f"not a condition: {kind.__name__}")
        return out

    # ---- helpers ----

    def emit(self, line: str) -> None:
        self.lines.append(line)

    def temp(self, prefix: str) -> str:
        self.temps += 1
        return f"{prefix}{self.temps}"

    def const(self, value: Any) -> str:
        """A literal for ``value``: a string, a boolean or a small int written out (repr is exact for these),
        anything else a global of the generated code."""
        if type(value) in (str, bool) or type(value) is int and -2**31 < value < 2**31:
            return repr(value)
        name = f"K{len(self.namespace)}"
        self.namespace[name] = value
        return name


def _known_if_true(cond: Any) -> set[str]:
    """The facts that are certainly known (present) when ``cond`` is true."""
    kind = type(cond)
    if kind is Compare or kind is Member:
        return set(referenced_facts(cond))  # a known comparison reads known operands
    if kind is All:
        return set().union(*map(_known_if_true, cond.items))
    if kind is AnyOf:
        return set.intersection(*map(_known_if_true, cond.items)) if cond.items else set()
    if kind is Not:
        return _known_if_false(cond.item)
    return set()


def _known_if_false(cond: Any) -> set[str]:
    """The facts that are certainly known when ``cond`` is false."""
    kind = type(cond)
    if kind is Compare or kind is Member:
        return set(referenced_facts(cond))
    if kind is All:
        return set.intersection(*map(_known_if_false, cond.items)) if cond.items else set()
    if kind is AnyOf:
        return set().union(*map(_known_if_false, cond.items))
    if kind is Not:
        return _known_if_true(cond.item)
    return set()
