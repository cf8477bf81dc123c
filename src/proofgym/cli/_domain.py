"""``proofgym domain``: bring your own domain, a CSV of records (no labels) and a rulebook, as a domain folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console

from proofgym.cli._errors import fail, shown

domain_app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                         help="Bring your own domain: a CSV of records and a rulebook, as a domain folder.")
console = Console()


@domain_app.command()
def init(
    name: str = typer.Argument(..., help="The domain's name (lower case, digits and _), e.g. housing."),
    data: Path = typer.Option(..., "--data", help="CSV of records: a header row, one record a row, no labels."),
    rules: Optional[Path] = typer.Option(None, "--rules", help="Rulebook YAML (a fact without a type gets the "
                                                               "type inferred from the CSV)."),
    describe: Optional[Path] = typer.Option(None, "--describe", help="Text file: the policy in plain English (the "
                                                                     "paragraph the model reads). With --rules, "
                                                                     "the description; alone, the rules to draft."),
    out: Optional[Path] = typer.Option(None, "--out", help="The folder to write (default: ./NAME)."),
    id_column: Optional[str] = typer.Option(None, "--id-column", help="The column naming records (default: one "
                                                                      "named id or ending in _id, if any)."),
    heldout_share: float = typer.Option(0.2, "--heldout-share", min=0.0, max=0.9,
                                        help="Share of records held out, stratified by deciding rule."),
    split_seed: int = typer.Option(0, "--split-seed", help="Seed of the train / held-out split."),
    force: bool = typer.Option(False, "--force", help="Overwrite the folder's domain files."),
    model_url: Optional[str] = typer.Option(None, "--model-url", help="With --describe alone: the OpenAI-compatible "
                                                                      "server that drafts the rulebook."),
    model: str = typer.Option("default", "--model", help="The drafting model's name on that server."),
    rounds: int = typer.Option(3, "--rounds", min=1, max=10, help="Drafting: model answers in all."),
) -> None:
    """Write a domain folder: domain.yaml, rulebook.yaml (its facts: the schema inferred from the CSV) and
    schema.md; print the columns, the records read and the kernel's decisions by deciding rule. With --describe
    alone the rulebook is drafted by a model (as `proofgym rules draft` does): review it before training."""
    import re

    from proofgym.domains import CsvDataError, init_domain
    from proofgym.rules import RulebookError

    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        fail(f"NAME: {name!r} is not a domain name (lower case letters, digits and _, starting with a letter)")
    description = None
    if describe is not None:
        try:
            description = describe.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            fail(f"{describe}: cannot read: {exc}")
        if not description.strip():
            fail(f"{describe}: empty (expected the policy in plain English)")
    if rules is None:
        if describe is None:
            fail("give --rules rules.yaml (a rulebook), or --describe rules.txt to draft one from plain English")
        if model_url is None:
            fail(f"--describe without --rules drafts the rulebook with a model: give --model-url URL, or run "
                 f"'proofgym rules draft --describe {describe} --data {data} --model-url URL', review the draft "
                 f"and give it here with --rules")
        assert description is not None  # read above
        drafted = rules = _draft(name, description, data, id_column, model_url, model, rounds)
    else:
        drafted = None
    try:
        summary = init_domain(name, data, rules=rules, description=description, out=out, id_column=id_column,
                              heldout_share=heldout_share, split_seed=split_seed, force=force)
    except (CsvDataError, RulebookError) as exc:
        fail(exc, code=1)
    except ValueError as exc:
        fail(exc)
    finally:
        if drafted is not None:
            drafted.unlink(missing_ok=True)
    _print_summary(summary)
    if drafted is not None:
        console.print(f"rulebook.yaml is a model's DRAFT: review every rule; `proofgym rules validate "
                      f"{shown(summary.folder / 'rulebook.yaml')}` must pass before it is used", highlight=False,
                      soft_wrap=True)


def _draft(name: str, policy: str, data: Path, id_column: Optional[str], model_url: str, model: str,
           rounds: int) -> Path:
    """A rulebook drafted from ``policy`` over the CSV's inferred facts, in a temporary file; the draft's problems
    (one a line, exit 1) when the model never gives a valid one."""
    import tempfile

    from proofgym.cli._rules import drafting_inputs
    from proofgym.domains import draft_rulebook
    from proofgym.http import ChatClient

    url, schema = drafting_inputs(model_url, data, id_column)
    result = draft_rulebook(policy, schema.facts_section(), client=ChatClient(url), model=model, rounds=rounds,
                            name=name, source="rulebook.yaml")
    for done in result.rounds:
        state = f"{len(done.problems)} problem(s) sent back" if done.problems else "the kernel accepts the draft"
        console.print(f"draft round {done.number}: {state}", highlight=False, soft_wrap=True)
    if not result.ok:
        fail(result.error, code=1)
    handle = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False, encoding="utf-8")
    with handle:
        handle.write(result.yaml_text([f"drafted by `proofgym domain init` from the policy and {data.name} with "
                                       f"model {model!r}"]))
    return Path(handle.name)


def _print_summary(summary: Any) -> None:
    schema = summary.schema
    console.print(f"wrote {shown(summary.folder)}: domain.yaml, rulebook.yaml, schema.md", highlight=False,
                  soft_wrap=True)
    console.print(f"read {schema.rows} records from {shown(schema.source)}; {schema.problem_count} problems",
                  highlight=False, soft_wrap=True)
    for column in schema.columns:
        if column.type is None:
            what = f"not a fact: {column.flag}"
        elif column.type in ("integer", "number"):
            what = f"{column.type} {column.min:g} .. {column.max:g}"
        elif column.type == "enum":
            what = f"enum {', '.join(column.values)}"
        else:
            what = column.type
        declared = summary.fact_types.get(column.name)
        if declared is None:
            used = "" if column.type is None else " (not in the rulebook: not a fact)"
        else:
            used = "" if declared == column.type else f" (the rulebook's fact: {declared})"
        console.print(f"  {shown(column.name)}: {shown(what)}{used}", highlight=False, soft_wrap=True)
    decisions = ", ".join(f"{decision} {count}" for decision, count in summary.decisions.items())
    console.print(f"decisions: {shown(decisions)}", highlight=False, soft_wrap=True)
    console.print("by deciding rule:", highlight=False, soft_wrap=True)
    for branch, count in summary.branches.items():
        console.print(f"  {shown(branch)}: {count}", highlight=False, soft_wrap=True)
    console.print(f"split: {summary.train} train, {summary.heldout} held out (stratified by deciding rule)",
                  highlight=False, soft_wrap=True)
