"""Coverage of a rulebook on a set of records: how often each rule fires, which never do, which records no decision
rule decides, and where decision rules of different decisions both apply (and which one wins, and why).

Records stream through a :class:`CoverageCounter` one at a time (the gate and the compiled engine, no proof check:
coverage counts firings, it certifies nothing); it keeps counts and the first few row numbers of each finding,
never the records, so a file of any length is read in bounded memory. What a rule's "firing" means:

- a derive rule fires when its condition holds and it derives its fact;
- a constraint fires when its requirement does not hold (it then blocks the decisions it names);
- a decision rule *applies* when its condition holds, and *decides* when it is the rule whose decision the record
  gets (the highest-priority applicable rule that no failed constraint blocks).

A record *no decision rule decides* gets the posture's default decision (``posture: deny``) or none
(``posture: abstain``, or rules that derived conflicting values). A *conflict* is a record on which decision rules of
different decisions both apply: the one that decides (or the default, when constraints block them all) is named with
the rules it overrode.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Mapping

from proofgym.rules._ast import Rulebook
from proofgym.rules._engine import compile_rulebook
from proofgym.rules._gate import FactGate

#: Row numbers kept per finding (the first ones seen).
EXAMPLE_ROWS = 5

RuleKind = Literal["derive", "constraint", "decision"]


@dataclass(frozen=True)
class RuleCoverage:
    """One rule's counts. ``fired``: records it fired on (for a decision rule: it applied); ``decided``: records it
    decided (decision rules only); ``rows``: the first rows it fired on."""

    name: str
    kind: RuleKind
    fired: int
    decided: int = 0
    decision: str | None = None
    priority: int | None = None
    rows: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "kind": self.kind, "fired": self.fired}
        if self.kind == "decision":
            data.update(decided=self.decided, decision=self.decision, priority=self.priority)
        data["rows"] = list(self.rows)
        return data


@dataclass(frozen=True)
class DecisionConflict:
    """Records on which ``overruled`` applied, but ``winner`` (a decision rule, or ``None``: the posture's default,
    constraints having blocked every applicable rule) gave a different decision."""

    winner: str | None
    winner_decision: str | None
    overruled: str
    overruled_decision: str
    records: int
    rows: tuple[int, ...]
    why: str  # "priority" (the winner's is higher) or "blocked" (constraints blocked the overruled rule)

    def to_dict(self) -> dict[str, Any]:
        return {"winner": self.winner, "winner_decision": self.winner_decision, "overruled": self.overruled,
                "overruled_decision": self.overruled_decision, "records": self.records, "rows": list(self.rows),
                "why": self.why}


@dataclass(frozen=True)
class GateRejection:
    """Records whose value of ``fact`` the fact gate refused, for ``reason`` (such a record is not evaluated)."""

    fact: str
    reason: str
    records: int
    rows: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"fact": self.fact, "reason": self.reason, "records": self.records, "rows": list(self.rows)}


@dataclass(frozen=True)
class CoverageReport:
    """What :class:`CoverageCounter` found. ``evaluated`` = records the gate accepted; ``decisions``: records per
    decision (the default's included); ``by_default``: records no decision rule decided that got the default
    decision, ``no_rule_applies`` of them because no decision rule applied at all (the rest: every applicable one
    was blocked); ``undecided``: records that got no decision; ``ignored_columns``: record keys that are no fact
    of the rulebook (left out before the gate)."""

    rulebook: str
    records: int
    evaluated: int
    rules: tuple[RuleCoverage, ...]
    decisions: Mapping[str, int]
    default_decision: str | None
    by_default: int
    by_default_rows: tuple[int, ...]
    no_rule_applies: int
    no_rule_applies_rows: tuple[int, ...]
    undecided: int
    undecided_rows: tuple[int, ...]
    conflicts: tuple[DecisionConflict, ...]
    rejections: tuple[GateRejection, ...]
    ignored_columns: tuple[str, ...] = ()

    @property
    def never_fired(self) -> tuple[str, ...]:
        """The rules that fired on no record."""
        return tuple(rule.name for rule in self.rules if rule.fired == 0)

    @property
    def undecided_by_rules(self) -> int:
        """Records no decision rule decided: the default's and those left without a decision."""
        return self.by_default + self.undecided

    def branches(self) -> dict[str, int]:
        """Records per deciding branch: each decision rule that decided some, then ``default`` and ``undecided``."""
        counts = {rule.name: rule.decided for rule in self.rules if rule.kind == "decision" and rule.decided}
        if self.by_default:
            counts["default"] = self.by_default
        if self.undecided:
            counts["undecided"] = self.undecided
        return counts

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-native data."""
        return {
            "rulebook": self.rulebook,
            "records": self.records,
            "evaluated": self.evaluated,
            "rules": [rule.to_dict() for rule in self.rules],
            "never_fired": list(self.never_fired),
            "decisions": dict(self.decisions),
            "branches": self.branches(),
            "default_decision": self.default_decision,
            "by_default": {"records": self.by_default, "rows": list(self.by_default_rows)},
            "no_rule_applies": {"records": self.no_rule_applies, "rows": list(self.no_rule_applies_rows)},
            "undecided": {"records": self.undecided, "rows": list(self.undecided_rows)},
            "conflicts": [conflict.to_dict() for conflict in self.conflicts],
            "rejections": [rejection.to_dict() for rejection in self.rejections],
            "ignored_columns": list(self.ignored_columns),
        }

    def findings(self, max_conflicts: int = 10) -> list[str]:
        """One line per finding a reviewer should look at: rules that never fire, records no decision rule decides,
        conflicts (the ``max_conflicts`` most frequent, then a count of the others), records the gate refused,
        columns the rulebook ignores. Empty when there is none."""
        lines = [f"{rule.kind} rule '{rule.name}' never fires on the {self.evaluated} evaluated records"
                 for rule in self.rules if rule.fired == 0]
        if self.no_rule_applies:
            lines.append(f"{self.no_rule_applies} record(s) no decision rule applies to get the default "
                         f"'{self.default_decision}' "
                         f"(rows {_rows(self.no_rule_applies_rows, self.no_rule_applies)})")
        blocked = self.by_default - self.no_rule_applies
        if blocked:
            lines.append(f"{blocked} record(s) get the default '{self.default_decision}' because constraints block "
                         "every decision rule that applies")
        if self.undecided:
            lines.append(f"{self.undecided} record(s) get no decision "
                         f"(rows {_rows(self.undecided_rows, self.undecided)})")
        for c in self.conflicts[:max_conflicts]:
            winner = f"'{c.winner}' ({c.winner_decision})" if c.winner else f"the default ({c.winner_decision})"
            how = "by priority" if c.why == "priority" else "as constraints block the other"
            lines.append(f"conflict on {c.records} record(s): '{c.overruled}' ({c.overruled_decision}) also applies; "
                         f"{winner} decides {how} (rows {_rows(c.rows, c.records)})")
        if len(self.conflicts) > max_conflicts:
            lines.append(f"... and {len(self.conflicts) - max_conflicts} more pair(s) of conflicting rules")
        for r in self.rejections:
            lines.append(f"{r.records} record(s) not evaluated: fact '{r.fact}': {r.reason} "
                         f"(rows {_rows(r.rows, r.records)})")
        if self.ignored_columns:
            lines.append(f"columns that are no fact of the rulebook (ignored): {', '.join(self.ignored_columns)}")
        return lines


def _rows(rows: tuple[int, ...], count: int) -> str:
    return ", ".join(map(str, rows)) + (", ..." if count > len(rows) else "")


@dataclass
class _Tally:
    count: int = 0
    rows: list[int] = field(default_factory=list)

    def add(self, row: int) -> None:
        self.count += 1
        if len(self.rows) < EXAMPLE_ROWS:
            self.rows.append(row)


class CoverageCounter:
    """Counts, record by record, what :class:`CoverageReport` reports. :meth:`add` takes one record's facts (a
    mapping of column to value: keys that are no fact of the rulebook are left out, a ``None`` value is an absent
    fact) and its row number; :meth:`report` says what was seen so far."""

    def __init__(self, rulebook: Rulebook) -> None:
        self.rulebook = rulebook
        self._gate = FactGate(rulebook)
        self._engine = compile_rulebook(rulebook)
        self._facts = frozenset(spec.name for spec in rulebook.facts)
        self._kinds: list[tuple[str, RuleKind]] = [(r.name, "derive") for r in rulebook.derive_rules]
        self._kinds += [(r.name, "constraint") for r in rulebook.constraints]
        self._kinds += [(r.name, "decision") for r in rulebook.decision_rules]
        self._n_derive = len(rulebook.derive_rules)
        self._n_constraints = len(rulebook.constraints)
        self._decision_of = {r.name: r.decision for r in rulebook.decision_rules}
        self._fired = [_Tally() for _ in self._kinds]
        self._decided: dict[str, int] = {}
        self._decisions: dict[str, int] = {d: 0 for d in rulebook.decisions}
        self._by_default = _Tally()
        self._no_rule = _Tally()
        self._undecided = _Tally()
        self._conflicts: dict[tuple[str | None, str, str], _Tally] = {}
        self._rejections: dict[tuple[str, str], _Tally] = {}
        self._ignored: dict[str, None] = {}
        self.records = 0
        self.evaluated = 0

    def add(self, facts: Mapping[str, Any], row: int | None = None) -> None:
        """Count one record; ``row`` defaults to its position (1-based)."""
        self.records += 1
        row = self.records if row is None else row
        asserted = {}
        for name, value in facts.items():
            if name not in self._facts:
                if name not in self._ignored:
                    self._ignored[name] = None
            elif value is not None:
                asserted[name] = value
        accepted, rejected, _ = self._gate(asserted)
        if rejected:
            for fact in rejected:
                key = (fact.field, "; ".join(fact.reasons))
                self._rejections.setdefault(key, _Tally()).add(row)
            return
        self.evaluated += 1
        proof, fired = self._engine.run(accepted)
        constraints_from = self._n_derive
        decisions_from = constraints_from + self._n_constraints
        for index, flag in enumerate(fired):
            if constraints_from <= index < decisions_from:
                flag = not flag  # a constraint fires when its requirement fails
            if flag:
                self._fired[index].add(row)
        outcome = proof["decision"]
        decision = outcome["decision"]
        candidates: list[str] = proof["candidates"]
        if outcome["status"] != "decided":
            self._undecided.add(row)
        else:
            self._decisions[decision] = self._decisions.get(decision, 0) + 1
            if outcome["by_default"]:
                self._by_default.add(row)
                if not candidates:
                    self._no_rule.add(row)
            else:
                winner = outcome["deciding_rules"][0]
                self._decided[winner] = self._decided.get(winner, 0) + 1
        if decision is None or len({self._decision_of[name] for name in candidates}) < 2:
            return
        deciding = None if outcome["by_default"] else outcome["deciding_rules"][0]
        passed_over = True  # candidates above the winner were blocked; those below lost on priority
        for name in candidates:
            if name == deciding:
                passed_over = False
                continue
            if self._decision_of[name] != decision:
                why = "blocked" if passed_over else "priority"
                self._conflicts.setdefault((deciding, name, why), _Tally()).add(row)

    def report(self) -> CoverageReport:
        rb = self.rulebook
        rules = []
        for (name, kind), tally in zip(self._kinds, self._fired):
            if kind == "decision":
                spec = next(r for r in rb.decision_rules if r.name == name)
                rules.append(RuleCoverage(name, kind, tally.count, self._decided.get(name, 0), spec.decision,
                                          spec.priority, tuple(tally.rows)))
            else:
                rules.append(RuleCoverage(name, kind, tally.count, rows=tuple(tally.rows)))
        default = rb.default_decision if rb.posture == "deny" else None
        conflicts = []
        for (winner, overruled, why), tally in self._conflicts.items():
            winner_decision = self._decision_of[winner] if winner is not None else default
            conflicts.append(DecisionConflict(winner, winner_decision, overruled, self._decision_of[overruled],
                                              tally.count,
                                      tuple(tally.rows), why))
        conflicts.sort(key=lambda c: -c.records)
        rejections = sorted((GateRejection(fact, reason, tally.count, tuple(tally.rows))
                             for (fact, reason), tally in self._rejections.items()), key=lambda r: -r.records)
        return CoverageReport(
            rulebook=rb.name, records=self.records, evaluated=self.evaluated, rules=tuple(rules),
            decisions=dict(self._decisions), default_decision=default,
            by_default=self._by_default.count, by_default_rows=tuple(self._by_default.rows),
            no_rule_applies=self._no_rule.count, no_rule_applies_rows=tuple(self._no_rule.rows),
            undecided=self._undecided.count, undecided_rows=tuple(self._undecided.rows),
            conflicts=tuple(conflicts), rejections=tuple(rejections), ignored_columns=tuple(self._ignored),
        )


def rulebook_coverage(rulebook: Rulebook, records: Iterable[Mapping[str, Any]]) -> CoverageReport:
    """The coverage report of ``rulebook`` on ``records`` (numbered 1, 2, ... in the report's rows)."""
    counter = CoverageCounter(rulebook)
    for facts in records:
        counter.add(facts)
    return counter.report()
