"""Reading a judge model's answer: the final verdict it gave, checked criterion by criterion, or why there is none.

A structured answer is the JSON object itself. A text answer is read after its ``<think>`` blocks are removed (an
unclosed ``<think>`` means the model gave no verdict yet), and its verdict is the *last* answer in it, whatever the
form of that answer: a JSON object holding a ``"verdicts"`` key (bare or in a fenced block), or a block of the strict
lines ``<id>: <score>`` the prompt allows as a fallback (consecutive lines; blank lines may stand between them).
Nothing earlier is ever taken for the answer, whatever its form: a verdict the judge quoted from the candidate, one
drafted in a ``<think>`` block, a first attempt it corrected. The answer must also be the judge's last word: a JSON
answer that sits inside other JSON (a quote in a reason the judge did not escape), or anything after the answer that
looks like another attempt at one (a ``"verdicts"`` or ``"score"`` key, a criterion followed by a number, however
decorated) makes the reply unusable: the judge's own verdict could not be read, and an earlier one is no substitute.
A loose token (``GRADE: ...``, ``[[3]]``) is never a verdict.

An answer is usable only when every criterion asked appears exactly once (no missing, duplicate or unknown id),
each with a finite number on its scale and a string reason (cut to :data:`MAX_REASON_CHARS`). A problem is said in
fixed words and the rubric's own ids, never with text of the answer: the answer may quote the candidate, and the
problem is shown to the judge model when it is asked again, outside the candidate's delimited block.
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
# After the answer, a key of the answer format: another attempt at a verdict (quoted or not, JSON or not).
_LATER_KEY = re.compile(r"""(?<!\w)["']?(?:verdicts|trajectories)["']?\s*[:=]"""
                        r"""|(?<!\w)["']?score["']?[^A-Za-z0-9\n]{0,16}[-+]?\.?\d""", re.IGNORECASE)
# A JSON answer followed by one of these continues other JSON: it is a quote inside a reply that is not valid JSON.
_JSON_GOES_ON = ('"', ",", "]", "}")


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
    """Why an answer is not usable, in words the judge model is shown when it is asked again: fixed phrases and the
    rubric's ids only, never text of the answer."""

    message: str


def parse_verdicts(answer: str | Mapping[str, Any], criteria: Sequence[Criterion], *,
                   judge: str = "") -> ParsedVerdicts | ParseProblem:
    """The verdicts in ``answer`` (a reply's text, or an already decoded JSON object) for ``criteria``."""
    if isinstance(answer, Mapping):
        return _checked(answer.get("verdicts"), criteria, judge, "json")
    found = _last_answer(answer, "verdicts", [c.id for c in criteria], None)
    if found is None:
        return ParseProblem('the answer holds no JSON object with a "verdicts" list (and no `<id>: <score>` lines)')
    if isinstance(found, ParseProblem):
        return found
    if found.source == "json":
        return _checked(found.value["verdicts"], criteria, judge, "json")
    entries = [{"id": criterion_id, "score": _number(score)} for _, criterion_id, score in found.value]
    return _checked(entries, criteria, judge, "lines")


def parse_group_verdicts(answer: str | Mapping[str, Any], labels: Sequence[str], criteria: Sequence[Criterion], *,
                         judge: str = "") -> ParsedGroupVerdicts | ParseProblem:
    """The verdicts in a group ``answer`` for every trajectory of ``labels`` × every criterion of ``criteria``."""
    if isinstance(answer, Mapping):
        return _checked_group(answer.get("trajectories"), labels, criteria, judge)
    found = _last_answer(answer, "trajectories", [c.id for c in criteria], list(labels))
    if found is None:
        return ParseProblem('the answer holds no JSON object with a "trajectories" list (and no '
                            '`<trajectory id> <criterion id>: <score>` lines)')
    if isinstance(found, ParseProblem):
        return found
    if found.source == "json":
        return _checked_group(found.value["trajectories"], labels, criteria, judge)
    return _group_from_lines(found.value, labels, criteria, judge)


# -- the answer -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Answer:
    """An answer found in a text: a JSON object (``value``: the dict) or a block of lines (``value``: its
    ``(label, criterion id, score text)`` in order), ending at ``end``."""

    value: Any
    source: Literal["json", "lines"]
    end: int


