"""Loading a rulebook: YAML -> shape check (pydantic) -> meaning check -> canonical, hashed AST.

Every problem is collected and reported at once, one line each, naming the file, the fact or rule, and the key.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, fields, is_dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal, Mapping, Sequence

from pydantic import ValidationError

from proofgym.formats import DocumentError, load_yaml
from proofgym.rules._ast import (
    ALWAYS,
    All,
    AnyOf,
    Arith,
    Compare,
    Condition,
    Const,
    ConstraintRule,
    DecisionRule,
    DerivedSpec,
    DeriveRule,
    Expr,
    FactRef,
    FactSpec,
    Member,
    Not,
    Rulebook,
)
from proofgym.rules._schema import (
    UNION_TAGS,
    AddOperand,
    AllCondition,
    AnyCondition,
    CompareCondition,
    ConstraintDecl,
    DerivedDecl,
    DeriveRuleDecl,
    DivOperand,
    FactCondition,
    FactDecl,
    FactOperand,
    MulOperand,
    NotCondition,
    RulebookDecl,
    SubOperand,
    ValueOperand,
)
from proofgym.rules._values import json_type, parse_template, render


class RulebookError(ValueError):
    """A rulebook is invalid. The message has one line per problem, ``{source}: {where}: {key}: {expected}``;
    ``problems`` holds the lines."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(self.problems))


def load_rulebook(path: str | Path) -> Rulebook:
    """Read, check and canonicalise a YAML rulebook file; raises :class:`RulebookError` listing every problem."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RulebookError([f"{source}: cannot read the rulebook: {exc}"]) from None
    try:
        data = load_yaml(text)  # a key given twice, aliases, deep nesting and huge integers are refused
    except DocumentError as exc:
        raise RulebookError([f"{source}: {exc}"]) from None
    return parse_rulebook(data, source=source)


def parse_rulebook(data: Mapping[str, Any], *, source: str = "<rulebook>") -> Rulebook:
    """Check and canonicalise a rulebook given as plain data (what its YAML parses to).

    Raises :class:`RulebookError` listing every problem: all shape problems, or, once the shape is valid, all
    semantic ones.
    """
    if not isinstance(data, Mapping):
        raise RulebookError([f"{source}: expected a mapping at the top level, got {json_type(data)}"])
    try:
        decl = RulebookDecl.model_validate(dict(data))
    except ValidationError as exc:
        raise RulebookError(_shape_problems(exc, data, source)) from None
    return _Builder(decl, source).build()


# ---- shape problems (pydantic errors -> one line each) ----

_RULE_LISTS = ("rules", "constraints", "decision_rules")


def _shape_problems(exc: ValidationError, data: Mapping[str, Any], source: str) -> list[str]:
    problems: list[str] = []
    for error in exc.errors(include_url=False):
        loc = [part for part in error["loc"] if part not in UNION_TAGS]
        subject, rest = _subject(loc, data)
        if rest and rest[-1] == "[key]":  # a bad key of the facts / derived mapping
            rest = [*rest[:-1], "name"]
        line = ": ".join(part for part in (source, subject, _key_path(rest), _expected(error)) if part)
        if line not in problems:
            problems.append(line)
    return problems


def _subject(loc: list[Any], data: Mapping[str, Any]) -> tuple[str, list[Any]]:
    """Who a problem is about (a fact, a rule, or nobody for top-level keys), and the key path within it."""
    if len(loc) >= 2 and loc[0] in ("facts", "derived"):
        return f"fact '{loc[1]}'", loc[2:]
    if len(loc) >= 2 and loc[0] in _RULE_LISTS and isinstance(loc[1], int):
        items = data.get(loc[0])
        item = items[loc[1]] if isinstance(items, list) and loc[1] < len(items) else None
        name = item.get("name") if isinstance(item, Mapping) else None
        return (f"rule '{name}'" if isinstance(name, str) and name else f"{loc[0]}[{loc[1]}]"), loc[2:]
    return "", loc


def _key_path(parts: Iterable[Any]) -> str:
    path = ""
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _expected(error: Mapping[str, Any]) -> str:
    kind: str = error["type"]
    message: str = error["msg"]
    if kind == "missing":
        return "missing required key"
    if kind == "extra_forbidden":
        return "unknown key"
    if kind in ("model_type", "dict_type"):
        return f"expected a mapping, got {json_type(error['input'])}"
    if message.startswith("Input should be "):
        message = "expected " + message.removeprefix("Input should be ")
    if kind.endswith("_type") or kind in ("literal_error", "string_pattern_mismatch"):
        message += f", got {_shown(error['input'])}"
    return message


def _shown(value: Any) -> str:
    if isinstance(value, (str, bool, int, float)) or value is None:
        return json.dumps(value) if not isinstance(value, float) else repr(value)
    return json_type(value)


# ---- meaning ----

@dataclass(frozen=True, slots=True)
class _Type:
    """The static type of an expression: a fact type, with an enum's members."""

    kind: str
    values: frozenset[str] = frozenset()

    @property
    def numeric(self) -> bool:
        return self.kind in ("integer", "number")

    @property
    def textual(self) -> bool:
        return self.kind in ("string", "enum")


