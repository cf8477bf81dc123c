"""``proofgym rules coverage`` and ``proofgym rules draft`` as a user runs them: a CSV of the loan domain's generated
records (written with the csv module, as an export would be), a scripted model server on loopback for the draft."""

from __future__ import annotations

import csv
import json
import re

import pytest
from _scripted_model import INVALID, POLICY, VALID, ScriptedModel
from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.domains import get_domain

runner = CliRunner()


@pytest.fixture
def loan_csv(tmp_path):
    records = get_domain("loan").generate(5, 300)
    path = tmp_path / "applicants.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["applicant_id", *records[0].facts])
        writer.writeheader()
        for record in records:
            writer.writerow({"applicant_id": record.id, **record.facts})
    return path


@pytest.fixture
def policy(tmp_path):
    path = tmp_path / "policy.txt"
    path.write_text(POLICY, encoding="utf-8")
    return path


def lines(output: str) -> list[str]:
    return output.splitlines()


def test_coverage_of_a_shipped_rulebook_on_a_csv(loan_csv):
    result = runner.invoke(app, ["rules", "coverage", "loan", "--data", str(loan_csv), "--id-column", "applicant_id"])
    assert result.exit_code == 0, result.output
    assert "coverage of loan on 300 of 300 records" in result.output
    assert any(line.startswith("decisions: approve ") for line in lines(result.output))
    assert any("decides by priority" in line for line in lines(result.output))

    as_json = runner.invoke(app, ["rules", "coverage", "--domain", "loan", "--data", str(loan_csv), "--json"])
    assert as_json.exit_code == 0, as_json.output
    report = json.loads(as_json.output)
    assert report["records"] == 300 and sum(report["decisions"].values()) == 300
    assert {rule["name"] for rule in report["rules"]} >= {"approve_prime", "applicant_is_adult"}


def test_coverage_refuses_bad_data_one_line_per_problem_with_row_and_column(loan_csv):
    rows = loan_csv.read_text(encoding="utf-8").splitlines()
    cells = rows[3].split(",")
    cells[3] = "=CMD()"  # credit_score of the record on spreadsheet row 4
    rows[3] = ",".join(cells)
    loan_csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["rules", "coverage", "loan", "--data", str(loan_csv)])
    assert result.exit_code == 1
    errors = [line for line in lines(result.output) if line.startswith("error:")]
    assert len(errors) == 1
    assert "row 4, column 'credit_score'" in errors[0] and "formula" in errors[0]


def test_draft_repairs_with_the_kernel_s_problems_then_reports_coverage_and_the_draft_validates(
        tmp_path, loan_csv, policy):
    out = tmp_path / "rulebook.yaml"
    with ScriptedModel([INVALID, VALID]) as model:
        result = runner.invoke(app, ["rules", "draft", "--describe", str(policy), "--data", str(loan_csv),
                                     "--id-column", "applicant_id", "--model-url", model.url, "--model", "scripted",
                                     "--rounds", "3", "--out", str(out), "--name", "my_loans",
                                     "--max-tokens", "2048"])
    assert result.exit_code == 0, result.output
    output = lines(result.output)
    assert output[0].startswith(f"{loan_csv}: 300 records; facts: applicant_age (integer), ")
    assert output[0].endswith("; left out: applicant_id (the id column (names records, never a fact))")
    assert re.match(r"round 1: the kernel found \d+ problem\(s\), sent back to the model; first: ", output[1])
    assert output[1].split("first: ")[1].startswith(
        f"{out}: rule 'approve_high_income': when.fact: unknown fact 'income'")
    assert output[2] == "round 2: the kernel accepts the draft"
    assert [request["max_tokens"] for request in model.requests] == [2048, 2048]
    assert len(model.requests) == 2 and output[1].split("first: ")[1] in model.requests[1]["messages"][-1]["content"]
    assert "! decision rule 'refer_ancient_applicant' never fires on the 300 evaluated records" in output
    assert any("record(s) no decision rule applies to get the default 'deny'" in line for line in output)
    assert output[-1] == f"draft written to {out}: review every rule; `proofgym rules validate {out}` must pass " \
                         "before it is used"
    assert "# DRAFT (VALID per the kernel, after 2 round(s))" in out.read_text(encoding="utf-8")

    validated = runner.invoke(app, ["rules", "validate", str(out)])
    assert validated.exit_code == 0, validated.output
    assert validated.output.startswith("ok: my_loans")


def test_draft_that_never_validates_is_one_error_line_and_the_last_draft_is_kept(tmp_path, loan_csv, policy):
    out = tmp_path / "rulebook.yaml"
    with ScriptedModel([INVALID]) as model:
        result = runner.invoke(app, ["rules", "draft", "--describe", str(policy), "--data", str(loan_csv),
                                     "--model-url", model.url, "--rounds", "2", "--out", str(out)])
    assert result.exit_code == 1
    errors = [line for line in lines(result.output) if line.startswith("error:")]
    assert len(errors) == 1
    assert errors[0].startswith(f"error: no valid rulebook after 2 round(s); the last draft's first problem: {out}: "
                                "rule 'approve_high_income': when.fact: unknown fact 'income' (and 1 more)")
    assert errors[0].endswith(f"; the last draft is in {out} for review")
    assert "# DRAFT (INVALID: the kernel rejects it, after 2 round(s))" in out.read_text(encoding="utf-8")
    assert runner.invoke(app, ["rules", "validate", str(out)]).exit_code == 1