def _last_answer(answer: Any, key: str, ids: Sequence[str],
                 labels: Sequence[str] | None) -> _Answer | ParseProblem | None:
    """The last answer of a text ``answer`` (``None`` when there is none), or why the judge's last word cannot be
    read. ``key`` marks a JSON answer; ``labels`` prefix the lines of a group answer."""
    text = _final_text(answer)
    if isinstance(text, ParseProblem):
        return text
    lines = _last_line_block(text, ids, labels)
    # A line cannot stand inside a JSON object (a JSON string holds no raw newline), so an object after the block
    # is the only answer that can come later.
    found = _last_object(text, key, lines.end if lines is not None else 0)
    if isinstance(found, ParseProblem):
        return found
    found = found or lines
    if found is None:
        return None
    rest = text[found.end:]
    if found.source == "json" and rest.lstrip().startswith(_JSON_GOES_ON):
        return ParseProblem("the last verdict object stands inside other JSON that is not valid (give one JSON "
                            "object, with nothing quoted in it unescaped)")
    if _LATER_KEY.search(rest) or _later_score(rest, ids):
        return ParseProblem("the answer goes on after its last verdict with another attempt at one that cannot be "
                            "read (end with the verdict in the format asked, and nothing after it)")
    return found


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


def _last_object(text: str, key: str, start: int) -> _Answer | ParseProblem | None:
    """The JSON object with ``key`` starting last in ``text[start:]`` (whatever ``key`` holds: a wrong value is the
    answer's problem, not a reason to read an earlier object)."""
    decoder = json.JSONDecoder()
    position = len(text)
    for _ in range(_MAX_OBJECTS_TRIED):
        position = text.rfind("{", start, position)
        if position < 0:
            return None
        try:
            value, end = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and key in value:
            return _Answer(value, "json", end)
    return ParseProblem("the answer holds too many '{' to find its verdict")


def _last_line_block(text: str, ids: Sequence[str], labels: Sequence[str] | None) -> _Answer | None:
    """The last block of strict lines, exactly ``<id>: <number>`` (``<label> <id>: <number>``), consecutive or with
    blank lines between them; the label is ``""`` without ``labels``."""
    alternatives = "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True))
    head = ""
    if labels is not None:
        head = "(?P<label>" + "|".join(re.escape(p) for p in sorted(labels, key=len, reverse=True)) + r")[ \t]+"
    pattern = re.compile(rf"^[ \t]*{head}(?P<id>{alternatives})[ \t]*:[ \t]*(?P<score>{_NUMBER})[ \t\r]*$",
                         re.MULTILINE)
    block: list[re.Match[str]] = []
    for match in pattern.finditer(text):
        if block and text[block[-1].end():match.start()].strip():
            block = []
        block.append(match)
    if not block:
        return None
    return _Answer([(m.group("label") if labels is not None else "", m.group("id"), m.group("score")) for m in block],
                   "lines", block[-1].end())


def _later_score(text: str, ids: Sequence[str]) -> bool:
    """Whether ``text`` names a criterion and then, on the same line, a number: a verdict line in a loose form
    (``**id**: 1``, ``- id = 1``)."""
    if not text.strip():
        return False
    alternatives = "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True))
    # The id ends where no id character follows that goes on into a word ("correct: 1", not "clear:style").
    loose = rf"(?<!\w)(?:{alternatives})(?!\w)(?![.:/-]\w)[^A-Za-z0-9\n]{{0,16}}[-+]?\.?\d"
    return re.search(loose, text) is not None


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
            problems.append(f"{where}verdicts[{position}] has an id that is not a criterion asked")
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
    # An int too large to be a float is refused before the scale converts it.
    too_large = isinstance(score, int) and not isinstance(score, bool) and abs(score) > 1e300
    if too_large or criterion.scale.problem(score) is not None:
        return f"the score is not a plain number on its scale ({criterion.scale.describe()})"
    if reason is None:
        reason = ""
    if not isinstance(reason, str):
        return "the reason is not a string"
    return CriterionVerdict(criterion.id, float(score), reason[:MAX_REASON_CHARS], judge)


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
            problems.append(f"trajectories[{position}] has an id that is not a trajectory shown")
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


def _group_from_lines(lines: Sequence[tuple[str, str, str]], labels: Sequence[str], criteria: Sequence[Criterion],
                      judge: str) -> ParsedGroupVerdicts | ParseProblem:
    entries = [{"id": label, "verdicts": [{"id": criterion_id, "score": _number(score)}
                                          for line_label, criterion_id, score in lines if line_label == label]}
               for label in labels if any(line_label == label for line_label, _, _ in lines)]
    result = _checked_group(entries, labels, criteria, judge)
    return ParsedGroupVerdicts(result.verdicts, "lines") if isinstance(result, ParsedGroupVerdicts) else result


def _number(text: str) -> float:
    return float(text)  # matched by _NUMBER, so it parses; an overflow is inf, which the scale check refuses
