"""Dataset rows for a domain: prompts, gold decisions from the rule kernel, and gold completions."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, cast

from proofgym.domains._domain import Domain, Record
from proofgym.domains._messages import build_prompt_messages, build_prompt_text
from proofgym.rules import RuleKernel, load_rulebook


def gold_decision(domain: Domain, facts: Mapping[str, Any]) -> str:
    """The decision the domain's rulebook certifies for ``facts``.

    Gold labels come from the rule kernel, never from the generator, so a generator bug cannot
    mislabel data. Raises ``ValueError`` when the kernel certifies no decision (a fact the gate
    rejects, or an undecided query): such a record has no gold label.
    """
    return _certified_decision(domain, _query(domain, facts), facts)


def gold_completion(domain: Domain, record: Record) -> str:
    """A completion that answers ``record`` correctly in the domain's output contract.

    The reasoning states the record's facts, then walks the kernel's trace: each rule that fired, by
    name, with its explanation; each requirement that failed, by its explanation alone. Rules that did
    not fire are never named, so the reasoning also earns full credit where graded credit rewards
    naming the rules that fired. One decision block follows, with the gold decision and exactly the
    record's facts.
    """
    spec = domain.spec
    report = _query(domain, record.facts)
    decision = _certified_decision(domain, report, record.facts)
    stated = ", ".join(f"{name} = {json.dumps(value)}" for name, value in record.facts.items())
    lines = [f"The record states {stated}."]
    deciding = set(report["deciding_rules"])
    for rule in report["symbolic_trace"]["rules"]:
        name, kind, explanation = rule["rule_name"], rule["rule_type"], rule["explanation"] or "holds"
        if kind == "constraint" and not rule["fired"]:
            lines.append(f"Requirement not met: {explanation}.")
        elif kind == "decision" and rule["fired"] and name not in deciding:
            lines.append(f"{name} also fired but does not decide (outranked or blocked): {explanation}.")
        elif rule["fired"]:
            lines.append(f"{name}: {explanation}.")
    if report["proof"]["decision"]["by_default"]:
        lines.append(f"No rule may decide, so the rulebook's fail-closed default applies: {decision}.")
    lines.append(f"Decision: {decision}.")
    answer = json.dumps({spec.answer_key: decision, spec.facts_key: dict(record.facts)})
    reasoning = "\n".join(lines)
    return f"<{spec.reasoning_tag}>\n{reasoning}\n</{spec.reasoning_tag}>\n<{spec.tag}>{answer}</{spec.tag}>"


def build_example(domain: Domain, record: Record, *, chat: bool) -> dict[str, Any]:
    """One dataset row: ``id``, ``prompt`` (chat messages when ``chat``, else plain text), ``gold``
    (the kernel's decision), ``source_facts`` (the record's facts, for the grounding check) and
    ``branch``. The reward function reads ``gold`` and ``source_facts`` from the row directly."""
    text = domain.render(record)
    prompt = build_prompt_messages(domain.spec, text) if chat else build_prompt_text(domain.spec, text)
    return {
        "id": record.id,
        "prompt": prompt,
        "gold": gold_decision(domain, record.facts),
        "source_facts": dict(record.facts),
        "branch": record.branch,
    }


def build_dataset(domain: Domain, seed: int, n: int, *, chat: bool = False) -> list[dict[str, Any]]:
    """``n`` rows built from ``domain.generate(seed, n)``: the same rows for the same seed."""
    return [build_example(domain, record, chat=chat) for record in domain.generate(seed, n)]


def write_jsonl(rows: Iterable[Mapping[str, Any]], path: str | Path) -> Path:
    """Write ``rows`` as JSON Lines (UTF-8, one row per line) to ``path``; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def to_hf_dataset(rows: Iterable[Mapping[str, Any]]) -> Any:
    """The rows as a Hugging Face ``datasets.Dataset`` (needs the optional ``data`` extra)."""
    try:
        import datasets  # optional and heavy: imported only when asked for
    except ImportError as exc:
        raise ImportError(
            "to_hf_dataset needs the Hugging Face 'datasets' package; install it with: pip install 'proofgym[data]'"
        ) from exc
    return datasets.Dataset.from_list([dict(row) for row in rows])


@functools.lru_cache(maxsize=32)
def _kernel(rulebook_path: Path) -> RuleKernel:
    # Loading and compiling a rulebook is the costly part; a dataset queries one kernel thousands of times.
    return RuleKernel(load_rulebook(rulebook_path))


def _query(domain: Domain, facts: Mapping[str, Any]) -> dict[str, Any]:
    return _kernel(domain.rulebook_path).query(dict(facts))


def _certified_decision(domain: Domain, report: Mapping[str, Any], facts: Mapping[str, Any]) -> str:
    decision = report.get("decision")
    if report.get("status") != "decided" or not report.get("proof_checked") or decision is None:
        rejected = [item.get("field") for item in report.get("rejected_facts") or ()]
        raise ValueError(
            f"domain {domain.name!r}: the rule kernel certified no decision for {dict(facts)!r} "
            f"(status {report.get('status')!r}, rejected facts {rejected})"
        )
    return cast(str, decision)
