"""One test per class of loading error (docs/rulebooks.md, "Loading rules"): each names the file, the fact or rule,
and the key, one line per problem."""

import pytest

from proofgym.rules import RulebookError, load_rulebook, parse_rulebook

from kernel_helpers import GRANT, LOAN, data_of, problems


def grant(**changes):
    data = data_of(GRANT)
    data.update(changes)
    return data


def rule(data, name):
    return next(r for key in ("rules", "constraints", "decision_rules") for r in data.get(key, []) if r["name"] == name)


# ---- shape: unknown keys, missing keys, bad types ----

def test_unknown_keys_are_named_wherever_they_are():
    data = grant(colour="red")
    data["facts"]["age"]["unit"] = "years"
    rule(data, "adult")["because"] = "x"
    rule(data, "adult")["when"]["note"] = "x"
    assert problems(data) == [
        "rb.yaml: fact 'age': unit: unknown key",
        "rb.yaml: rule 'adult': when.note: unknown key",
        "rb.yaml: rule 'adult': because: unknown key",
        "rb.yaml: colour: unknown key",
    ]


def test_missing_required_keys():
    data = grant()
    del data["decisions"]
    del data["facts"]["age"]["type"]
    del rule(data, "adult")["derive"]
    del rule(data, "no_second_grant")["require"]
    del rule(data, "deny_minor")["priority"]
    assert sorted(problems(data)) == sorted([
        "rb.yaml: decisions: missing required key",
        "rb.yaml: fact 'age': type: missing required key",
        "rb.yaml: rule 'adult': derive: missing required key",
        "rb.yaml: rule 'no_second_grant': require: missing required key",
        "rb.yaml: rule 'deny_minor': priority: missing required key",
    ])


def test_bad_types_and_malformed_conditions():
    data = grant(posture="maybe", min_confidence="high")
    data["facts"]["age"]["required"] = "yes"
    rule(data, "adult")["when"] = {"fact": "age", "op": "is", "value": 18}
    rule(data, "deny_minor")["when"] = {"facts": "age"}
    rule(data, "deny_income")["priority"] = 4.5
    assert problems(data) == [
        "rb.yaml: posture: expected 'deny' or 'abstain', got \"maybe\"",
        "rb.yaml: min_confidence: expected a valid number, got \"high\"",
        "rb.yaml: fact 'age': required: expected a valid boolean, got \"yes\"",
        "rb.yaml: rule 'adult': when.op: expected '==', '!=', '<', '<=', '>', '>=', 'in' or 'not_in', got \"is\"",
        "rb.yaml: rule 'deny_minor': when: expected a condition: {all: [..]}, {any: [..]}, {not: c}, "
        "{fact: F, op: OP, value: V} or {left: A, op: OP, right: B}",
        "rb.yaml: rule 'deny_income': priority: expected a valid integer, got 4.5",
    ]


def test_a_rule_without_a_usable_name_is_named_by_its_position():
    data = grant()
    data["rules"].append({"name": 7, "derive": "eligible"})
    data["constraints"].append("not a mapping")
    assert problems(data) == [
        "rb.yaml: rules[3]: name: expected a valid string, got 7",
        "rb.yaml: constraints[1]: expected a mapping, got string",
    ]


def test_literals_must_be_finite_scalars():
    data = grant()
    rule(data, "adult")["when"] = {"fact": "age", "op": ">=", "value": float("nan")}
    rule(data, "deny_minor")["when"] = {"fact": "age", "op": "in", "value": [1, None]}
    assert problems(data) == [
        "rb.yaml: rule 'adult': when.value: expected a literal: a string, a finite number or a boolean",
        "rb.yaml: rule 'deny_minor': when.value: item 1: expected a literal: a string, a finite number or a boolean",
    ]


def test_names_must_be_identifiers():
    data = grant(name="Grant Eligibility")
    data["facts"]["annual-income"] = data["facts"].pop("annual_income")
    found = problems(data)
    assert found[0].startswith("rb.yaml: name: String should match pattern '^[a-z][a-z0-9_]*$'")
    assert found[1].startswith("rb.yaml: fact 'annual-income': name: String should match pattern")


# ---- unknown facts ----

