"""A domain brought as a folder: the kernel decides every record (no labels), the held-out split is stratified by
deciding rule with near-duplicates on one side, ``generate`` draws train records, and loading registers the domain.
The data is written by the example's own script (examples/byod/make_data.py) and the folder by ``init_domain``."""

import csv
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from proofgym.domains import (
    DOMAINS,
    CsvDataError,
    SplitPlan,
    build_example,
    export_dataset,
    get_domain,
    gold_completion,
    init_domain,
    load_domain,
    near_key,
)
from proofgym.rewards import DefaultRewardShaper, RewardFunction, ShaperConfig
from proofgym.rules import RulebookError
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.domains import RulebookVerifier

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "byod"


def make_data(tmp_path, rows=300, seed=0):
    out = tmp_path / "records.csv"
    subprocess.run([sys.executable, str(EXAMPLE / "make_data.py"), "--rows", str(rows), "--seed", str(seed),
                    "--out", str(out)], check=True, capture_output=True)
    return out


@pytest.fixture
def registered():
    """Names registered by a test, unregistered after it (the registry is the process's)."""
    names = []
    yield names
    for name in names:
        if name in DOMAINS:
            DOMAINS.unregister(name)


def init(tmp_path, data, name="housing", **kwargs):
    return init_domain(name, data, rules=EXAMPLE / "rules.yaml", description=(EXAMPLE / "rules.txt").read_text(),
                       out=tmp_path / name, **kwargs)


def test_init_writes_the_folder_and_the_kernel_decides_every_record(tmp_path, registered):
    summary = init(tmp_path, make_data(tmp_path))
    assert {p.name for p in summary.folder.iterdir()} == {"domain.yaml", "rulebook.yaml", "schema.md"}
    assert sum(summary.branches.values()) == summary.train + summary.heldout == 300
    assert set(summary.branches) == {"deny_minor", "deny_new_resident", "deny_income", "approve_disability",
                                     "approve_retired_senior", "approve_low_income", "waitlist_moderate_income"}
    domain = load_domain(summary.folder)
    registered.append(domain.name)
    assert get_domain("housing") is domain
    assert load_domain(summary.folder) is domain  # loading again: the registered one
    assert [r.id for r in domain.records[:2]] == ["A0000", "A0001"]  # the id column names records
    assert "applicant_id" not in domain.records[0].facts
    for record in domain.records:
        example = build_example(domain, record, chat=False)
        assert domain.branches[record.branch] == example["gold"]


def test_every_branch_is_on_both_sides_and_the_split_is_deterministic(tmp_path):
    summary = init(tmp_path, make_data(tmp_path, rows=70))  # 10 records per branch
    domain = load_domain(summary.folder, register=False)
    train, heldout = domain.split_records("train"), domain.split_records("heldout")
    assert {r.branch for r in train} == {r.branch for r in heldout} == set(domain.branches)
    assert 0.1 < len(heldout) / len(domain.records) < 0.35
    again = load_domain(summary.folder, register=False)
    assert [r.id for r in again.split_records("heldout")] == [r.id for r in heldout]
    other = init(tmp_path, make_data(tmp_path, rows=70), name="housing2", split_seed=7)
    reseeded = load_domain(other.folder, register=False)
    assert [r.id for r in reseeded.split_records("heldout")] != [r.id for r in heldout]


def test_near_keys_fold_case_and_spaces_and_round_numbers():
    assert near_key({"x": 52310.0, "s": "Retired "}) == near_key({"s": "retired", "x": 52340})
    assert near_key({"x": 52310.0}) != near_key({"x": 52510.0})
    assert near_key({"b": True}) != near_key({"b": 1})


def test_a_branch_of_two_records_is_on_both_sides():
    plan = SplitPlan(0.2, seed=0)
    items = [("rare", {"x": 1}), ("rare", {"x": 500})] + [("common", {"x": i}) for i in range(100, 200)]
    keys = [(branch, near_key(facts)) for branch, facts in items]
    for branch, key in keys:
        plan.add(branch, key)
    sides = [plan.side(branch, key) for branch, key in keys]
    assert sorted(sides[:2]) == ["heldout", "train"]
    assert "heldout" in sides[2:] and "train" in sides[2:]


