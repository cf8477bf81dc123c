"""``proofgym demo --domain ./my_domain``: the tiny-model demo on a domain folder (``proofgym domain init``'s): its
train split trains, its held-out split is scored per deciding rule, the prompt is the record's facts on one line."""

import json

import pytest
from _byod import byod_domain, forget_domain
from typer.testing import CliRunner

pytest.importorskip("torch")

from proofgym.cli import app  # noqa: E402
from proofgym.domains import gold_decision, near_key, resolve_domain  # noqa: E402
from proofgym.training import DemoSettings  # noqa: E402
from proofgym.training._demo_task import FolderDemoTask, compact_prompt  # noqa: E402

runner = CliRunner()


@pytest.fixture(scope="module")
def housing(tmp_path_factory):
    folder = byod_domain(tmp_path_factory.mktemp("byod"))
    yield folder
    forget_domain()


def test_the_rows_are_the_folders_splits_with_the_kernels_gold(housing):
    domain = resolve_domain(str(housing))
    task = FolderDemoTask(domain, vary=False)
    heldout = task.heldout_rows(10_000)
    train = task.train_rows(0, 10_000, contrast=False, exclude=heldout)
    assert {row["id"] for row in heldout} == {record.id for record in domain.split_records("heldout")}
    assert {row["id"] for row in train} == {record.id for record in domain.split_records("train")}
    record = domain.split_records("train")[0]
    row = next(row for row in train if row["id"] == record.id)
    assert row["branch"] == record.branch and row["gold"] == domain.branches[record.branch]
    assert row["prompt"].startswith("housing: age ")
    assert f"income_pct_ami {record.facts['income_pct_ami']}," in row["prompt"]
    first = domain.split_records("heldout")[0]
    shown = FolderDemoTask(domain, vary=False, show_derived=True).heldout_rows(1)[0]
    assert shown["id"] == first.id
    # show_derived: the record's facts, then what the rulebook derives from them (whether the applicant is a senior)
    assert shown["prompt"].startswith(compact_prompt("housing", first.facts)[:-1] + "; derived: is_senior ")
    stated = shown["prompt"].rsplit("is_senior ", 1)[1].rstrip(".")
    assert stated == ("true" if first.facts["age"] >= 60 else "false")
    # every deciding rule with a held-out record is a branch the goal reads, in the rulebook's order
    assert list(task.branch_labels) == [b for b in domain.branches if b in {r["branch"] for r in heldout}]
    assert task.missing_branches == [b for b in domain.branches if b not in task.branch_labels]
    capped = task.heldout_rows(len(task.branch_labels))  # a cap keeps one row of each branch
    assert {row["branch"] for row in capped} == set(task.branch_labels)
    assert task.run_config().parser.decisions == list(domain.spec.decisions)


def test_variants_fill_the_training_rows_labelled_by_the_kernel_and_away_from_the_held_out_rows(housing):
    domain = resolve_domain(str(housing))
    task = FolderDemoTask(domain)
    heldout = task.heldout_rows(10_000)
    real = FolderDemoTask(domain, vary=False).train_rows(0, 10_000, contrast=False, exclude=heldout)
    rows = task.train_rows(0, 2_000, contrast=False, exclude=heldout)
    assert len(rows) == 2_000 and {row["id"] for row in real} <= {row["id"] for row in rows}
    variants = [row for row in rows if "-variant" in row["id"]]
    assert len(variants) == 2_000 - len(real)
    held = {near_key(row["source_facts"]) for row in heldout}
    facts = [json.dumps(row["source_facts"], sort_keys=True) for row in rows]
    assert len(set(facts)) == len(facts)  # no case twice
    for row in variants:
        assert near_key(row["source_facts"]) not in held
        assert set(row["source_facts"]) == set(domain.spec.facts)
        assert row["gold"] == gold_decision(domain, row["source_facts"])
        assert domain.branches[row["branch"]] == row["gold"]
        assert row["prompt"] == compact_prompt("housing", row["source_facts"])
    assert {row["branch"] for row in variants} == set(domain.branches)
    assert task.train_rows(0, 2_000, contrast=False, exclude=heldout) == rows  # the same for the same seed


@pytest.mark.slow
def test_quick_demo_on_a_domain_folder_reports_its_deciding_rules(housing, tmp_path):
    out = tmp_path / "demo"
    result = runner.invoke(app, ["demo", "--quick", "--domain", str(housing), "--out", str(out),
                                 "--cache-dir", str(tmp_path / "cache")])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "learns the housing rules" in text and "held-out decision accuracy per rule branch" in text
    task = FolderDemoTask(resolve_domain(str(housing)))
    for branch in task.branch_labels:
        assert branch in text
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["heldout"]["trained"]["per_branch"]) == set(task.branch_labels)
    assert summary["heldout"]["trained"]["n"] == min(len(task.heldout_rows(10_000)), DemoSettings.quick().heldout_rows)

    from proofgym.traces import TraceStore

    with TraceStore(out / "traces.db", create=False) as store:
        [run] = [r for r in store.list_runs() if r.run_id == summary["run_id"]]
        assert run.kind == "demo" and run.env_name == "housing" and run.status == "ok"


def test_a_folder_that_is_not_a_domain_is_one_line(tmp_path):
    result = runner.invoke(app, ["demo", "--quick", "--domain", str(tmp_path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "no domain.yaml" in " ".join(result.output.split())
