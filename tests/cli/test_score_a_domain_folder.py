"""``proofgym score --config run.yaml`` where the run config names a domain folder by a path relative to itself:
the folder's gold completions are certified and right, as a new user scores them."""

import json

import pytest
from _byod import byod_domain, forget_domain
from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.domains import build_example, gold_completion, resolve_domain

runner = CliRunner()


@pytest.fixture(scope="module")
def housing(tmp_path_factory):
    folder = byod_domain(tmp_path_factory.mktemp("byod"))
    yield folder
    forget_domain()


def test_score_certifies_the_folders_gold_completions(housing, tmp_path, monkeypatch):
    config = housing.parent / "run.yaml"
    config.write_text("kind: run\nname: housing\n"
                      "parser: {kind: json_block, decisions: [approve, waitlist, deny], require_facts: true}\n"
                      "verifier: {kind: rulebook, domain: ./housing}\n")
    domain = resolve_domain(str(housing))
    completions = tmp_path / "completions.jsonl"
    with completions.open("w") as out:
        for record in domain.split_records("heldout")[:6]:
            row = build_example(domain, record, chat=False)
            out.write(json.dumps({"completion": gold_completion(domain, record), "gold": row["gold"],
                                  "source_facts": row["source_facts"], "id": record.id}) + "\n")
    monkeypatch.chdir(tmp_path)  # the folder is found from the config file, not the working directory
    result = runner.invoke(app, ["score", "--config", str(config), "--completions", str(completions), "--json"])
    assert result.exit_code == 0, result.output
    items = [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]
    assert len(items) == 6
    assert all(item["outcome"] == "certified" and item["components"]["correct"] == 1.0 for item in items)