_LITERAL_KINDS = {bool: "boolean", int: "integer", float: "number", str: "string"}
_ARITH: dict[type[Any], Literal["add", "sub", "mul", "div"]] = {AddOperand: "add", SubOperand: "sub",
                                                                 MulOperand: "mul", DivOperand: "div"}


class _Builder:
    """Checks a shape-valid rulebook's meaning and builds its AST, collecting every problem."""

    def __init__(self, decl: RulebookDecl, source: str) -> None:
        self.decl = decl
        self.source = source
        self.problems: list[str] = []
        self.types: dict[str, _Type] = {}
        self.derived_names: dict[str, None] = {}  # ordered, so that problems come in a stable order

    def problem(self, subject: str, key: str, what: str) -> None:
        self.problems.append(": ".join(part for part in (self.source, subject, key, what) if part))

    def build(self) -> Rulebook:
        decl = self.decl
        decisions = self._decisions()
        facts = tuple(self._fact(name, spec) for name, spec in decl.facts.items())
        derived = {name: self._derived(name, spec) for name, spec in decl.derived.items()}
        self._rule_names()
        derive_rules = [self._derive_rule(rule) for rule in decl.rules]
        constraints = tuple(self._constraint(rule, decisions) for rule in decl.constraints)
        decision_rules = self._decision_rules(decisions)
        strata = self._strata([rule for rule in derive_rules if rule.target in derived])
        if self.problems:
            raise RulebookError(self.problems)
        derived_specs = tuple(replace(spec, stratum=strata.get(name, 1)) for name, spec in derived.items())
        ordered = sorted(
            (replace(rule, stratum=strata[rule.target]) for rule in derive_rules),
            key=lambda rule: rule.stratum,  # a stable sort: file order within a stratum
        )
        rulebook = Rulebook(
            name=decl.name,
            version=decl.version,
            description=decl.description,
            decisions=decisions,
            posture=decl.posture,
            default_decision=decl.default_decision,
            min_confidence=decl.min_confidence,
            facts=facts,
            derived=derived_specs,
            derive_rules=tuple(ordered),
            constraints=constraints,
            decision_rules=decision_rules,
            content_hash="",
            source=self.source,
        )
        return replace(rulebook, content_hash=content_hash(rulebook))

    # -- declarations --

    def _decisions(self) -> tuple[str, ...]:
        decl = self.decl
        seen: set[str] = set()
        for index, decision in enumerate(decl.decisions):
            if decision in seen:
                self.problem("", f"decisions[{index}]", f"duplicate decision '{decision}'")
            seen.add(decision)
        if decl.posture == "deny" and decl.default_decision is None:
            self.problem("", "default_decision", "missing: required when posture is deny (the default posture)")
        if decl.posture == "abstain" and decl.default_decision is not None:
            self.problem("", "default_decision", "only used with posture deny; remove it or set posture: deny")
        if decl.default_decision is not None and decl.default_decision not in seen:
            self.problem("", "default_decision", f"undeclared decision '{decl.default_decision}'"
                         f" (decisions: {', '.join(decl.decisions)})")
        return tuple(dict.fromkeys(decl.decisions))

    def _bounds(self, subject: str, kind: str, spec: FactDecl | DerivedDecl) -> tuple[str, ...]:
        """Check the keys that only some fact types take; return the enum members."""
        values = spec.values or []
        if kind == "enum" and not values:
            self.problem(subject, "values", "missing: an enum lists its values")
        if kind != "enum" and spec.values is not None:
            self.problem(subject, "values", f"only an enum takes values, this fact is {_a(kind)}")
        for index, value in enumerate(values):
            if value in values[:index]:
                self.problem(subject, f"values[{index}]", f"duplicate value '{value}'")
        return tuple(dict.fromkeys(values))

    def _fact(self, name: str, spec: FactDecl) -> FactSpec:
        subject = f"fact '{name}'"
        values = self._bounds(subject, spec.type, spec)
        for key in ("min", "max"):
            if getattr(spec, key) is not None and spec.type not in ("integer", "number"):
                self.problem(subject, key, f"only integer and number facts take {key}, this fact is {_a(spec.type)}")
        if spec.min is not None and spec.max is not None and spec.min > spec.max:
            self.problem(subject, "min", f"{render(spec.min)} is above max {render(spec.max)}")
        if spec.max_length is not None and spec.type != "string":
            self.problem(subject, "max_length", f"only string facts take max_length, this fact is {_a(spec.type)}")
        self.types[name] = _Type(spec.type, frozenset(values))
        return FactSpec(
            name=name,
            type=spec.type,
            required=spec.required,
            minimum=spec.min,
            maximum=spec.max,
            values=values,
            max_length=spec.max_length,
            min_confidence=spec.min_confidence,
            description=spec.description,
        )

    def _derived(self, name: str, spec: DerivedDecl) -> DerivedSpec:
        subject = f"fact '{name}'"
        if name in self.types:
            self.problem(subject, "name", "declared both as an input fact and a derived fact"
                         " (they share one namespace)")
        values = self._bounds(subject, spec.type, spec)
        target = _Type(spec.type, frozenset(values))
        has_default = "default" in spec.model_fields_set
        if has_default:
            default = spec.default
            problem = _assignment_problem(Const(default), _literal_type(default), target)
            if problem:
                self.problem(subject, "default", f"expected {_a(spec.type)}, got {problem}")
        self.types.setdefault(name, target)
        self.derived_names[name] = None
        return DerivedSpec(
            name=name,
            type=spec.type,
            default=spec.default if has_default else None,
            has_default=has_default,
            description=spec.description,
            values=values,
        )

    def _rule_names(self) -> None:
        seen: dict[str, str] = {}
        for kind in _RULE_LISTS:
            for index, rule in enumerate(getattr(self.decl, kind)):
                if rule.name in seen:
                    self.problem(f"rule '{rule.name}'", "name", f"duplicate rule name (also {seen[rule.name]};"
                                 " rules of every kind share one namespace)")
                seen.setdefault(rule.name, f"{kind}[{index}]")

    # -- rules --

    def _derive_rule(self, rule: DeriveRuleDecl) -> DeriveRule:
        subject = f"rule '{rule.name}'"
        when = self._condition(subject, "when", rule.when) if rule.when is not None else ALWAYS
        value, value_type = self._operand(subject, "value", rule.value)
        target = rule.derive
        if target in self.derived_names:
            target_type = self.types[target]
            problem = _assignment_problem(value, value_type, target_type) if value_type else None
            if problem:
                self.problem(subject, "value", f"derives {problem}, but derived fact '{target}' is"
                             f" {_a(target_type.kind)}")
        elif target in self.types:
            self.problem(subject, "derive", f"'{target}' is an input fact; a rule may only derive a declared"
                         " derived fact")
        else:
            self.problem(subject, "derive", f"unknown derived fact '{target}' (declare it under derived)")
        self._template(subject, rule.explain)
        return DeriveRule(name=rule.name, target=target, when=when, value=value, explain=rule.explain, stratum=1)

    def _constraint(self, rule: ConstraintDecl, decisions: tuple[str, ...]) -> ConstraintRule:
        subject = f"rule '{rule.name}'"
        require = self._condition(subject, "require", rule.require)
        blocks = decisions if rule.blocks is None else tuple(rule.blocks)
        for index, decision in enumerate(blocks):
            if decision not in decisions:
                self.problem(subject, f"blocks[{index}]", f"undeclared decision '{decision}'"
                             f" (decisions: {', '.join(decisions)})")
            elif decision in blocks[:index]:
                self.problem(subject, f"blocks[{index}]", f"duplicate decision '{decision}'")
        self._template(subject, rule.explain)
        return ConstraintRule(name=rule.name, require=require, blocks=blocks, explain=rule.explain)

    def _decision_rules(self, decisions: tuple[str, ...]) -> tuple[DecisionRule, ...]:
        rules: list[DecisionRule] = []
        priorities: dict[int, str] = {}
        for rule in self.decl.decision_rules:
            subject = f"rule '{rule.name}'"
            when = self._condition(subject, "when", rule.when) if rule.when is not None else ALWAYS
            if rule.decide not in decisions:
                self.problem(subject, "decide", f"undeclared decision '{rule.decide}'"
                             f" (decisions: {', '.join(decisions)})")
            if rule.priority in priorities:
                self.problem(subject, "priority", f"{rule.priority} is also the priority of rule"
                             f" '{priorities[rule.priority]}' (priorities are unique)")
            priorities.setdefault(rule.priority, rule.name)
            self._template(subject, rule.explain)
            rules.append(DecisionRule(rule.name, rule.decide, rule.priority, when, rule.explain))
        reachable = {rule.decision for rule in rules}
        if self.decl.posture == "deny" and self.decl.default_decision is not None:
            reachable.add(self.decl.default_decision)
        for index, decision in enumerate(decisions):
            if decision not in reachable:
                self.problem("", f"decisions[{index}]", f"decision '{decision}' is unreachable: no decision rule"
                             " decides it and it is not the deny posture's default_decision")
        return tuple(sorted(rules, key=lambda rule: -rule.priority))

    def _template(self, subject: str, text: str) -> None:
        try:
            pieces = parse_template(text)
        except ValueError as exc:
            self.problem(subject, "explain", str(exc))
            return
        for _, name in pieces:
            if name is not None and name not in self.types:
                self.problem(subject, "explain", f"unknown fact '{name}' in {{{name}}}")

    # -- conditions and operands --

    def _condition(self, subject: str, path: str, cond: Any) -> Condition:
        if isinstance(cond, AllCondition):
            return All(tuple(self._condition(subject, f"{path}.all[{i}]", c) for i, c in enumerate(cond.all)))
        if isinstance(cond, AnyCondition):
            return AnyOf(tuple(self._condition(subject, f"{path}.any[{i}]", c) for i, c in enumerate(cond.any)))
        if isinstance(cond, NotCondition):
            return Not(self._condition(subject, f"{path}.not", cond.not_))
        if isinstance(cond, FactCondition):
            left, left_type = self._operand(subject, path, FactOperand(fact=cond.fact))
            right_key, right = "value", cond.value
        else:
            assert isinstance(cond, CompareCondition)
            left, left_type = self._operand(subject, f"{path}.left", cond.left)
            right_key, right = "right", cond.right
        if cond.op in ("in", "not_in"):
            if not isinstance(right, list):
                self.problem(subject, f"{path}.{right_key}", f"'{cond.op}' needs a list of literals")
                right = [right]
            if left_type is not None:
                for index, item in enumerate(right):
                    problem = _comparison_problem("==", left, left_type, Const(item), _literal_type(item))
                    if problem:
                        self.problem(subject, f"{path}.{right_key}[{index}]", problem)
            return Member(left, tuple(right), negated=cond.op == "not_in")
        if isinstance(right, list):
            self.problem(subject, f"{path}.{right_key}", f"'{cond.op}' compares with one value, not a list")
            return Compare(cond.op, left, Const(None))
        right_expr: Expr
        right_type: _Type | None
        if isinstance(cond, FactCondition):
            right_expr, right_type = Const(right), _literal_type(right)
        else:
            right_expr, right_type = self._operand(subject, f"{path}.right", right)
        if left_type is not None and right_type is not None:
            problem = _comparison_problem(cond.op, left, left_type, right_expr, right_type)
            if problem:
                self.problem(subject, path, problem)
        return Compare(cond.op, left, right_expr)

    def _operand(self, subject: str, path: str, operand: Any) -> tuple[Expr, _Type | None]:
        """The operand's AST and static type (None when it is unusable; the problem is already reported)."""
        if isinstance(operand, FactOperand):
            if operand.fact not in self.types:
                self.problem(subject, f"{path}.fact", f"unknown fact '{operand.fact}'")
                return FactRef(operand.fact), None
            return FactRef(operand.fact), self.types[operand.fact]
        if isinstance(operand, ValueOperand):
            return Const(operand.value), _literal_type(operand.value)
        op = _ARITH.get(type(operand))
        if op is None:  # a bare literal
            return Const(operand), _literal_type(operand)
        left_decl, right_decl = getattr(operand, op)
        left, left_type = self._operand(subject, f"{path}.{op}[0]", left_decl)
        right, right_type = self._operand(subject, f"{path}.{op}[1]", right_decl)
        usable = True
        for index, (expr, kind) in enumerate(((left, left_type), (right, right_type))):
            if kind is not None and not kind.numeric:
                self.problem(subject, f"{path}.{op}[{index}]", f"arithmetic needs numbers, got {_describe(expr, kind)}")
            usable = usable and kind is not None and kind.numeric
        result = "integer" if left_type == right_type == _Type("integer") and op != "div" else "number"
        return Arith(op, left, right), _Type(result) if usable else None

    # -- strata --

    def _strata(self, rules: list[DeriveRule]) -> dict[str, int]:
        """Each derived fact's stratum: 1 + the highest stratum of the derived facts its rules read (a topological
        order, iterative so that a long chain cannot exhaust the stack). Reports the cycles that leave facts out."""
        reads: dict[str, dict[str, str]] = {name: {} for name in self.derived_names}  # fact -> {read fact: rule}
        for rule in rules:
            for name in referenced_facts(rule.when, rule.value):
                if name in self.derived_names:
                    reads[rule.target].setdefault(name, rule.name)
        readers: dict[str, list[str]] = {name: [] for name in reads}
        for name, deps in reads.items():
            for dep in deps:
                readers[dep].append(name)
        waiting = {name: len(deps) for name, deps in reads.items()}
        ready = [name for name, count in waiting.items() if count == 0]
        strata: dict[str, int] = {}
        while ready:
            name = ready.pop()
            strata[name] = 1 + max((strata[dep] for dep in reads[name]), default=0)
            for reader in readers[name]:
                waiting[reader] -= 1
                if waiting[reader] == 0:
                    ready.append(reader)
        if len(strata) < len(reads):
            self._report_cycles({name: deps for name, deps in reads.items() if name not in strata})
        return strata

    def _report_cycles(self, pending: dict[str, dict[str, str]]) -> None:
        """Report one cycle per strongly connected group of the facts left pending (the others only read one)."""
        order = {name: position for position, name in enumerate(pending)}
        for group in sorted(_cyclic_groups(pending), key=lambda group: min(order[name] for name in group)):
            start = min(group, key=order.__getitem__)
            walk, seen = [start], {start: 0}
            while True:  # within a strongly connected group every fact reads another member: a walk must repeat
                nxt = next(dep for dep in pending[walk[-1]] if dep in group)
                if nxt in seen:
                    break
                seen[nxt] = len(walk)
                walk.append(nxt)
            cycle = [*walk[seen[nxt]:], nxt]
            rules = [pending[fact][read] for fact, read in zip(cycle, cycle[1:])]
            self.problem(f"rule '{rules[0]}'", "derive", f"cycle: {' -> '.join([*rules, rules[0]])}"
                         " (each rule reads the fact the next one derives)")


