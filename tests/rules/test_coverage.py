"""The coverage report of a rulebook on records: firings per rule, rules that never fire, records no decision rule
decides, conflicting decisions (resolved by priority or by a blocking constraint), gate rejections; and, on a
shipped domain's generated records, the same decisions and deciding rules as the kernel's own reports."""

from __future__ import annotations

import json

from kernel_helpers import book

from proofgym.rules import CoverageCounter, RuleKernel, load_rulebook, rulebook_coverage

BENEFITS = """
    name: benefits
    version: "1"
    description: housing benefit
    decisions: [grant, review, refuse]
    posture: deny
    default_decision: refuse
    facts:
      age: {type: integer, min: 0, max: 120}
      income: {type: number, min: 0}
      household: {type: integer, min: 1, max: 20}
      tenure: {type: enum, values: [rent, own, other]}
    derived:
      low_income: {type: boolean, default: false}
    rules:
      - name: low_income_rule
        derive: low_income
        when: {fact: income, op: "<", value: 20000}
        explain: low income
    constraints:
      - name: adult
        require: {fact: age, op: ">=", value: 18}
        blocks: [grant, review]
        explain: adults only
    decision_rules:
      - name: grant_low_income_renter
        decide: grant
        priority: 20
        when: {all: [{fact: low_income, op: "==", value: true}, {fact: tenure, op: "==", value: rent}]}
        explain: grant
      - name: review_large_household
        decide: review
        priority: 10
        when: {fact: household, op: ">=", value: 5}
        explain: review
      - name: refuse_owner
        decide: refuse
        priority: 30
        when: {fact: tenure, op: "==", value: own}
        explain: refuse
      - name: grant_huge_household
        decide: grant
        priority: 5
        when: {fact: household, op: ">", value: 50}
        explain: never, household is at most 20
"""

RECORDS = [
    {"age": 30, "income": 15000, "household": 2, "tenure": "rent", "id": "a"},   # 1: grant by grant_low_income
    {"age": 30, "income": 15000, "household": 6, "tenure": "rent", "id": "b"},   # 2: grant over review (priority)
    {"age": 16, "income": 15000, "household": 6, "tenure": "rent", "id": "c"},   # 3: both blocked: default refuse
    {"age": 40, "income": 50000, "household": 2, "tenure": "other", "id": "d"},  # 4: nothing applies: default
    {"age": 40, "income": 50000, "household": 7, "tenure": "own", "id": "e"},    # 5: refuse over review (priority)
    {"age": 40, "income": "lots", "household": 2, "tenure": "rent", "id": "f"},  # 6: rejected by the gate
    {"age": 40, "income": None, "household": 2, "tenure": "rent", "id": "g"},    # 7: a missing value: rejected
]


def test_each_rule_is_counted_and_the_rule_that_never_fires_is_named():
    report = rulebook_coverage(book(BENEFITS), RECORDS)
    assert (report.records, report.evaluated) == (7, 5)
    by_name = {rule.name: rule for rule in report.rules}
    assert by_name["low_income_rule"].fired == 3 and by_name["low_income_rule"].rows == (1, 2, 3)
    assert by_name["adult"].fired == 1 and by_name["adult"].rows == (3,)  # a constraint fires when it fails
    assert (by_name["grant_low_income_renter"].fired, by_name["grant_low_income_renter"].decided) == (3, 2)
    assert (by_name["review_large_household"].fired, by_name["review_large_household"].decided) == (3, 0)
    assert report.never_fired == ("grant_huge_household",)
    assert "decision rule 'grant_huge_household' never fires on the 5 evaluated records" in report.findings()


def test_records_no_decision_rule_decides_are_counted_apart_from_the_blocked_ones():
    report = rulebook_coverage(book(BENEFITS), RECORDS)
    assert report.decisions == {"grant": 2, "review": 0, "refuse": 3}
    assert (report.by_default, report.by_default_rows) == (2, (3, 4))
    assert (report.no_rule_applies, report.no_rule_applies_rows) == (1, (4,))
    assert report.undecided_by_rules == 2
    assert report.branches() == {"grant_low_income_renter": 2, "refuse_owner": 1, "default": 2}
    findings = report.findings()
    assert "1 record(s) no decision rule applies to get the default 'refuse' (rows 4)" in findings
    assert ("1 record(s) get the default 'refuse' because constraints block every decision rule that applies"
            in findings)


