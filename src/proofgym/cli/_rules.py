"""``proofgym rules``: validate rulebooks and query the embedded kernel."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional, cast

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
    # Exactly one of the two is given (checked above), so with no domain there is a rulebook.
    if domain is None and not Path(cast(str, rulebook)).exists() and rulebook in domain_names():
        domain = rulebook
    if domain is not None:
        try:
            return Path(get_domain(domain).rulebook_path)
        except KeyError as exc:
            fail(exc.args[0])
    return Path(cast(str, rulebook))


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


# -- coverage and drafting --------------------------------------------------------------------------------------------

#: The longest plain-English policy file read by ``rules draft``, in bytes.
MAX_DESCRIBE_BYTES = 64 << 10


def _coverage_of(book: Any, data: Path, id_column: Optional[str]) -> Any:
    """The coverage report of ``book`` on the CSV ``data``, read by the domains' CSV reader (streamed); bad data is
    one error line per problem (exit 1)."""
    from proofgym.domains import CsvDataError, typed_records
    from proofgym.rules import CoverageCounter

    counter = CoverageCounter(book)
    try:
        for row, _ident, facts in typed_records(data, book, id_column):
            counter.add(facts, row=row)
    except CsvDataError as exc:
        fail(exc, code=1)
    return counter.report()


def _print_coverage(report: Any) -> None:
    table = Table(title=f"coverage of {shown(report.rulebook)} on {report.evaluated} of {report.records} records")
    for column in ("rule", "kind", "decision", "priority", "fires", "decides"):
        table.add_column(column, overflow="fold")
    for rule in report.rules:
        decision = rule.kind == "decision"
        table.add_row(shown(rule.name), rule.kind, shown(rule.decision or "") if decision else "",
                      str(rule.priority) if decision else "",
                      str(rule.fired) if rule.fired else "[red]0[/red]", str(rule.decided) if decision else "")
    console.print(table)
    decisions = ", ".join(f"{shown(name)} {count}" for name, count in report.decisions.items())
    default = f" ({report.by_default} by default)" if report.by_default else ""
    console.print(f"decisions: {decisions}{default}", highlight=False, soft_wrap=True)
    findings = report.findings()
    for line in findings:
        console.print(f"[yellow]![/yellow] {shown(line)}", highlight=False, soft_wrap=True)
    if not findings:
        console.print("every rule fires, a decision rule decides every record, and no two decisions conflict",
                      highlight=False, soft_wrap=True)


@rules_app.command()
def coverage(
    rulebook: Optional[str] = typer.Argument(None, help="Rulebook YAML file (or a shipped domain name)."),
    data: Path = typer.Option(..., "--data", help="CSV of records: one column per input fact, a header row."),
    domain: Optional[str] = typer.Option(None, "--domain", help="A shipped domain, e.g. loan."),
    id_column: Optional[str] = typer.Option(None, "--id-column", help="A column that names records (no fact)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as one JSON object."),
) -> None:
    """How each rule fares on a CSV of records: how often it fires, rules that never fire, records no decision
    rule decides, and conflicting decisions (which rule wins, and why)."""
    book = _load(rulebook, domain)
    report = _coverage_of(book, data, id_column)
    if as_json:
        typer.echo(json.dumps(report.to_dict()))
    else:
        _print_coverage(report)


@rules_app.command()
def draft(
    describe: Path = typer.Option(..., "--describe", help="The policy in plain English (a text file)."),
    data: Path = typer.Option(..., "--data", help="CSV of records (features only, no labels): its columns are the "
                                                  "rulebook's facts."),
    model_url: str = typer.Option(..., "--model-url", help="OpenAI-compatible server (e.g. http://127.0.0.1:8000/v1; "
                                                           "`proofgym serve-model` is one)."),
    model: str = typer.Option("default", "--model", help="The model's name on that server."),
    rounds: int = typer.Option(3, "--rounds", min=1, max=10, help="Model answers in all: the first draft and its "
                                                                  "repairs."),
    out: Path = typer.Option(Path("rulebook.draft.yaml"), "--out", help="Where the draft is written (valid or not)."),
    name: Optional[str] = typer.Option(None, "--name", help="The rulebook's name (default: the model's)."),
    id_column: Optional[str] = typer.Option(None, "--id-column", help="A column that names records (no fact)."),
    api_key_env: Optional[str] = typer.Option(None, "--api-key-env", help="Environment variable holding the "
                                                                          "server's API key."),
    timeout_s: float = typer.Option(300.0, "--timeout", min=1.0, help="Seconds to wait for each answer."),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=1, help="The longest answer, in tokens "
                                                                             "(default: the server's)."),
    force: bool = typer.Option(False, "--force", help="Overwrite --out if it exists."),
) -> None:
    """Draft a rulebook from a plain-English policy with a model: the kernel checks each draft and its problems go
    back to the model (at most --rounds answers); then the coverage report on the data. The draft is written to
    --out for you to review; `proofgym rules validate` must pass before it is used."""
    import os

    from proofgym.domains import draft_rulebook
    from proofgym.http import ChatClient

    if out.exists() and not force:
        fail(f"--out: {out} exists; pass --force to overwrite it, or another --out")
    try:
        with describe.open("rb") as handle:
            raw = handle.read(MAX_DESCRIBE_BYTES + 1)
        if len(raw) > MAX_DESCRIBE_BYTES:
            fail(f"{describe}: the policy text is longer than {MAX_DESCRIBE_BYTES} bytes")
        policy = raw.decode("utf-8")
    except OSError as exc:
        fail(f"--describe: cannot read {describe}: {exc.strerror or exc}")
    except UnicodeDecodeError as exc:
        fail(f"{describe}: byte {exc.start}: not UTF-8 text")
    if not policy.strip():
        fail(f"{describe}: the policy text is empty")
    key = None
    if api_key_env is not None:
        key = os.environ.get(api_key_env, "").strip()
        if not key:
            fail(f"--api-key-env: the environment variable {api_key_env!r} is not set")
    url, schema = drafting_inputs(model_url, data, id_column)
    facts = schema.facts_section()
    left_out = [f"{column.name} ({column.flag})" for column in schema.flagged]
    notes = f"Columns that are not facts (do not use them): {', '.join(left_out)}." if left_out else ""
    console.print(f"{shown(data)}: {schema.rows} records; facts: "
                  f"{', '.join(f'{shown(c.name)} ({c.type})' for c in schema.facts)}"
                  + (f"; left out: {shown(', '.join(left_out))}" if left_out else ""), highlight=False, soft_wrap=True)

    client = ChatClient(url, api_key=key, timeout_s=timeout_s)
    result = draft_rulebook(policy, facts, client=client, model=model, rounds=rounds, name=name, source=str(out),
                            notes=notes, max_tokens=max_tokens)
    for done in result.rounds:
        if done.problems:
            console.print(f"round {done.number}: the kernel found {len(done.problems)} problem(s), sent back to the "
                          f"model; first: {shown(done.problems[0])}", highlight=False, soft_wrap=True)
        else:
            console.print(f"round {done.number}: the kernel accepts the draft", highlight=False, soft_wrap=True)
    if result.rounds:
        header = [f"drafted by `proofgym rules draft` from {describe} and {data} with model {model!r}"]
        try:
            out.write_text(result.yaml_text(header), encoding="utf-8")
        except OSError as exc:
            fail(f"--out: cannot write {out}: {exc.strerror or exc}")
    if not result.ok:
        kept = f"; the last draft is in {out} for review" if result.rounds else ""
        fail(f"{result.error}{kept}", code=1)
    _print_coverage(_coverage_of(result.rulebook, data, id_column))
    console.print(f"draft written to {shown(out)}: review every rule; `proofgym rules validate {shown(out)}` must "
                  "pass before it is used", highlight=False, soft_wrap=True)


def drafting_inputs(model_url: str, data: Path, id_column: Optional[str]) -> tuple[str, Any]:
    """What drafting a rulebook needs before asking a model (`rules draft`, `domain init --describe`): the model's
    chat-completions URL and the CSV's inferred schema, with at least one fact; one error line (exit 1 for bad data)
    otherwise."""
    from proofgym.domains import CsvDataError, infer_schema
    from proofgym.http import chat_completions_url

    try:
        url = chat_completions_url(model_url, name="--model-url")
    except ValueError as exc:
        fail(exc)
    try:
        schema = infer_schema(data, id_column=id_column)
        schema.raise_for_problems()
    except CsvDataError as exc:
        fail(exc, code=1)
    if not schema.facts:
        fail(f"{data}: no column could be typed as a fact")
    return url, schema