def _cyclic_groups(graph: dict[str, dict[str, str]]) -> list[set[str]]:
    """The strongly connected components of ``graph`` (node -> the nodes it reads) that hold a cycle: more than
    one node, or one that reads itself. Tarjan's algorithm, iterative."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> tuple[str, Iterator[str]]:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        return node, iter([dep for dep in graph[node] if dep in graph])

    for root in graph:
        if root in index:
            continue
        work = [visit(root)]
        while work:
            node, deps = work[-1]
            for dep in deps:
                if dep not in index:
                    work.append(visit(dep))
                    break
                if dep in on_stack:
                    low[node] = min(low[node], index[dep])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.add(member)
                        if member == node:
                            break
                    if len(group) > 1 or node in graph[node]:
                        groups.append(group)
    return groups


def _a(kind: str) -> str:
    return ("an " if kind[0] in "aeiou" else "a ") + kind


def _literal_type(value: Any) -> _Type:
    return _Type(_LITERAL_KINDS[type(value)])


def _describe(expr: Expr, kind: _Type) -> str:
    if isinstance(expr, FactRef):
        return f"{kind.kind} fact '{expr.name}'"
    if isinstance(expr, Const):
        return f"{kind.kind} {json.dumps(expr.value)}"
    return f"{kind.kind} expression"


def _comparison_problem(op: str, left: Expr, lt: _Type, right: Expr, rt: _Type) -> str | None:
    if op in ("<", "<=", ">", ">="):
        if lt.numeric and rt.numeric:
            return None
        return f"'{op}' orders numbers only: cannot order {_describe(left, lt)} and {_describe(right, rt)}"
    if (lt.numeric and rt.numeric) or lt.kind == rt.kind == "boolean":
        return None
    if lt.textual and rt.textual:
        for expr, kind, other in ((left, lt, right), (right, rt, left)):
            if kind.kind == "enum" and isinstance(other, Const) and other.value not in kind.values:
                return (f"{_describe(expr, kind)} has no value {json.dumps(other.value)}"
                        f" (values: {', '.join(sorted(kind.values))})")
        return None
    return f"cannot compare {_describe(left, lt)} with {_describe(right, rt)}"


def _assignment_problem(value: Expr, kind: _Type, target: _Type) -> str | None:
    """What a value of type ``kind`` that cannot set a fact of type ``target`` is (None when it can)."""
    if target.kind == "number" and kind.numeric or target.kind == "string" and kind.textual:
        return None
    if kind.kind == target.kind != "enum":
        return None
    shown = _describe(value, kind)
    if target.kind == "enum" and kind.textual:
        allowed = ", ".join(sorted(target.values))
        if isinstance(value, Const):
            return None if value.value in target.values else f"{shown}, not one of the enum's values ({allowed})"
        if kind.kind == "enum" and kind.values <= target.values:
            return None
        return f"{shown}, which may take values outside the enum's ({allowed})"
    return shown


def referenced_facts(*nodes: Any) -> list[str]:
    """The facts an AST node reads, in order of first appearance."""
    names: dict[str, None] = {}
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        if isinstance(node, FactRef):
            names.setdefault(node.name)
        elif isinstance(node, (Compare, Arith)):
            stack += [node.right, node.left]
        elif isinstance(node, Member):
            stack.append(node.left)
        elif isinstance(node, (All, AnyOf)):
            stack += reversed(node.items)
        elif isinstance(node, Not):
            stack.append(node.item)
    return list(names)



# ---- canonical form and hash ----

def _canonical_node(node: Any) -> Any:
    if is_dataclass(node):
        return {type(node).__name__: {f.name: _canonical_node(getattr(node, f.name)) for f in fields(node)}}
    if isinstance(node, tuple):
        return [_canonical_node(item) for item in node]
    return node


def content_hash(rulebook: Rulebook) -> str:
    """sha256 of the rulebook's canonical JSON: everything but its source path and the hash itself."""
    body = {
        f.name: _canonical_node(getattr(rulebook, f.name))
        for f in fields(rulebook)
        if f.name not in ("facts", "derived", "content_hash", "source")
    }
    body["facts"] = {spec.name: _canonical_node(spec) for spec in rulebook.facts}
    body["derived"] = {spec.name: _canonical_node(spec) for spec in rulebook.derived}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
