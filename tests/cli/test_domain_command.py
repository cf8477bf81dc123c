"""``proofgym domain init`` as a new user runs it: the example's script writes the CSV (examples/byod/make_data.py),
``domain init`` writes the folder, ``rules validate`` passes on it, and a run config naming the folder gives the
reward of a gold completion; bad data is one ``error:`` line per problem; ``--describe`` alone drafts the rulebook
with a (scripted) model."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest
from _scripted_model import INVALID, POLICY, VALID, ScriptedModel
from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.config import load_run_config
from proofgym.domains import DOMAINS, build_example, get_domain, gold_completion, load_domain

runner = CliRunner()
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "byod"
BRANCHES = ["deny_minor", "deny_new_resident", "deny_income", "approve_disability", "approve_retired_senior",
            "approve_low_income", "waitlist_moderate_income"]


@pytest.fixture
def registered():
    names: list[str] = []
    yield names
    for name in names:
        if name in DOMAINS:
            DOMAINS.unregister(name)


@pytest.fixture
def records(tmp_path):
    out = tmp_path / "records.csv"
    subprocess.run([sys.executable, str(EXAMPLE / "make_data.py"), "--out", str(out)], check=True,
                   capture_output=True)
    return out


def init(tmp_path, data, *extra):
    return runner.invoke(app, ["domain", "init", "housing", "--data", str(data), "--rules",
                               str(EXAMPLE / "rules.yaml"), "--describe", str(EXAMPLE / "rules.txt"),
                               "--out", str(tmp_path / "housing"), *extra])


def test_the_example_end_to_end(tmp_path, records, registered):
    result = init(tmp_path, records)
    assert result.exit_code == 0, result.output
    out = result.output.splitlines()
    assert out[0] == f"wrote {tmp_path / 'housing'}: domain.yaml, rulebook.yaml, schema.md"
    assert out[1] == f"read 300 records from {records}; 0 problems"
    assert "  applicant_id: not a fact: the id column (names records, never a fact)" in out
    assert "  employment_status: enum employed, retired, student, unemployed" in out
    assert "decisions: deny 129, approve 129, waitlist 42" in out
    assert [line.split(":")[0].strip() for line in out[out.index("by deciding rule:") + 1:-1]] == BRANCHES
    assert out[-1].startswith("split: ") and out[-1].endswith(" held out (stratified by deciding rule)")

    validated = runner.invoke(app, ["rules", "validate", str(tmp_path / "housing" / "rulebook.yaml")])
    assert validated.exit_code == 0 and validated.output.startswith("ok: housing"), validated.output

    config = tmp_path / "run.yaml"
    config.write_text("kind: run\nparser: {kind: json_block, decisions: [approve, waitlist, deny], "
                      "require_facts: true}\nverifier: {kind: rulebook, domain: ./housing}\n"
                      "reward: {graded_from: rule_mentions}\n", encoding="utf-8")
    registered.append("housing")
    reward = load_run_config(config).reward_function()
    domain = get_domain("housing")
    assert domain is load_domain(tmp_path / "housing")
    heldout = domain.split_records("heldout")
    assert {record.branch for record in heldout} == set(BRANCHES)
    rows = [build_example(domain, record, chat=True) for record in heldout]
    with reward:
        items = reward.score([row["prompt"] for row in rows], [gold_completion(domain, r) for r in heldout], rows)
    assert {item.outcome for item in items} == {"certified"}
    assert {item.reward for item in items} == {reward.shaper.bounds[1]}


def test_bad_data_is_one_error_line_per_problem_and_nothing_is_written(tmp_path, records):
    rows = list(csv.reader(records.open(encoding="utf-8")))
    rows[3][3] = "=CMD()"  # spreadsheet row 4, employment_status
    rows[7][1] = ""  # row 8, age
    rows[9][2] = "lots"  # row 10, income_pct_ami
    with records.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)
    result = init(tmp_path, records)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"error: {records}: row 4, column 'employment_status': '=CMD()' starts with '=', as a spreadsheet formula "
        f"does (formula injection); refused",
        f"error: {records}: row 8, column 'age': missing value (empty cell)",
        f"error: {records}: row 10, column 'income_pct_ami': 'lots' is text, but the column's other 299 values are "
        f"numbers (mixed types)",
    ]
    assert not (tmp_path / "housing").exists()


def test_a_column_named_like_a_rule_keyword_refuses_init(tmp_path, records):
    text = records.read_text(encoding="utf-8").replace("months_in_county", "when", 1)
    records.write_text(text, encoding="utf-8")
    result = init(tmp_path, records)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [f"error: {records}: row 1, column 6 'when': the rulebook language uses "
                                          f"'when' as a keyword; rename the column, e.g. 'when_value'"]


def test_describe_alone_needs_a_model(tmp_path, records):
    result = runner.invoke(app, ["domain", "init", "housing", "--data", str(records), "--describe",
                                 str(EXAMPLE / "rules.txt"), "--out", str(tmp_path / "housing")])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --describe without --rules drafts the rulebook with a model: give "
                                    "--model-url URL, or run 'proofgym rules draft")
    missing = runner.invoke(app, ["domain", "init", "housing", "--data", str(records)])
    assert missing.exit_code == 2 and "give --rules rules.yaml" in missing.stderr


def test_describe_alone_drafts_the_rulebook_with_repair_rounds(tmp_path, registered):
    records = get_domain("loan").generate(5, 200)
    data = tmp_path / "applicants.csv"
    with data.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["applicant_id", *records[0].facts])
        writer.writeheader()
        writer.writerows({"applicant_id": record.id, **record.facts} for record in records)
    policy = tmp_path / "policy.txt"
    policy.write_text(POLICY, encoding="utf-8")
    with ScriptedModel([INVALID, VALID]) as model:
        result = runner.invoke(app, ["domain", "init", "my_loans", "--data", str(data), "--describe", str(policy),
                                     "--model-url", model.url, "--out", str(tmp_path / "my_loans")])
    assert result.exit_code == 0, result.output
    out = result.output.splitlines()
    assert out[0].startswith("draft round 1: ") and out[0].endswith(" problem(s) sent back")
    assert out[1] == "draft round 2: the kernel accepts the draft"
    assert out[-1].startswith("rulebook.yaml is a model's DRAFT: review every rule")
    rulebook = tmp_path / "my_loans" / "rulebook.yaml"
    assert "# DRAFT (VALID per the kernel, after 2 round(s))" in rulebook.read_text(encoding="utf-8")
    assert runner.invoke(app, ["rules", "validate", str(rulebook)]).exit_code == 0
    registered.append("my_loans")
    domain = load_domain(tmp_path / "my_loans")
    assert set(domain.branches) <= {"deny_subprime", "refer_thin_file", "approve_prime", "(default)"}
    assert domain.spec.description == " ".join(POLICY.split())
