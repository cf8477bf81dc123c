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
) -> None:
    """Write a domain folder: domain.yaml, rulebook.yaml (its facts: the schema inferred from the CSV) and
    schema.md; print the columns, the records read and the kernel's decisions by deciding rule."""
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
        fail(f"--describe without --rules drafts the rulebook: run 'proofgym rules draft --describe {describe} "
             f"--data {data} --model-url URL' first, review the draft, then give it here with --rules")
    try:
        summary = init_domain(name, data, rules=rules, description=description, out=out, id_column=id_column,
                              heldout_share=heldout_share, split_seed=split_seed, force=force)
    except (CsvDataError, RulebookError) as exc:
        fail(exc, code=1)
    except ValueError as exc:
        fail(exc)
    _print_summary(summary)


def _print_summary(summary: Any) -> None:
    schema = summary.schema
    console.print(f"wrote {shown(summary.folder)}: domain.yaml, rulebook.yaml, schema.md", highlight=False)
    console.print(f"read {schema.rows} records from {shown(schema.source)}; {schema.problem_count} problems",
                  highlight=False)
    for column in schema.columns:
        if column.type is None:
            what = f"not a fact: {column.flag}"
        elif column.type in ("integer", "number"):
            what = f"{column.type} {column.min:g} .. {column.max:g}"
        elif column.type == "enum":
            what = f"enum {', '.join(column.values)}"
        else:
            what = column.type
        used = "" if column.name in summary.facts or column.type is None else " (not in the rulebook: not a fact)"
        console.print(f"  {shown(column.name)}: {shown(what)}{used}", highlight=False)
    console.print(f"decisions: {', '.join(f'{d} {n}' for d, n in summary.decisions.items())}", highlight=False)
    console.print("by deciding rule:", highlight=False)
    for branch, count in summary.branches.items():
        console.print(f"  {shown(branch)}: {count}", highlight=False)
    console.print(f"split: {summary.train} train, {summary.heldout} held out (stratified by deciding rule)",
                  highlight=False)
