"""The content hash enters the verifier's version: equal content must hash equal, any semantic change must not."""

import copy

import pytest
import yaml

from proofgym.rules import load_rulebook, parse_rulebook

from kernel_helpers import GRANT, LOAN, data_of


def digest(data):
    return parse_rulebook(data, source="anything.yaml").content_hash


def test_the_hash_ignores_the_source_key_order_whitespace_and_comments(tmp_path):
    original = load_rulebook(GRANT)
    reordered = {key: value for key, value in reversed(list(data_of(GRANT).items()))}
    reordered["facts"] = dict(reversed(list(reordered["facts"].items())))
    reordered["derived"] = dict(reversed(list(reordered["derived"].items())))
    reordered["decision_rules"] = list(reversed(reordered["decision_rules"]))  # sorted by priority anyway
    reordered["rules"] = [dict(reversed(list(r.items()))) for r in reordered["rules"]]
    path = tmp_path / "elsewhere.yaml"
    path.write_text("# another comment\n" + yaml.safe_dump(reordered, sort_keys=False, indent=4, width=200))
    assert load_rulebook(path).content_hash == original.content_hash == digest(data_of(GRANT))
    assert len(original.content_hash) == 64 and int(original.content_hash, 16) >= 0


def test_the_order_of_derive_rules_in_different_strata_does_not_matter():
    data = data_of(GRANT)
    data["rules"] = data["rules"][1:] + data["rules"][:1]  # all_criteria_met (stratum 2) moved last
    assert digest(data) == digest(data_of(GRANT))


def _change(path, mutate):
    data = data_of(path)
    mutate(data)
    return data


SEMANTIC_CHANGES = {
    "threshold": lambda d: d["rules"][2]["when"].update(value=30001),
    "operator": lambda d: d["rules"][1]["when"].update(op=">"),
    "literal type": lambda d: d["rules"][1]["when"].update(value=18.0),
    "explanation": lambda d: d["rules"][1].update(explain="adult"),
    "priority": lambda d: d["decision_rules"][0].update(priority=11),
    "decision": lambda d: d["decision_rules"][1].update(decide="permit"),
    "posture default": lambda d: d.update(default_decision="permit"),
    "min_confidence": lambda d: d.update(min_confidence=0.81),
    "fact bound": lambda d: d["facts"]["age"].update(max=131),
    "fact required": lambda d: d["facts"]["resident"].update(required=False),
    "fact confidence": lambda d: d["facts"]["age"].update(min_confidence=0.9),
    "new fact": lambda d: d["facts"].update(nickname={"type": "string", "required": False}),
    "derived default": lambda d: d["derived"]["eligible"].pop("default"),
    "constraint blocks": lambda d: d["constraints"][0].pop("blocks"),
    "rule name": lambda d: d["rules"][1].update(name="grown_up"),
    "same-stratum order": lambda d: d["rules"].insert(1, d["rules"].pop(2)),
}


@pytest.mark.parametrize("change", sorted(SEMANTIC_CHANGES))
def test_any_semantic_change_changes_the_hash(change):
    assert digest(_change(GRANT, SEMANTIC_CHANGES[change])) != digest(data_of(GRANT))


def test_different_rulebooks_and_arithmetic_changes_hash_differently():
    loan = data_of(LOAN)
    swapped = copy.deepcopy(loan)
    swapped["rules"][0]["value"] = {"div": [{"fact": "annual_income"}, {"fact": "annual_debt"}]}
    assert len({digest(loan), digest(swapped), digest(data_of(GRANT))}) == 3


def test_parsing_does_not_mutate_its_input():
    data = data_of(LOAN)
    before = copy.deepcopy(data)
    parse_rulebook(data)
    assert data == before