def test_unknown_fact_in_a_condition():
    data = grant()
    rule(data, "all_criteria_met")["when"]["all"][2] = {"fact": "resident_", "op": "==", "value": True}
    assert problems(data) == ["rb.yaml: rule 'all_criteria_met': when.all[2].fact: unknown fact 'resident_'"]


def test_unknown_fact_in_a_value():
    data = data_of(LOAN)
    rule(data, "debt_to_income")["value"] = {"div": [{"fact": "debt"}, {"fact": "annual_income"}]}
    assert problems(data) == ["rb.yaml: rule 'debt_to_income': value.div[0].fact: unknown fact 'debt'"]


def test_unknown_fact_in_a_template():
    data = grant()
    rule(data, "deny_minor")["explain"] = "the applicant is {agee}"
    rule(data, "deny_income")["explain"] = "income {annual_income:,}"
    rule(data, "deny_non_resident")["explain"] = "unbalanced {"
    assert problems(data) == [
        "rb.yaml: rule 'deny_minor': explain: unknown fact 'agee' in {agee}",
        "rb.yaml: rule 'deny_income': explain: placeholder {annual_income:,} must be a fact name in braces, like {age}",
        "rb.yaml: rule 'deny_non_resident': explain: Single '{' encountered in format string",
    ]


# ---- type mismatches ----

def test_comparing_a_boolean_fact_with_a_number():
    data = grant()
    rule(data, "deny_non_resident")["when"] = {"fact": "resident", "op": "==", "value": 0}
    assert problems(data) == [
        "rb.yaml: rule 'deny_non_resident': when: cannot compare boolean fact 'resident' with integer 0"]


def test_ordering_a_string_or_a_boolean():
    data = data_of(LOAN)
    rule(data, "decline_high_risk")["when"] = {"fact": "credit_band", "op": ">", "value": "fair"}
    rule(data, "refer_to_underwriter")["when"] = {"left": {"fact": "co_signer"}, "op": "<", "right": 1}
    assert problems(data) == [
        "rb.yaml: rule 'decline_high_risk': when: '>' orders numbers only: cannot order enum fact 'credit_band'"
        " and string \"fair\"",
        "rb.yaml: rule 'refer_to_underwriter': when: '<' orders numbers only: cannot order boolean fact"
        " 'co_signer' and integer 1",
    ]


def test_arithmetic_on_a_non_number():
    data = data_of(LOAN)
    rule(data, "debt_to_income")["value"] = {"div": [{"fact": "annual_debt"}, {"fact": "credit_band"}]}
    assert problems(data) == [
        "rb.yaml: rule 'debt_to_income': value.div[1]: arithmetic needs numbers, got enum fact 'credit_band'"]


def test_an_enum_compared_with_a_value_outside_its_values():
    data = data_of(LOAN)
    rule(data, "decline_high_risk")["when"] = {"fact": "risk", "op": "==", "value": "severe"}
    rule(data, "low_risk")["when"]["all"][1]["value"] = ["excellent", "goood"]
    assert problems(data) == [
        "rb.yaml: rule 'low_risk': when.all[1].value[1]: enum fact 'credit_band' has no value \"goood\""
        " (values: excellent, fair, good, poor)",
        "rb.yaml: rule 'decline_high_risk': when: enum fact 'risk' has no value \"severe\" (values: high, low, medium)",
    ]


def test_a_derive_value_of_another_type_than_the_derived_fact():
    data = data_of(LOAN)
    rule(data, "low_risk")["value"] = "lowest"
    rule(data, "affordability")["value"] = {"fact": "loan_amount"}
    rule(data, "debt_to_income")["value"] = "high"
    assert problems(data) == [
        "rb.yaml: rule 'debt_to_income': value: derives string \"high\", but derived fact 'dti' is a number",
        "rb.yaml: rule 'low_risk': value: derives string \"lowest\", not one of the enum's values (high, low, medium),"
        " but derived fact 'risk' is an enum",
        "rb.yaml: rule 'affordability': value: derives integer fact 'loan_amount', but derived fact 'affordable'"
        " is a boolean",
    ]


