"""The relative judge (RULER style): the trajectories of one group scored against each other in one call.

Items sharing :attr:`JudgeItem.group` (a GRPO group's rollouts of one prompt) are shown to the model together, each
candidate delimited and escaped in its own block labelled ``t1``, ``t2``..., and the model scores every trajectory
on every criterion at once. Seeing the whole group lets it rank consistently, but the scores mean something only
*within* the group: a 0.8 here and a 0.8 in another group are not comparable, so the verdicts carry
``relative=True`` (a group-normalising advantage, as GRPO's, is what they suit).

Everything else is the :class:`~proofgym.judges.LLMJudge`'s: the runtime (a group's question cached by its content),
the endpoint's limiter, the structured-output fallback, one retry of an unusable answer (which must give every
trajectory × criterion exactly once), invalid verdicts that abstain. Identical candidates of a group are shown once
and share their scores; an item without a group is a group of its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from proofgym.core import Claim, ErrorKind
from proofgym.judges._limiter import EndpointLimits, RateLimiter
from proofgym.judges._llm import (
    ChatJudgeBase,
    Structured,
    Question,
    ClaimResult,
    chunked,
    criteria_data,
    criteria_from,
    question_rubric,
)
from proofgym.judges._parse import ParsedGroupVerdicts, ParseProblem, parse_group_verdicts
from proofgym.judges._prompt import PROMPT_VERSION, build_group_messages, group_verdict_schema
from proofgym.judges._rubric import Criterion
from proofgym.judges._types import CriterionVerdict, JudgeItem, JudgeVerdict
from proofgym.runtime import RuntimeConfig


@dataclass(frozen=True, slots=True)
class _Group:
    """One group's question: its distinct candidates (``labels[i]`` shows ``candidates[i]``), the items' positions
    and the label each shows as, and the criteria chunks (one claim each, starting at ``first_claim``)."""

    name: str | None
    candidates: tuple[str, ...]
    labels: tuple[str, ...]
    members: tuple[tuple[int, str], ...]
    chunks: tuple[tuple[Criterion, ...], ...]
    first_claim: int


class RelativeJudge(ChatJudgeBase):
    """Scores the trajectories of each group against each other in one call per criteria chunk (see the module
    docstring); constructed as :class:`~proofgym.judges.LLMJudge` is. ``name`` defaults to
    ``"llm-relative:<model>"``. The verdicts have ``relative=True`` and ``meta`` ``{"group", "group_size",
    "label"}``: their scores are comparable only within their group."""

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, name: str | None = None,
                 max_criteria: int = 8, structured: Structured = "auto", temperature: float = 0.0,
                 max_tokens: int = 2048, timeout_s: float = 120.0, runtime: RuntimeConfig | None = None,
                 limits: EndpointLimits | None = None, transport: Any = None,
                 extra_body: Mapping[str, Any] | None = None, limiter: RateLimiter | None = None) -> None:
        super().__init__(base_url, model, api_key=api_key, name=name, max_criteria=max_criteria,
                         structured=structured, temperature=temperature, max_tokens=max_tokens, timeout_s=timeout_s,
                         runtime=runtime, limits=limits, transport=transport, extra_body=extra_body, limiter=limiter,
                         default_name=f"llm-relative:{model}")

    def _question(self, payload: Mapping[str, Any]) -> Question:
        criteria = criteria_from(payload)
        rubric = question_rubric(payload, criteria)
        labels = list(payload["labels"])
        items = [JudgeItem(level=payload["level"], rubric=rubric, candidate=c) for c in payload["candidates"]]
        ids = ", ".join(json.dumps(c.id) for c in criteria)
        names = ", ".join(json.dumps(label) for label in labels)

        def parse(answer: str | Mapping[str, Any]) -> dict[str, Any] | ParseProblem:
            result = parse_group_verdicts(answer, labels, criteria)
            if isinstance(result, ParsedGroupVerdicts):
                return {"trajectories": {label: [{"id": v.id, "reason": v.reason, "score": v.score} for v in given]
                                         for label, given in result.verdicts.items()},
                        "source": result.source}
            return result

        def retry_note(problem: str) -> str:
            return (f"An earlier answer to this request could not be used: {problem}. Answer with only the JSON "
                    'object {"trajectories": [{"id": ..., "verdicts": [{"id": ..., "reason": ..., "score": ...}]}]}, '
                    f"giving every trajectory exactly once ({names}) and in each every criterion exactly once ({ids}), "
                    "each with a string reason before a plain-number score on its scale. Do not quote the "
                    "trajectories.")

        return Question(build_group_messages(items, labels, criteria), "group_verdicts",
                         group_verdict_schema(labels, criteria), parse, retry_note)

    def _plan(self, items: Sequence[JudgeItem]) -> tuple[list[Claim], list[_Group]]:
        keyed: dict[Any, list[int]] = {}
        for position, item in enumerate(items):
            rubric = item.rubric
            key: Any = (item.group, item.level, rubric.label, rubric.goal_text, criteria_key(rubric.criteria))
            keyed.setdefault(key if item.group is not None else ("alone", position), []).append(position)
        claims: list[Claim] = []
        groups: list[_Group] = []
        for positions in keyed.values():
            first = items[positions[0]]
            candidates = tuple(dict.fromkeys(items[p].candidate for p in positions))
            labels = tuple(f"t{i + 1}" for i in range(len(candidates)))
            label_of = dict(zip(candidates, labels))
            chunks = tuple(chunked(first.rubric.criteria, self.max_criteria))
            groups.append(_Group(first.group, candidates, labels,
                                 tuple((p, label_of[items[p].candidate]) for p in positions), chunks, len(claims)))
            for chunk in chunks:
                claims.append(Claim(payload={
                    "rubric": first.rubric.label, "criteria": criteria_data(chunk), "goal": first.rubric.goal_text,
                    "level": first.level, "candidates": list(candidates), "labels": list(labels), "relative": True,
                    **self._params()}))
        return claims, groups

    def _finish(self, items: Sequence[JudgeItem], plan: list[_Group], results: list[ClaimResult]) -> list[JudgeVerdict]:
        out: list[JudgeVerdict | None] = [None] * len(items)
        for group in plan:
            parts = results[group.first_claim:group.first_claim + len(group.chunks)]
            for position, label in group.members:
                out[position] = self._verdict(group, label, parts)
        return out  # type: ignore[return-value]  # every position belongs to one group

    def _verdict(self, group: _Group, label: str, parts: list[ClaimResult]) -> JudgeVerdict:
        criteria: list[CriterionVerdict] = []
        calls: list[Mapping[str, Any]] = []
        kinds: list[str] = []
        reasons: list[str] = []
        for chunk, part in zip(group.chunks, parts):
            calls.extend(part.calls)
            verdict = part.verdict
            if verdict.invalid:
                assert verdict.error_kind is not None
                kinds.append(verdict.error_kind.value)
                prefix = f"criteria {', '.join(c.id for c in chunk)}: " if len(group.chunks) > 1 else ""
                reasons.append(prefix + verdict.reason)
                criteria.extend(CriterionVerdict(c.id, None, "", self.name) for c in chunk)
                continue
            trajectories = verdict.evidence.get("trajectories")
            entries = trajectories.get(label) if isinstance(trajectories, Mapping) else None
            given = {e.get("id"): e for e in entries or () if isinstance(e, Mapping)}
            for c in chunk:
                entry = given.get(c.id) or {}
                score = entry.get("score")
                on_scale = score is not None and c.scale.problem(score) is None
                criteria.append(CriterionVerdict(c.id, float(score) if on_scale else None,  # type: ignore[arg-type]
                                                 str(entry.get("reason") or ""), self.name))
        if not kinds and not all(c.valid for c in criteria):  # a stored verdict missing one: abstain, never 0
            kinds.append(ErrorKind.MALFORMED.value)
            reasons.append("a stored verdict lacks a criterion")
        return JudgeVerdict(judge=self.name, criteria=tuple(criteria), error_kind=kinds[0] if kinds else None,
                            reason="; ".join(reasons), calls=tuple(calls), relative=True,
                            cached=all(p.cached for p in parts),
                            meta={"group": group.name, "group_size": len(group.members), "label": label,
                                  "model": self.model, "prompt_version": PROMPT_VERSION})


def criteria_key(criteria: Sequence[Criterion]) -> str:
    """The criteria as one comparable text (items of one group must be asked the same)."""
    return json.dumps(criteria_data(criteria), sort_keys=True)
