"""Reading a judge model's answer: the final verdict it gave, checked criterion by criterion, or why there is none.

A structured answer is the JSON object itself. A text answer is read after its ``<think>`` blocks are removed (an
unclosed ``<think>`` means the model gave no verdict yet): the verdict is the *last* JSON object holding a
``"verdicts"`` list, else the strict line form ``<id>: <score>`` the prompt allows as a fallback, the last line of
each criterion counting. Nothing earlier is ever taken for the answer: a verdict drafted in a ``<think>`` block, a
first attempt the model corrected, or a loose ``GRADE: ...`` token.

An answer is usable only when every criterion asked appears exactly once (no missing, duplicate or unknown id),
each with a finite number on its scale and a string reason (cut to :data:`MAX_REASON_CHARS`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal, Mapping, Sequence

from proofgym.judges._rubric import Criterion
from proofgym.judges._types import CriterionVerdict

#: A verdict's reason is cut to this many characters.
MAX_REASON_CHARS = 2000
#: Only the end of a longer answer is read (the verdict is at its end).
MAX_ANSWER_CHARS = 64_000
# JSON objects tried, from the end of the answer backwards, before giving up.
_MAX_OBJECTS_TRIED = 2000

_THINK_OPEN = re.compile(r"<(think|thinking)>", re.IGNORECASE)
_THINK_BLOCK = re.compile(r"<(think|thinking)>.*?</\1>", re.IGNORECASE | re.DOTALL)
_THINK_CLOSE = re.compile(r"</(think|thinking)>", re.IGNORECASE)
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"


@dataclass(frozen=True, slots=True)
class ParsedVerdicts:
    """A usable answer: one verdict per criterion asked, in the criteria's order; ``source`` is where it was read
    (``"json"``: a JSON object, ``"lines"``: the ``<id>: <score>`` fallback)."""

    verdicts: tuple[CriterionVerdict, ...]
    source: Literal["json", "lines"]


@dataclass(frozen=True, slots=True)
class ParsedGroupVerdicts:
    """A usable group answer: ``{trajectory label: verdicts in the criteria's order}``."""

    verdicts: Mapping[str, tuple[CriterionVerdict, ...]]
    source: Literal["json", "lines"]


@dataclass(frozen=True, slots=True)
class ParseProblem:
    """Why an answer is not usable, in words the judge model is shown when it is asked again."""

    message: str


def parse_verdicts(answer: str | Mapping[str, Any], criteria: Sequence[Criterion], *,
                   judge: str = "") -> ParsedVerdicts | ParseProblem:
    """The verdicts in ``answer`` (a reply's text, or an already decoded JSON object) for ``criteria``."""
    if isinstance(answer, Mapping):
        return _checked(answer.get("verdicts"), criteria, judge, "json")
    text = _final_text(answer)
    if isinstance(text, ParseProblem):
        return text
    found = _final_object(text, "verdicts")
    if found is not None:
        return _checked(found["verdicts"], criteria, judge, "json")
    lines = _line_scores(text, [c.id for c in criteria], prefix=None)
    if lines:
        return _from_lines(lines, criteria, judge)
    return ParseProblem('the answer holds no JSON object with a "verdicts" list (and no `<id>: <score>` lines)')


def parse_group_verdicts(answer: str | Mapping[str, Any], labels: Sequence[str], criteria: Sequence[Criterion], *,
                         judge: str = "") -> ParsedGroupVerdicts | ParseProblem:
    """The verdicts in a group ``answer`` for every trajectory of ``labels`` × every criterion of ``criteria``."""
    if isinstance(answer, Mapping):
        return _checked_group(answer.get("trajectories"), labels, criteria, judge)
    text = _final_text(answer)
    if isinstance(text, ParseProblem):
        return text
    found = _final_object(text, "trajectories")
    if found is not None:
        return _checked_group(found["trajectories"], labels, criteria, judge)
    lines = _line_scores(text, [c.id for c in criteria], prefix=list(labels))
    if lines:
        return _group_from_lines(lines, labels, criteria, judge)
    return ParseProblem('the answer holds no JSON object with a "trajectories" list (and no '
                        '`<trajectory id> <criterion id>: <score>` lines)')


# -- the text -------------------------------------------------------------------------------------------------------

def _final_text(answer: Any) -> str | ParseProblem:
    """The part of a text answer that may hold the verdict: ``<think>`` blocks removed, the end of a long one."""
    if not isinstance(answer, str):
        return ParseProblem(f"the answer is {type(answer).__name__}, not text")
    text = answer[-MAX_ANSWER_CHARS:]
    text = _THINK_BLOCK.sub(" ", text)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        # A reply whose opening <think> was in the prompt template (or cut off above) starts inside the block.
        text = text[closes[-1].end():]
    if _THINK_OPEN.search(text):
        return ParseProblem("the answer ends inside a <think> block: no verdict was given after the thinking")
    if not text.strip():
        return ParseProblem("the answer is empty (after removing <think> blocks)")
    return text


def _final_object(text: str, key: str) -> dict[str, Any] | None:
    """The JSON object starting last in ``text`` whose ``key`` is a list (a later one is the model's final word)."""
    decoder = json.JSONDecoder()
    position = len(text)
    for _ in range(_MAX_OBJECTS_TRIED):
        position = text.rfind("{", 0, position)
        if position < 0:
            return None
        try:
            value, _end = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and isinstance(value.get(key), list):
            return value
    return None


def _line_scores(text: str, ids: Sequence[str], prefix: Sequence[str] | None) -> dict[tuple[str, str], str]:
    """``{(label, criterion id): score text}`` of the strict fallback lines, the last line of each pair counting
    (``label`` is ``""`` without ``prefix``). A line is exactly ``<id>: <number>`` (``<label> <id>: <number>``)."""
    alternatives = "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True))
    head = ""
    if prefix is not None:
        head = "(?P<label>" + "|".join(re.escape(p) for p in sorted(prefix, key=len, reverse=True)) + r")[ \t]+"
    pattern = re.compile(rf"^[ \t]*{head}(?P<id>{alternatives})[ \t]*:[ \t]*(?P<score>{_NUMBER})[ \t]*$",
                         re.MULTILINE)
    found: dict[tuple[str, str], str] = {}
    for match in pattern.finditer(text):
        label = match.group("label") if prefix is not None else ""
        found.pop((label, match.group("id")), None)  # keep the order of last occurrences
        found[(label, match.group("id"))] = match.group("score")
    return found


# -- checking -------------------------------------------------------------------------------------------------------

def _checked(entries: Any, criteria: Sequence[Criterion], judge: str,
             source: Literal["json", "lines"], where: str = "") -> ParsedVerdicts | ParseProblem:
    if not isinstance(entries, list):
        return ParseProblem(f'{where}"verdicts" is missing or not a list')
    asked = {c.id: c for c in criteria}
    given: set[str] = set()
    verdicts: dict[str, CriterionVerdict] = {}
    problems: list[str] = []
    for position, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            problems.append(f"{where}verdicts[{position}] is not an object")
            continue
        criterion_id = entry.get("id")
        if not isinstance(criterion_id, str) or criterion_id not in asked:
            problems.append(f"{where}verdicts[{position}] has id {_short(criterion_id)}, which is not a criterion "
                            "asked")
            continue
        if criterion_id in given:
            problems.append(f"{where}criterion {criterion_id!r} is given more than once")
            continue
        given.add(criterion_id)
        verdict = _verdict(asked[criterion_id], entry.get("score"), entry.get("reason"), judge)
        if isinstance(verdict, str):
            problems.append(f"{where}criterion {criterion_id!r}: {verdict}")
        else:
            verdicts[criterion_id] = verdict
    missing = [c.id for c in criteria if c.id not in given]
    if missing:
        problems.append(f"{where}criteria missing: {', '.join(missing)}")
    if problems:
        return ParseProblem("; ".join(problems))
    return ParsedVerdicts(tuple(verdicts[c.id] for c in criteria), source)


def _verdict(criterion: Criterion, score: Any, reason: Any, judge: str) -> CriterionVerdict | str:
    if isinstance(score, int) and not isinstance(score, bool) and abs(score) > 1e300:
        return f"score {_short(score)} is not a finite number"  # an int too large to be a float
    problem = criterion.scale.problem(score)
    if problem is not None:
        return f"score: {problem[:200]}"
    if reason is None:
        reason = ""
    if not isinstance(reason, str):
        return f"reason is {type(reason).__name__}, expected a string"
    return CriterionVerdict(criterion.id, float(score), reason[:MAX_REASON_CHARS], judge)


def _from_lines(lines: Mapping[tuple[str, str], str], criteria: Sequence[Criterion],
                judge: str) -> ParsedVerdicts | ParseProblem:
    entries = [{"id": criterion_id, "score": _number(score)} for (_, criterion_id), score in lines.items()]
    return _checked(entries, criteria, judge, "lines")


def _checked_group(entries: Any, labels: Sequence[str], criteria: Sequence[Criterion],
                   judge: str) -> ParsedGroupVerdicts | ParseProblem:
    if not isinstance(entries, list):
        return ParseProblem('"trajectories" is missing or not a list')
    wanted = set(labels)
    given: set[str] = set()
    found: dict[str, tuple[CriterionVerdict, ...]] = {}
    problems: list[str] = []
    for position, entry in enumerate(entries):
        label = entry.get("id") if isinstance(entry, Mapping) else None
        if not isinstance(label, str) or label not in wanted:
            problems.append(f"trajectories[{position}] has id {_short(label)}, which is not a trajectory shown")
            continue
        if label in given:
            problems.append(f"trajectory {label!r} is given more than once")
            continue
        given.add(label)
        result = _checked(entry.get("verdicts"), criteria, judge, "json", where=f"trajectory {label!r}: ")
        if isinstance(result, ParseProblem):
            problems.append(result.message)
        else:
            found[label] = result.verdicts
    missing = [label for label in labels if label not in given]
    if missing:
        problems.append(f"trajectories missing: {', '.join(missing)}")
    if problems:
        return ParseProblem("; ".join(problems))
    return ParsedGroupVerdicts({label: found[label] for label in labels}, "json")


def _group_from_lines(lines: Mapping[tuple[str, str], str], labels: Sequence[str], criteria: Sequence[Criterion],
                      judge: str) -> ParsedGroupVerdicts | ParseProblem:
    entries = [{"id": label, "verdicts": [{"id": criterion_id, "score": _number(score)}
                                          for (line_label, criterion_id), score in lines.items()
                                          if line_label == label]}
               for label in labels if any(line_label == label for line_label, _ in lines)]
    result = _checked_group(entries, labels, criteria, judge)
    return ParsedGroupVerdicts(result.verdicts, "lines") if isinstance(result, ParsedGroupVerdicts) else result


def _number(text: str) -> float:
    return float(text)  # matched by _NUMBER, so it parses; an overflow is inf, which the scale check refuses


def _short(value: Any) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