def test_an_integer_value_may_set_a_number_but_not_the_reverse():
    data = data_of(LOAN)
    data["derived"]["whole"] = {"type": "integer"}
    data["rules"].append({"name": "sum_up", "derive": "whole", "value": {"add": [{"fact": "loan_amount"}, 1]}})
    data["rules"].append({"name": "halve", "derive": "whole", "value": {"div": [{"fact": "loan_amount"}, 2]}})
    rule(data, "debt_to_income")["value"] = {"fact": "loan_amount"}
    assert problems(data) == [
        "rb.yaml: rule 'halve': value: derives number expression, but derived fact 'whole' is an integer"]


def test_a_default_of_the_wrong_type():
    data = data_of(LOAN)
    data["derived"]["risk"]["default"] = "unknown"
    data["derived"]["affordable"]["default"] = 0
    assert problems(data) == [
        "rb.yaml: fact 'risk': default: expected an enum, got string \"unknown\", not one of the enum's values"
        " (high, low, medium)",
        "rb.yaml: fact 'affordable': default: expected a boolean, got integer 0",
    ]


def test_keys_that_only_some_fact_types_take():
    data = grant()
    data["facts"]["resident"].update(min=0, values=["yes"])
    data["facts"]["age"].update(min=50, max=10, max_length=3)
    data["facts"]["status"] = {"type": "enum"}
    assert problems(data) == [
        "rb.yaml: fact 'age': min: 50 is above max 10",
        "rb.yaml: fact 'age': max_length: only string facts take max_length, this fact is an integer",
        "rb.yaml: fact 'resident': values: only an enum takes values, this fact is a boolean",
        "rb.yaml: fact 'resident': min: only integer and number facts take min, this fact is a boolean",
        "rb.yaml: fact 'status': values: missing: an enum lists its values",
    ]


# ---- names ----

def test_duplicate_fact_names_across_inputs_and_derived():
    data = grant()
    data["derived"]["age"] = {"type": "integer"}
    assert problems(data) == [
        "rb.yaml: fact 'age': name: declared both as an input fact and a derived fact (they share one namespace)"]


def test_duplicate_rule_names_across_rule_kinds():
    data = grant()
    rule(data, "deny_minor")["name"] = "adult"
    assert problems(data) == ["rb.yaml: rule 'adult': name: duplicate rule name (also rules[1];"
                              " rules of every kind share one namespace)"]


def test_duplicate_decisions_enum_values_and_blocks():
    data = grant(decisions=["permit", "deny", "permit"])
    data["constraints"][0]["blocks"] = ["permit", "permit"]
    assert problems(data) == [
        "rb.yaml: decisions[2]: duplicate decision 'permit'",
        "rb.yaml: rule 'no_second_grant': blocks[1]: duplicate decision 'permit'",
    ]


def test_a_derive_rule_must_set_a_declared_derived_fact():
    data = grant()
    rule(data, "adult")["derive"] = "age"
    rule(data, "income_within_threshold")["derive"] = "income_ok"
    assert problems(data) == [
        "rb.yaml: rule 'adult': derive: 'age' is an input fact; a rule may only derive a declared derived fact",
        "rb.yaml: rule 'income_within_threshold': derive: unknown derived fact 'income_ok' (declare it under derived)",
    ]


# ---- cycles ----

def test_a_cycle_among_derive_rules_is_named():
    data = grant()
    rule(data, "adult")["when"] = {"fact": "eligible", "op": "==", "value": True}
    assert problems(data) == ["rb.yaml: rule 'adult': derive: cycle: adult -> all_criteria_met -> adult"
                              " (each rule reads the fact the next one derives)"]


def test_a_rule_that_reads_its_own_fact_is_a_cycle():
    data = grant()
    rule(data, "adult")["when"] = {"any": [{"fact": "age", "op": ">=", "value": 18},
                                           {"fact": "is_adult", "op": "==", "value": True}]}
    assert problems(data) == ["rb.yaml: rule 'adult': derive: cycle: adult -> adult (each rule reads the fact the"
                              " next one derives)"]


# ---- decisions ----

