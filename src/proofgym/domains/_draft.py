"""Drafting a rulebook from plain English: ask an OpenAI-compatible model for a rulebook in the kernel's YAML
language, check it with the kernel, and feed the kernel's problems back for a bounded number of repair rounds.

The model's answer is untrusted text. It is bounded (:data:`MAX_ANSWER_CHARS`); a fenced block (```yaml ... ```) is
taken out of it when there is one; a control character in it (a bidi override would make a rule read differently
on review than it runs) is a problem sent back; it is read with :func:`proofgym.formats.load_yaml` (no aliases, no
key given twice, bounded depth and integers) and then :func:`proofgym.rules.parse_rulebook`. Its ``facts:``
section is not the model's to write: it is the schema of the data (the caller's), put in place of whatever the
model wrote, so the rules can only name columns the data has and the kernel says so when they do not.

A draft that validates is still a draft: :meth:`RulebookDraft.yaml_text` writes it under a header saying that a
person must review it and ``proofgym rules validate`` must pass.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import yaml

from proofgym.core import CONTROL_CHARACTERS, model_text, show_controls
from proofgym.formats import DocumentError, load_yaml
from proofgym.http import ChatClient
from proofgym.rules import Rulebook, RulebookError, parse_rulebook, rulebook_json_schema

#: The longest answer read as a rulebook, in characters; a longer one is a problem sent back.
MAX_ANSWER_CHARS = 64_000
#: The most problem lines sent back in one repair round (the rest are counted).
MAX_PROBLEMS_SENT = 40
#: The most repair rounds one draft may take.
MAX_ROUNDS = 10

_FENCE = re.compile(r"```[ \t]*(?:ya?ml|YA?ML)?[ \t]*\r?\n(.*?)(?:\r?\n)?```", re.DOTALL)

_EXAMPLE = """\
name: housing_benefit
version: "1"
description: Housing benefit for low-income renters.
decisions: [grant, review, refuse]
posture: deny
default_decision: refuse
facts: {}   # given: the data's schema is put here
derived:
  low_income: {type: boolean, default: false}
rules:
  - name: income_below_limit
    derive: low_income
    when: {fact: annual_income, op: "<", value: 20000}
    explain: "income {annual_income} is below 20000"
constraints:
  - name: applicant_is_adult
    require: {fact: age, op: ">=", value: 18}
    blocks: [grant, review]
    explain: "only adults may receive the benefit (age {age})"
decision_rules:
  - name: refuse_home_owner
    decide: refuse
    priority: 30
    when: {fact: tenure, op: "==", value: own}
    explain: "home owners are refused"
  - name: grant_low_income_renter
    decide: grant
    priority: 20
    when: {all: [{fact: low_income, op: "==", value: true}, {fact: tenure, op: "==", value: rent}]}
    explain: "a renter with income {annual_income}: grant"
  - name: review_large_household
    decide: review
    priority: 10
    when: {left: {fact: household_size}, op: ">=", right: {value: 5}}
    explain: "a household of {household_size}: review"
"""

_SYSTEM = """\
You write rulebooks for proofgym's rule kernel: YAML files that decide a case from its facts.

