"""The system prompt that states the output contract, and a checker for any system prompt."""

from __future__ import annotations

import json
import re

from proofgym.parsers import find_blocks
from proofgym.domains._spec import DomainSpec


def build_system_prompt(spec: DomainSpec) -> str:
    """The system prompt for ``spec``: its description, then the exact output format.

    The model reasons inside the reasoning tag, then writes exactly one decision block holding a
    JSON object with the answer key (one of the decisions) and the facts key (the listed facts, with
    values from the record). The example block uses placeholders (``"<one of: permit | deny>"``,
    ``<value of age>``), so it never parses as an answer: a prompt leaking into the parsed text
    cannot pay.
    """
    tag, close = f"<{spec.tag}>", f"</{spec.tag}>"
    reasoning, reasoning_close = f"<{spec.reasoning_tag}>", f"</{spec.reasoning_tag}>"
    answer_key, facts_key = json.dumps(spec.answer_key), json.dumps(spec.facts_key)
    decisions = ", ".join(json.dumps(decision) for decision in spec.decisions)
    if spec.facts:
        fact_lines = "\n".join(f"     - {json.dumps(name)}: {description}" for name, description in spec.facts.items())
        facts_rule = f"   - {facts_key}: an object with these facts, each value taken from the record:\n{fact_lines}"
    else:
        facts_rule = f"   - {facts_key}: an empty object {{}}."
    example_facts = ", ".join(f"{json.dumps(name)}: <value of {name}>" for name in spec.facts)
    example_answer = f"<one of: {' | '.join(spec.decisions)}>"
    example = f"{{{answer_key}: {json.dumps(example_answer)}, {facts_key}: {{{example_facts}}}}}"
    # Prose names the tags only as opening tags: a complete tag pair in the prose would be one more
    # block for anyone who parses the prompt.
    return f"""{spec.description}

Answer in this format:
1. Reason step by step inside a {reasoning} block.
2. Then write exactly one {tag} block holding one JSON object with two keys:
   - {answer_key}: your decision, exactly one of {decisions}.
{facts_rule}
   Write JSON values as JSON: numbers, true, false and null unquoted, text in double quotes.

The shape of an answer (each <...> is a placeholder to replace, not text to copy):
{reasoning}
<your step-by-step reasoning>
{reasoning_close}
{tag}{example}{close}

Several {tag} blocks score as a format failure, even when they agree; so does a {tag} block
that is not valid JSON or whose {answer_key} is not one of the decisions above."""


def check_system_prompt(prompt: str, spec: DomainSpec) -> list[str]:
    """The problems of ``prompt`` as a system prompt for ``spec``; empty when there are none.

    The prompt must mention the decision and reasoning tags, the answer and facts keys, every
    decision and every fact name; and no decision block in it may parse as a valid answer with
    ``spec.parser()`` (an example must use placeholders, or a leaked prompt could be scored).
    """
    problems: list[str] = []
    for what, tag in (("decision tag", spec.tag), ("reasoning tag", spec.reasoning_tag)):
        if f"<{tag}>" not in prompt:
            problems.append(f"does not mention the {what} <{tag}>")
    words = [("answer key", spec.answer_key), ("facts key", spec.facts_key)]
    words += [("decision", decision) for decision in spec.decisions]
    words += [("fact", name) for name in spec.facts]
    for what, word in words:
        if not _mentions(prompt, word):
            problems.append(f"does not mention the {what} {word!r}")
    parser = spec.parser()
    for block in find_blocks(prompt, spec.tag):
        result = parser.parse(f"<{spec.tag}>{block}</{spec.tag}>")
        if result.claim is not None:
            problems.append(
                f"an example <{spec.tag}> block parses as the answer {result.claim.decision!r}; use placeholders"
            )
    return problems


def _mentions(text: str, word: str) -> bool:
    """Whether ``word`` occurs in ``text`` as a whole word ("no" is not mentioned by "not")."""
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text) is not None