def test_conflicting_decisions_name_the_winner_and_why():
    report = rulebook_coverage(book(BENEFITS), RECORDS)
    found = {(c.winner, c.overruled, c.why): (c.records, c.rows) for c in report.conflicts}
    assert found == {
        ("grant_low_income_renter", "review_large_household", "priority"): (1, (2,)),
        (None, "grant_low_income_renter", "blocked"): (1, (3,)),
        (None, "review_large_household", "blocked"): (1, (3,)),
        ("refuse_owner", "review_large_household", "priority"): (1, (5,)),
    }
    # Record 3: grant and review both apply, the constraint blocks both, and the default (refuse) decides: one pair
    # per overruled rule, with the default as the winner.
    assert ("conflict on 1 record(s): 'review_large_household' (review) also applies; 'refuse_owner' (refuse) "
            "decides by priority (rows 5)") in report.findings()


def test_the_gate_s_rejections_and_ignored_columns_are_reported():
    report = rulebook_coverage(book(BENEFITS), RECORDS)
    assert [(r.fact, r.reason, r.rows) for r in report.rejections] == [
        ("income", "expected a number, got string", (6,)),
        ("income", "required fact missing", (7,)),
    ]
    assert report.ignored_columns == ("id",)
    assert "columns that are no fact of the rulebook (ignored): id" in report.findings()


def test_the_json_form_is_json_and_says_the_same():
    report = rulebook_coverage(book(BENEFITS), RECORDS)
    data = json.loads(json.dumps(report.to_dict()))
    assert data["never_fired"] == ["grant_huge_household"]
    assert data["by_default"] == {"records": 2, "rows": [3, 4]}
    assert data["no_rule_applies"] == {"records": 1, "rows": [4]}
    assert data["branches"] == report.branches()
    assert len(data["conflicts"]) == 4


def test_an_abstaining_rulebook_leaves_records_undecided():
    abstaining = BENEFITS.replace("posture: deny", "posture: abstain").replace("    default_decision: refuse\n", "")
    report = rulebook_coverage(book(abstaining), RECORDS)
    assert (report.undecided, report.undecided_rows, report.by_default) == (2, (3, 4), 0)
    assert report.default_decision is None
    assert "2 record(s) get no decision (rows 3, 4)" in report.findings()


def test_row_numbers_are_the_caller_s_and_only_the_first_few_are_kept():
    counter = CoverageCounter(book(BENEFITS))
    for row in range(100, 120):
        counter.add(RECORDS[3], row=row)
    report = counter.report()
    assert report.no_rule_applies == 20 and report.no_rule_applies_rows == (100, 101, 102, 103, 104)
    assert "(rows 100, 101, 102, 103, 104, ...)" in report.findings()[-2]


def test_on_a_shipped_domain_coverage_agrees_with_the_kernel_record_by_record():
    from proofgym.domains import get_domain

    domain = get_domain("loan")
    rulebook = load_rulebook(domain.rulebook_path)
    records = [record.facts for record in domain.generate(7, 600)]
    report = rulebook_coverage(rulebook, records)
    kernel = RuleKernel(rulebook)
    decisions: dict[str, int] = {}
    deciding: dict[str, int] = {}
    fired: dict[str, int] = {}
    for facts in records:
        answer = kernel.query(facts)
        decisions[answer["decision"]] = decisions.get(answer["decision"], 0) + 1
        decided_by = answer["deciding_rules"][0] if not answer["proof"]["decision"]["by_default"] else "default"
        deciding[decided_by] = deciding.get(decided_by, 0) + 1
        for rule in answer["symbolic_trace"]["rules"]:
            # The trace marks a constraint fired when it holds; coverage counts the records where it fails.
            if rule["fired"] != (rule["rule_type"] == "constraint"):
                fired[rule["rule_name"]] = fired.get(rule["rule_name"], 0) + 1
    assert report.evaluated == len(records) and not report.rejections
    assert {k: v for k, v in report.decisions.items() if v} == decisions
    assert report.branches() == {k: deciding[k] for k in report.branches()} and sum(deciding.values()) == 600
    assert {rule.name: rule.fired for rule in report.rules if rule.fired} == fired