def test_draft_will_not_overwrite_a_file_nor_read_a_policy_that_is_not_text(tmp_path, loan_csv, policy):
    out = tmp_path / "rulebook.yaml"
    out.write_text("reviewed: true\n", encoding="utf-8")
    result = runner.invoke(app, ["rules", "draft", "--describe", str(policy), "--data", str(loan_csv),
                                 "--model-url", "http://127.0.0.1:9/v1", "--out", str(out)])
    assert result.exit_code == 2 and result.output.startswith(f"error: --out: {out} exists; pass --force")
    assert out.read_text(encoding="utf-8") == "reviewed: true\n"

    policy.write_bytes(b"deny \xff everyone")
    result = runner.invoke(app, ["rules", "draft", "--describe", str(policy), "--data", str(loan_csv),
                                 "--model-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "new.yaml")])
    assert result.exit_code == 2 and result.output.strip() == f"error: {policy}: byte 5: not UTF-8 text"


def test_the_example_domain_from_its_plain_english_policy_to_a_domain_folder(tmp_path):
    """examples/byod as a new user without a rulebook: its script writes the CSV, a (scripted) model drafts from
    rules.txt (first naming a column the CSV lacks, then a rulebook with a waitlist rule too narrow and a rule that
    never fires), the coverage report says so, and the reviewed draft makes the domain folder."""
    import subprocess
    import sys
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "examples" / "byod"
    data = tmp_path / "records.csv"
    subprocess.run([sys.executable, str(example / "make_data.py"), "--rows", "300", "--out", str(data)], check=True,
                   capture_output=True)
    rules = (example / "rules.yaml").read_text(encoding="utf-8")
    misspelled = rules.replace("{fact: age, op: \">=\", value: 60}", "{fact: age_years, op: \">=\", value: 60}")
    narrow = rules.replace(
        'when: {fact: income_pct_ami, op: "<", value: 100}',
        'when: {all: [{fact: income_pct_ami, op: "<", value: 100}, '
        '{fact: employment_status, op: "==", value: employed}]}',
    ) + """  - name: approve_centenarian
    decide: approve
    priority: 40
    when: {fact: age, op: ">", value: 150}
    explain: "the applicant is {age}"
"""
    assert misspelled != rules and "employment_status, op: \"==\", value: employed" in narrow
    out = tmp_path / "draft.yaml"
    with ScriptedModel([misspelled, f"```yaml\n{narrow}```"]) as model:
        result = runner.invoke(app, ["rules", "draft", "--describe", str(example / "rules.txt"), "--data", str(data),
                                     "--model-url", model.url, "--out", str(out), "--name", "housing"])
    assert result.exit_code == 0, result.output
    output = lines(result.output)
    assert "unknown fact 'age_years'" in output[1] and output[2] == "round 2: the kernel accepts the draft"
    assert "! decision rule 'approve_centenarian' never fires on the 300 evaluated records" in output
    assert any(re.search(r"^! \d+ record\(s\) no decision rule applies to get the default 'deny'", line)
               for line in output)
    assert runner.invoke(app, ["rules", "validate", str(out)]).exit_code == 0

    folder = tmp_path / "housing"
    made = runner.invoke(app, ["domain", "init", "housing", "--data", str(data), "--rules", str(out),
                               "--out", str(folder)])
    assert made.exit_code == 0, made.output
    assert (folder / "domain.yaml").is_file() and (folder / "rulebook.yaml").is_file()


def test_draft_reads_a_bounded_policy_and_refuses_a_longer_one(tmp_path, loan_csv, policy):
    policy.write_text("Deny everyone. " * 5000, encoding="utf-8")
    result = runner.invoke(app, ["rules", "draft", "--describe", str(policy), "--data", str(loan_csv),
                                 "--model-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "new.yaml")])
    assert result.exit_code == 2
    assert result.output.strip() == f"error: {policy}: the policy text is longer than 65536 bytes"
    assert not (tmp_path / "new.yaml").exists()


def test_coverage_of_a_rulebook_whose_facts_the_csv_lacks_names_each_missing_column(loan_csv):
    result = runner.invoke(app, ["rules", "coverage", "grant_eligibility", "--data", str(loan_csv)])
    assert result.exit_code == 1
    errors = [line for line in lines(result.output) if line.startswith("error:")]
    assert errors and len(errors) == len(result.output.splitlines())
    assert all(line.startswith(f"error: {loan_csv}: row 1: no column ") for line in errors)
    assert any("'resident'" in line for line in errors)