The language:
- facts: the input facts. They are GIVEN (the columns of the user's data, below): use them by name, do not \
invent others, and do not write a facts: section (the given one replaces it).
- derived: facts that rules derive ({{type, default}}); rules: derive rules (name, derive, when, value, explain).
- constraints: conditions that must hold for the decisions they block (name, require, blocks, explain).
- decision_rules: name, decide (one of decisions), priority (unique integers; the highest applicable rule that no \
failed constraint blocks decides), when, explain.
- posture: deny with a default_decision (the decision when no rule decides), or abstain.
- conditions: {{fact: F, op: OP, value: V}} with OP one of == != < <= > >= in not_in; \
{{left: OPERAND, op: OP, right: OPERAND}}; {{all: [...]}}, {{any: [...]}}, {{not: C}}. Operands: {{fact: F}}, \
{{value: V}}, {{add|sub|mul|div: [A, B]}}. Enum facts compare with their listed values only. Explanations may \
name facts in braces: "{{age}}". Names match [A-Za-z_][A-Za-z0-9_]*; the rulebook name matches [a-z][a-z0-9_]*.

An example (its facts would be age, annual_income, tenure and household_size):
```yaml
{example}```

The JSON Schema of a rulebook:
{schema}

Answer with the whole rulebook as ONE YAML document in a ```yaml fenced block, and nothing else."""

_REQUEST = """\
The policy, in plain English:
<<<
{description}
>>>

The given facts (the columns of the data; use these names and types exactly):
```yaml
{facts}```
{extra}
Write the rulebook{named}."""

_REPAIR = """\
The rule kernel rejected that rulebook:
{problems}

Correct every problem and answer with the whole corrected rulebook as one YAML document in a ```yaml fenced block."""


@dataclass(frozen=True)
class DraftRound:
    """One round: the model's ``answer`` (what was read of it) and the ``problems`` the checks found (none: the
    draft validates)."""

    number: int
    answer: str
    problems: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"round": self.number, "answer": self.answer, "problems": list(self.problems)}


@dataclass(frozen=True)
class RulebookDraft:
    """The end of :func:`draft_rulebook`: the ``rulebook`` when a round's draft validates, else ``error`` (one
    line). ``data`` is the last draft read as a mapping (with the data's facts), ``rounds`` every round."""

    rulebook: Rulebook | None
    data: dict[str, Any] | None
    rounds: tuple[DraftRound, ...]
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.rulebook is not None

    def yaml_text(self, header: Sequence[str] = ()) -> str:
        """The last draft as YAML under a comment header (``header``'s lines, then the review notice). A draft that
        never read as a mapping is the model's last answer as it came (its first :data:`MAX_ANSWER_CHARS`
        characters, control characters shown as ``<U+XXXX>``)."""
        status = "VALID per the kernel" if self.ok else "INVALID: the kernel rejects it"
        notes = [*header,
                 f"DRAFT ({status}, after {len(self.rounds)} round(s)): written by a model, not yet reviewed.",
                 "Review every rule against your policy before use; `proofgym rules validate` must pass."]
        if not self.ok and self.rounds:
            notes += ["Problems the kernel found in this draft:", *self.rounds[-1].problems[:MAX_PROBLEMS_SENT]]
        head = "".join(f"# {show_controls(line)}\n" for line in (n for note in notes for n in note.splitlines()))
        if self.data is not None:
            return head + yaml.dump(self.data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120)
        answer = show_controls(self.rounds[-1].answer) if self.rounds else ""
        return head + answer + ("" if answer.endswith("\n") else "\n")


class _Dumper(yaml.SafeDumper):
    """Plain YAML: no anchors or aliases (the kernel's reader refuses them)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def draft_rulebook(
    description: str,
    facts: Mapping[str, Any],
    *,
    client: ChatClient,
    model: str,
    rounds: int = 3,
    name: str | None = None,
    source: str = "<draft>",
    notes: str = "",
    temperature: float = 0.0,
    max_tokens: int | None = None,
) -> RulebookDraft:
    """Draft a rulebook for the plain-English ``description`` over the input ``facts`` (a rulebook's ``facts:``
    section: the data's schema), asking ``model`` through ``client`` and repairing up to ``rounds`` times in all.

    ``name`` sets the rulebook's name; ``source`` names the file in the kernel's problem lines; ``notes`` is more
    to tell the model about the data (a column summary); ``max_tokens`` is sent when given (else the server's
    default applies: ``proofgym serve-model``'s is its ``--max-tokens-limit``). Never raises for what the model or
    the server does: a failed request is ``error``, with the rounds made so far. Runs its own event loop (call it
    outside one). The first request is about 16,000 characters (some 5,000 tokens: the JSON Schema is most of it).
    """
    if not 1 <= rounds <= MAX_ROUNDS:
        raise ValueError(f"rounds must be between 1 and {MAX_ROUNDS}, got {rounds}")
    return asyncio.run(_Drafter(description, facts, client, model, name, source, notes, temperature,
                                max_tokens).run(rounds))


class _Drafter:
    def __init__(self, description: str, facts: Mapping[str, Any], client: ChatClient, model: str,
                 name: str | None, source: str, notes: str, temperature: float, max_tokens: int | None) -> None:
        self.facts = json.loads(json.dumps(dict(facts)))  # plain data, our own copy
        self.client, self.model, self.name, self.source = client, model, name, source
        self.params: dict[str, Any] = {"temperature": temperature}
        if max_tokens is not None:
            self.params["max_tokens"] = max_tokens
        example = _EXAMPLE
        schema = json.dumps(rulebook_json_schema(), separators=(",", ":"))
        facts_yaml = yaml.dump(self.facts, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120)
        self.messages = [
            {"role": "system", "content": _SYSTEM.format(example=example, schema=schema)},
            {"role": "user", "content": _REQUEST.format(
                description=description.strip(), facts=facts_yaml, extra=f"\n{notes.strip()}\n" if notes else "",
                named=f" named {name}" if name else "")},
        ]

    async def run(self, rounds: int) -> RulebookDraft:
        done: list[DraftRound] = []
        data: dict[str, Any] | None = None
        try:
            for number in range(1, rounds + 1):
                answer = await self.client.complete({"model": self.model, "messages": self.messages, **self.params})
                if answer.error is not None:
                    return RulebookDraft(None, data, tuple(done), error=f"the model server: {answer.error}")
                text, problem = _content(answer.payload)
                if problem is not None:
                    return RulebookDraft(None, data, tuple(done), error=f"the model server: {problem}")
                book, read, problems = self.check(text)
                text = text[:MAX_ANSWER_CHARS]  # what is kept, sent back and saved of an answer too long to read
                data = read if read is not None else data
                done.append(DraftRound(number, text, tuple(problems)))
                if book is not None:
                    return RulebookDraft(book, read, tuple(done))
                self.messages += [{"role": "assistant", "content": text},
                                  {"role": "user", "content": _repair(problems)}]
        finally:
            await self.client.aclose()
        last = done[-1].problems
        more = f" (and {len(last) - 1} more)" if len(last) > 1 else ""
        return RulebookDraft(None, data, tuple(done), error=f"no valid rulebook after {rounds} round(s); the last "
                                                            f"draft's first problem: {last[0]}{more}")

    def check(self, answer: str) -> tuple[Rulebook | None, dict[str, Any] | None, list[str]]:
        """The answer as a rulebook; else what was read of it and its problems."""
        if len(answer) > MAX_ANSWER_CHARS:
            return None, None, [f"{self.source}: the answer is {len(answer)} characters long; a rulebook may take "
                                f"at most {MAX_ANSWER_CHARS}"]
        text = extract_yaml(answer)
        for number, line in enumerate(text.splitlines(), 1):
            found = CONTROL_CHARACTERS.search(line)
            if found:
                return None, None, [f"{self.source}: line {number}: control character U+{ord(found.group()):04X}; "
                                    "a rulebook has none"]
        try:
            read = load_yaml(text)
        except DocumentError as exc:
            return None, None, [f"{self.source}: {exc}"]
        if not isinstance(read, dict):
            kind = "nothing" if read is None else type(read).__name__
            return None, None, [f"{self.source}: expected a rulebook (a YAML mapping) at the top level, got {kind}"]
        data = dict(read)
        if self.name:
            data["name"] = self.name
        data["facts"] = self.facts  # the data's schema, whatever the model wrote
        ordered = {key: data[key] for key in _ORDER if key in data}
        data = {**ordered, **data}
        try:
            return parse_rulebook(data, source=self.source), data, []
        except RulebookError as exc:
            return None, data, list(exc.problems)


_ORDER = ("name", "version", "description", "decisions", "posture", "default_decision", "min_confidence", "facts",
          "derived", "rules", "constraints", "decision_rules")


def extract_yaml(answer: str) -> str:
    """The YAML of a model's answer: its first fenced block, or the whole answer when it has none."""
    found = _FENCE.search(answer)
    return found.group(1) if found else answer.strip()


def _content(payload: Mapping[str, Any] | None) -> tuple[str, str | None]:
    """The message text of a chat completion, or why there is none."""
    choices = payload.get("choices") if isinstance(payload, Mapping) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, Mapping) else None
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, list):  # content parts
        content = "".join(str(part.get("text") or "") for part in content if isinstance(part, Mapping))
    if not isinstance(content, str) or not content.strip():
        return "", "the answer has no text in choices[0].message.content"
    return model_text(content), None


def _repair(problems: Sequence[str]) -> str:
    shown = list(problems[:MAX_PROBLEMS_SENT])
    if len(problems) > MAX_PROBLEMS_SENT:
        shown.append(f"... and {len(problems) - MAX_PROBLEMS_SENT} more problem(s)")
    return _REPAIR.format(problems="\n".join(f"- {line}" for line in shown))