def test_near_duplicates_stay_on_one_side(tmp_path):
    data = make_data(tmp_path, rows=140)
    with data.open(encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header, body = rows[0], rows[1:]
    extra = []
    for i, row in enumerate(body):  # a copy of every row under another id, spelled differently
        copy = list(row)
        copy[0] = f"B{i:04d}"
        copy[2] = f" {row[2]} "  # income_pct_ami
        copy[4] = row[4].upper()  # has_disability
        extra.append(copy)
    with data.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows([header, *body, *extra])
    domain = load_domain(init(tmp_path, data).folder, register=False)
    side = dict(zip((r.id for r in domain.records), domain.sides))
    assert len(side) == 280
    assert all(side[f"A{i:04d}"] == side[f"B{i:04d}"] for i in range(140))
    assert {r.branch for r in domain.split_records("heldout")} == set(domain.branches)


def test_generate_draws_train_records_balanced_over_decisions(tmp_path):
    domain = load_domain(init(tmp_path, make_data(tmp_path)).folder, register=False)
    train_ids = {r.id for r in domain.split_records("train")}
    drawn = domain.generate(3, 60)
    assert {r.id for r in drawn} <= train_ids
    assert drawn == domain.generate(3, 60) and drawn[:10] == domain.generate(3, 10)
    decisions = Counter(domain.branches[r.branch] for r in drawn)
    assert decisions == {"approve": 20, "deny": 20, "waitlist": 20}


def test_a_gold_completion_earns_the_top_reward(tmp_path):
    domain = load_domain(init(tmp_path, make_data(tmp_path, rows=70)).folder, register=False)
    runtime = VerificationRuntime(RulebookVerifier(domain.rulebook_path), RuntimeConfig())
    shaper = DefaultRewardShaper(ShaperConfig(graded_from="rule_mentions"))
    with RewardFunction(domain.spec.parser(require_facts=True), runtime, shaper) as reward:
        rows = [build_example(domain, r, chat=True) for r in domain.split_records("heldout")]
        items = reward.score([row["prompt"] for row in rows],
                             [gold_completion(domain, r) for r in domain.split_records("heldout")], rows)
    assert [item.outcome for item in items] == ["certified"] * len(rows)
    assert all(item.reward == shaper.bounds[1] for item in items)


def test_a_rulebook_fact_the_csv_lacks_or_types_otherwise_is_one_line_each(tmp_path):
    data = make_data(tmp_path, rows=20)
    rules = tmp_path / "rules.yaml"
    text = (EXAMPLE / "rules.yaml").read_text()
    text = text.replace('  age: {description: "the applicant\'s age in whole years"}',
                        '  age: {type: boolean}\n  pets: {type: integer}')
    rules.write_text(text)
    with pytest.raises(RulebookError) as info:
        init_domain("housing", data, rules=rules, out=tmp_path / "out")
    assert list(info.value.problems) == [
        f"{rules}: facts.age: type 'boolean', but the CSV column holds integer values",
        f"{rules}: facts.pets: the CSV {data} has no column 'pets'",
    ]
    assert not (tmp_path / "out").exists()


def test_a_record_the_kernel_cannot_decide_is_one_line(tmp_path):
    data = make_data(tmp_path, rows=20)
    with data.open("a", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerow(["Z0001", 40, 5000, "employed", "no", 12])  # income_pct_ami max 1,000
    with pytest.raises(CsvDataError) as info:
        init(tmp_path, data)
    assert len(info.value.problems) == 1
    assert info.value.problems[0].startswith(f"{data}: row 22: the rulebook certifies no decision: the fact gate "
                                             f"refused income_pct_ami")
    assert not (tmp_path / "housing").exists()


def test_another_folder_of_a_registered_name_is_refused(tmp_path, registered):
    first = init(tmp_path / "a", make_data(tmp_path))
    registered.append("housing")
    load_domain(first.folder)
    second = init(tmp_path / "b", make_data(tmp_path))
    with pytest.raises(ValueError, match="a domain 'housing' is already registered"):
        load_domain(second.folder)


def test_the_streamed_export_writes_what_the_loaded_domain_holds(tmp_path):
    folder = init(tmp_path, make_data(tmp_path, rows=140)).folder
    counts = export_dataset(folder, tmp_path / "dataset", chat=True)
    domain = load_domain(folder, register=False)
    for side in ("train", "heldout"):
        lines = (tmp_path / "dataset" / f"{side}.jsonl").read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines]
        expected = [build_example(domain, record, chat=True) for record in domain.split_records(side)]
        assert rows == expected
        assert counts.splits[side] == len(rows)
    assert sum(counts.decisions.values()) == 140
    assert all(sides["train"] and sides["heldout"] for sides in counts.branches.values())
