import json

from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.domains import get_domain

runner = CliRunner()
FACTS = {"age": 17, "annual_income": 21000, "resident": True, "has_active_grant": False}


def facts_file(tmp_path, facts):
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(facts))
    return str(path)


def test_validate_shipped_domains_by_name_and_path():
    for name in ("grant_eligibility", "loan"):
        for args in (["--domain", name], [name], [str(get_domain(name).rulebook_path)]):
            result = runner.invoke(app, ["rules", "validate", *args])
            assert result.exit_code == 0, result.output
            assert result.output.startswith("ok:")


def test_validate_reports_problems_and_exits_1(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\ndecisions: [yes]\nposture: deny\nfacts: {}\nbogus: 1\n")
    result = runner.invoke(app, ["rules", "validate", str(path)])
    assert result.exit_code == 1
    assert "bogus" in result.output and str(path) in "".join(result.output.split())


def test_query_json_has_the_report_keys(tmp_path):
    result = runner.invoke(app, ["rules", "query", "--domain", "grant_eligibility",
                                 "--facts", facts_file(tmp_path, FACTS), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert {"outcome", "decision", "proof_checked", "rejected_facts", "symbolic_trace"} <= report.keys()
    assert report["outcome"] == "certified" and report["decision"] == "deny" and report["proof_checked"] is True


def test_query_shows_rejected_facts(tmp_path):
    result = runner.invoke(app, ["rules", "query", "grant_eligibility", "--facts",
                                 facts_file(tmp_path, {**FACTS, "age": -3})])
    assert result.exit_code == 0, result.output
    assert "refuted" in result.output and "rejected" in result.output and "age" in result.output


def test_query_table(tmp_path):
    result = runner.invoke(app, ["rules", "query", "grant_eligibility", "--facts", facts_file(tmp_path, FACTS)])
    assert result.exit_code == 0 and "deciding rules" in result.output


def test_schema_is_json():
    result = runner.invoke(app, ["rules", "schema"])
    assert result.exit_code == 0 and json.loads(result.output)["type"] == "object"
