"""``proofgym rules``: validate rulebooks and query the embedded kernel."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from rich.table import Table

from proofgym.cli._errors import fail, shown

rules_app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                        help="Validate rulebooks and query the embedded rule kernel.")
console = Console()


def _rulebook_path(rulebook: Optional[str], domain: Optional[str]) -> Path:
    """A rulebook file from a path, a shipped domain name (as ``--domain`` or in place of the path)."""
    from proofgym.domains import domain_names, get_domain

    if (rulebook is None) == (domain is None):
        fail("give a rulebook file or --domain NAME (one of them)")
    if domain is None and not Path(rulebook).exists() and rulebook in domain_names():
        domain = rulebook
    if domain is not None:
        try:
            return Path(get_domain(domain).rulebook_path)
        except KeyError as exc:
            fail(exc.args[0])
    return Path(rulebook)


def _load(rulebook: Optional[str], domain: Optional[str]) -> Any:
    from proofgym.config import RULEBOOK, ConfigError, require_file_kind
    from proofgym.rules import RulebookError, load_rulebook

    path = _rulebook_path(rulebook, domain)
    try:
        require_file_kind(path, RULEBOOK)
    except ConfigError as exc:  # a run, eval or RL config given for a rulebook
        fail(exc)
    try:
        return load_rulebook(path)
    except RulebookError as exc:  # one line per problem, each naming the file, the fact or rule, and the key
        fail(exc, code=1)


@rules_app.command()
def validate(
    rulebook: Optional[str] = typer.Argument(None, help="Rulebook YAML file (or a shipped domain name)."),
    domain: Optional[str] = typer.Option(None, "--domain", help="A shipped domain, e.g. grant_eligibility."),
) -> None:
    """Check a rulebook; print every problem with its file, rule and key (exit 1), or a summary."""
    book = _load(rulebook, domain)
    console.print(
        f"ok: {book.name} ({book.source}): {len(book.facts)} input facts, {len(book.derived)} derived facts, "
        f"{len(book.derive_rules)} derive rules, {len(book.constraints)} constraints, "
        f"{len(book.decision_rules)} decision rules; decisions {list(book.decisions)}; posture {book.posture}; "
        f"hash {book.content_hash[:16]}", highlight=False)


@rules_app.command()
def query(
    rulebook: Optional[str] = typer.Argument(None, help="Rulebook YAML file (or a shipped domain name)."),
    facts: Path = typer.Option(..., "--facts", help="JSON file with one object of facts."),
    domain: Optional[str] = typer.Option(None, "--domain", help="A shipped domain, e.g. grant_eligibility."),
    as_json: bool = typer.Option(False, "--json", help="Print the report object as JSON."),
) -> None:
    """Run the kernel on a set of facts: the decision, its proof and the rule trace."""
    from proofgym.rules import RuleKernel
    from proofgym.domains import verdict_from_report

    from proofgym.formats import DocumentError, load_json

    book = _load(rulebook, domain)
    try:
        data = load_json(facts.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"{facts}: cannot read the facts file: {exc}")
    except DocumentError as exc:
        fail(f"{facts}: {exc}")
    if not isinstance(data, dict):
        fail(f"{facts}: expected a JSON object of facts, got {type(data).__name__}")
    report = RuleKernel(book).query(data)
    outcome = verdict_from_report(report).outcome.value
    if as_json:
        typer.echo(json.dumps({"outcome": outcome, **report}, default=str))
        return
    console.print(f"outcome: [bold]{outcome}[/bold]; decision: [bold]{shown(report.get('decision'))}[/bold]; "
                  f"status: {report.get('status')}; proof_checked: {report.get('proof_checked')}")
    if report.get("proof_summary"):
        console.print(shown(report["proof_summary"]), highlight=False)
    for rejected in report.get("rejected_facts") or ():
        console.print(f"[yellow]rejected[/yellow] {shown(rejected['field'])} = {shown(repr(rejected.get('value')))}: "
                      f"{shown('; '.join(rejected.get('reasons', ())))}", highlight=False)
    trace = report.get("symbolic_trace") or {}
    table = Table(title=f"{trace.get('rules_fired', 0)} of {trace.get('rules_evaluated', 0)} rules fired")
    for column in ("rule", "type", "fired", "explanation"):
        table.add_column(column, overflow="fold")
    for rule in trace.get("rules", ()):
        table.add_row(shown(rule.get("rule_name", "")), shown(rule.get("rule_type", "")),
                      "[green]yes[/green]" if rule.get("fired") else "no", shown(rule.get("explanation", "")))
    if trace.get("rules"):
        console.print(table)
    if report.get("deciding_rules"):
        console.print(f"deciding rules: {shown(', '.join(report['deciding_rules']))}", highlight=False)


@rules_app.command()
def schema() -> None:
    """Print the rulebook JSON Schema (point your editor's YAML support at it)."""
    from proofgym.rules import rulebook_json_schema

    typer.echo(json.dumps(rulebook_json_schema(), indent=2))