def test_undeclared_decisions():
    data = grant(default_decision="reject")
    rule(data, "deny_minor")["decide"] = "refuse"
    rule(data, "no_second_grant")["blocks"] = ["grant"]
    assert problems(data) == [
        "rb.yaml: default_decision: undeclared decision 'reject' (decisions: permit, deny)",
        "rb.yaml: rule 'no_second_grant': blocks[0]: undeclared decision 'grant' (decisions: permit, deny)",
        "rb.yaml: rule 'deny_minor': decide: undeclared decision 'refuse' (decisions: permit, deny)",
    ]


def test_an_unreachable_decision():
    data = grant(decisions=["permit", "deny", "refer"])
    assert problems(data) == ["rb.yaml: decisions[2]: decision 'refer' is unreachable: no decision rule decides it"
                              " and it is not the deny posture's default_decision"]


def test_duplicate_priorities():
    data = grant()
    rule(data, "deny_income")["priority"] = 5
    assert problems(data) == ["rb.yaml: rule 'deny_income': priority: 5 is also the priority of rule 'deny_minor'"
                              " (priorities are unique)"]


def test_deny_posture_without_a_default_decision():
    data = grant()
    del data["default_decision"]
    assert problems(data) == [
        "rb.yaml: default_decision: missing: required when posture is deny (the default posture)"]


def test_a_default_decision_with_the_abstain_posture():
    data = grant(posture="abstain")
    assert problems(data) == [
        "rb.yaml: default_decision: only used with posture deny; remove it or set posture: deny"]


# ---- files ----

def test_bad_yaml(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\ndecisions: [a, b\n")
    with pytest.raises(RulebookError) as info:
        load_rulebook(path)
    (line,) = info.value.problems
    assert line.startswith(f"{path}: line 3, column 1: decisions: not valid YAML: ") and "\n" not in line


def test_a_key_given_twice_in_yaml(tmp_path):
    path = tmp_path / "twice.yaml"
    path.write_text("name: x\nfacts:\n  age: {type: integer}\n  age: {type: number}\n")
    with pytest.raises(RulebookError) as info:
        load_rulebook(path)
    assert info.value.problems == (f"{path}: line 4, column 3: facts.age: key given twice (first at line 3, column 3)",)


def test_a_top_level_that_is_not_a_mapping_and_a_missing_file(tmp_path):
    path = tmp_path / "list.yaml"
    path.write_text("- a\n- b\n")
    with pytest.raises(RulebookError, match="list.yaml: expected a mapping at the top level, got array"):
        load_rulebook(path)
    with pytest.raises(RulebookError, match="missing.yaml: cannot read the rulebook"):
        load_rulebook(tmp_path / "missing.yaml")


def test_every_semantic_problem_is_reported_at_once():
    data = grant(decisions=["permit", "deny", "refer"])
    rule(data, "adult")["when"]["fact"] = "agee"
    rule(data, "deny_income")["priority"] = 10
    rule(data, "deny_minor")["explain"] = "{nope}"
    found = problems(data, source="grant.yaml")
    assert len(found) == 4
    assert all(line.startswith("grant.yaml: ") for line in found)


def test_the_error_is_a_value_error():
    assert issubclass(RulebookError, ValueError)


def test_every_separate_cycle_is_reported_and_long_chains_load():
    chain = {"name": "chain", "decisions": ["ok"], "posture": "abstain", "facts": {"n": {"type": "integer"}},
             "derived": {f"d{i}": {"type": "integer"} for i in range(2000)},
             "rules": [{"name": "r0", "derive": "d0", "value": {"fact": "n"}}]
             + [{"name": f"r{i}", "derive": f"d{i}", "value": {"fact": f"d{i - 1}"}} for i in range(1, 2000)],
             "decision_rules": [{"name": "ok_rule", "decide": "ok", "priority": 1}]}
    assert parse_rulebook(chain).derived_fact("d1999").stratum == 2000
    chain["rules"][0]["value"] = {"fact": "d1"}  # d0 <-> d1: a cycle, and every later fact reads it
    chain["rules"].append({"name": "self_loop", "derive": "d1999", "value": {"fact": "d1999"}})
    assert problems(chain) == [
        "rb.yaml: rule 'r0': derive: cycle: r0 -> r1 -> r0 (each rule reads the fact the next one derives)",
        "rb.yaml: rule 'self_loop': derive: cycle: self_loop -> self_loop (each rule reads the fact the next one"
        " derives)",
    ]
