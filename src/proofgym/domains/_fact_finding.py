"""Fact finding: a multi-step form of a rulebook domain. The record's facts are hidden; ``get_fact(name)`` reveals
one per turn and ``answer(decision)`` decides. Registered as ``fact_finding`` (the grant domain by default).

Rewards: the answer step pays ``correct`` (1.0) when the decision is the one the domain's rule kernel certifies for
the record's facts *and* the facts revealed before it prove it whatever the hidden ones are (a denial needs one
failing fact known, a permit all of them: :func:`shown_by`); nothing else pays, so the environment's return is the
outcome. A right guess on facts that do not decide earns nothing: paying it made the reward a coin flip on half the
episodes, and the tiny model never learned to read the facts (see the README). The rubrics
(:data:`FACT_FINDING_RUBRICS`) add what the trace shows per decision: credit for revealing a fact the deciding
rules read, none for a repeated or unknown fact, and at the answer whether every deciding fact was known.
"""

from __future__ import annotations

import functools
from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, Field, model_validator

from proofgym.domains._dataset import gold_decision
from proofgym.domains._domain import Domain, Record, get_domain
from proofgym.envs import Observation, Tool, ToolCall, ToolEnv, ToolResult
from proofgym.judges import CriterionContext, RubricSet, register_criterion, rubric_set_from_data
from proofgym.traces import StepTrace

_BLOCK = 64  # records per generator call: one balanced block of the domain's branches


class FactFindingConfig(BaseModel):
    """``domain`` (a rulebook domain with a ``deciding_facts`` rule, see :func:`deciding_facts`), ``max_turns``,
    ``seed_offset`` (shifts every seed: a disjoint record stream), ``verdicts`` (each revealed fact also says
    whether it meets its requirement, "age = 16 (fails: under 18)": the policy still has to choose what to ask,
    when to stop and what to decide, but not to compare numbers; grant_eligibility only), ``tally`` (with
    ``verdicts``: each reveal also counts the facts checked and failed so far, "2 of 4 checked, 1 failed")."""

    model_config = ConfigDict(extra="forbid")

    domain: str = "grant_eligibility"
    max_turns: int = Field(6, ge=2, le=64)
    seed_offset: int = Field(0, ge=0)
    verdicts: bool = False
    tally: bool = False

    @model_validator(mode="after")
    def _verdicts_need_requirements(self) -> FactFindingConfig:
        if self.tally and not self.verdicts:
            raise ValueError("tally: true needs verdicts: true (it counts the verdicts)")
        if self.verdicts and self.domain not in _REQUIREMENTS:
            raise ValueError(f"verdicts: true needs a domain whose per-fact requirements are known "
                             f"({', '.join(sorted(_REQUIREMENTS))}), not {self.domain!r}")
        return self


@functools.cache  # built on first use (the threshold's import), read on every step
def _grant_requirements() -> dict[str, tuple[Any, str, str]]:
    from proofgym.domains._grant_eligibility import INCOME_THRESHOLD as GRANT_INCOME_THRESHOLD

    return {"age": (lambda v: v >= 18, "18 or over", "under 18"),
            "annual_income": (lambda v: v <= GRANT_INCOME_THRESHOLD, f"at most {GRANT_INCOME_THRESHOLD}",
                              f"over {GRANT_INCOME_THRESHOLD}"),
            "resident": (bool, "a resident", "not a resident"),
            "has_active_grant": (lambda v: not v, "no active grant", "an active grant")}


#: Per domain, per fact: (meets(value), what meeting reads, what failing reads).
_REQUIREMENTS: dict[str, Any] = {"grant_eligibility": _grant_requirements}


def fact_verdict(domain: str, name: str, value: Any) -> str:
    """"meets: 18 or over" / "fails: under 18": whether ``value`` meets the requirement on fact ``name``."""
    meets, good, bad = _REQUIREMENTS[domain]()[name]
    return f"meets: {good}" if meets(value) else f"fails: {bad}"


def deciding_facts(domain: Domain, facts: Mapping[str, Any]) -> frozenset[str]:
    """The facts the deciding rules read: for a grant permit all four requirements; for a denial the failing ones
    (any one of them decides)."""
    if domain.name not in _REQUIREMENTS:
        return frozenset(facts)  # every fact counts where no finer account is known
    failing = {name for name, (meets, _, _) in _REQUIREMENTS[domain.name]().items() if not meets(facts[name])}
    return frozenset(failing or facts)


def shown_by(decision: str, deciding: frozenset[str] | set[str], known: Any) -> bool:
    """Whether the facts ``known`` prove ``decision`` whatever the hidden ones are: a denial needs one of the
    failing facts (``deciding``), a permit every one of them."""
    known = set(known)
    return bool(deciding & known) if decision == "deny" else set(deciding) <= known


def _decided(deciding: frozenset[str], known: set[str], names: set[str]) -> bool:
    """Whether the facts ``known`` already decide the record: one failing fact, or every fact."""
    return known >= names or (deciding != names and bool(deciding & known))


@functools.lru_cache(maxsize=256)
def _block(domain: str, block: int) -> tuple[Record, ...]:
    return tuple(get_domain(domain).generate(block, _BLOCK))


class FactFindingEnv(ToolEnv):
    """Decide one hidden record, revealing its facts one turn at a time (see the module docstring).

    Every ``get_fact`` step's ``info`` has ``fact``, ``relevant`` (a deciding fact), ``repeated`` and ``decided``
    (the facts known before the call already decided the record: a failing one, or all of them); the answer's
    has ``decision``, ``gold``, ``correct``, ``certified`` (correct and shown by the facts revealed), ``known``
    (facts revealed before it) and ``deciding``.
    """

    def __init__(self, config: FactFindingConfig | None = None) -> None:
        self.config = config or FactFindingConfig()
        self.domain = get_domain(self.config.domain)
        self._names = tuple(self.domain.spec.facts)
        tools = [
            Tool("get_fact", "Reveal one fact of the record.",
                 {"type": "object", "properties": {"name": {"type": "string"}},
                  "required": ["name"], "additionalProperties": False}),
            Tool("answer", "Decide the record and end the episode.",
                 {"type": "object", "properties": {"decision": {"type": "string"}},
                  "required": ["decision"], "additionalProperties": False}),
        ]
        super().__init__(tools, max_turns=self.config.max_turns)
        self._record: Record | None = None
        self._known: list[str] = []

    @property
    def rubrics(self) -> RubricSet:
        return FACT_FINDING_RUBRICS

    @property
    def record(self) -> Record:
        if self._record is None:
            raise RuntimeError("no episode yet: call reset() first")
        return self._record

    def record_for(self, seed: int) -> Record:
        block, index = divmod(seed + self.config.seed_offset, _BLOCK)
        return _block(self.domain.name, block)[index]

    def oracle_actions(self, seed: int) -> list[Any]:
        """Reveal the deciding facts, then give the certified decision (resets the episode)."""
        self.reset(seed)
        facts = self.record.facts
        wanted = [name for name in self._names if name in deciding_facts(self.domain, facts)]
        return [*({"tool": "get_fact", "args": {"name": name}} for name in wanted),
                {"tool": "answer", "args": {"decision": gold_decision(self.domain, facts)}}]

    def warmup_actions(self, seed: int, rng: Any) -> list[Any]:
        """A random well-formed episode for a format warm-up: the first few of the facts in the order the domain
        lists them (how many is random, not read from the facts), then a random decision (right half of the time at
        best: it teaches the call format and an order of asking, not when to stop or what to decide). Resets the
        episode."""
        self.reset(seed)
        names = list(self._names)
        chosen = names[:rng.randint(0, len(names))]
        return [*({"tool": "get_fact", "args": {"name": name}} for name in chosen),
                {"tool": "answer", "args": {"decision": rng.choice(list(self.domain.spec.decisions))}}]

    def _reset(self, seed: int) -> Observation:
        self._record = self.record_for(seed)
        self._known = []
        text = (f"Decide: {' or '.join(self.domain.spec.decisions)}. Hidden facts: {', '.join(self._names)}. "
                f"{self.domain.spec.description.split('. ')[0]}.")
        return Observation(text, {"facts": list(self._names), "record_id": self._record.id,
                                  "max_turns": self.config.max_turns})

    def _call_tool(self, call: ToolCall) -> ToolResult:
        facts = self.record.facts
        deciding = deciding_facts(self.domain, facts)
        if call.name == "get_fact":
            name = call.args["name"]
            if name not in facts:
                return ToolResult(Observation(f"unknown fact {name[:40]!r}: one of {', '.join(self._names)}"),
                                  info={"tool": "get_fact", "error": "unknown fact", "fact": name[:40]})
            repeated = name in self._known
            decided = _decided(deciding, set(self._known), set(self._names))
            self._known.append(name)
            value = facts[name]
            shown = str(value).lower() if isinstance(value, bool) else str(value)
            if self.config.verdicts:
                shown += f" ({fact_verdict(self.domain.name, name, value)})"
            if self.config.tally:
                known = set(self._known)
                failed = len(known & deciding) if deciding != frozenset(self._names) else 0
                shown += f"; {len(known)} of {len(self._names)} checked, {failed} failed"
            return ToolResult(Observation(f"{name} = {shown}", {"fact": name, "value": value}),
                              info={"tool": "get_fact", "fact": name, "relevant": name in deciding,
                                    "repeated": repeated, "decided": decided})
        decision = call.args["decision"]
        if decision not in self.domain.spec.decisions:
            return ToolResult(Observation(f"unknown decision: one of {', '.join(self.domain.spec.decisions)}"),
                              info={"tool": "answer", "error": "unknown decision"})
        try:
            gold = gold_decision(self.domain, facts)
        except ValueError as exc:  # the kernel certifies no decision: no signal, never a zero
            return ToolResult(Observation("The answer could not be checked."), done=True,
                              info={"tool": "answer", "decision": decision, "invalid_reason": str(exc)})
        correct = decision == gold
        certified = correct and shown_by(decision, deciding, self._known)
        text = "correct" if certified else "correct, but not shown by the facts revealed" if correct else "wrong"
        return ToolResult(Observation(text, {"correct": correct, "certified": certified}),
                          {"correct": 1.0} if certified else {}, done=True,
                          info={"tool": "answer", "decision": decision, "gold": gold, "correct": correct,
                                # the episode's official outcome (a lucky right guess is correct, not passed)
                                "certified": certified, "passed": certified, "known": sorted(set(self._known)),
                                "deciding": sorted(deciding)})


def make_fact_finding_env(**config: Any) -> FactFindingEnv:
    """``make("fact_finding", **config)``, validated strictly."""
    return FactFindingEnv(FactFindingConfig.model_validate(config, strict=True))


def _tool(step: StepTrace) -> str | None:
    return step.env_event.tool if step.env_event is not None else None


@register_criterion("fact_finding.relevant_reveal")
def relevant_reveal(ctx: CriterionContext) -> tuple[float, str] | None:
    """1 for revealing a new fact the deciding rules read, or for an answer given once every deciding fact was
    known; 0 for a repeated, irrelevant or refused call, or an answer given blind."""
    step = ctx.step
    if step is None:
        return None
    if step.info.get("error") or _tool(step) is None:
        return 0.0, "a refused call or no tool call"
    if _tool(step) == "get_fact":
        if step.info.get("repeated"):
            return 0.0, f"{step.info.get('fact')} was already revealed"
        if step.info.get("decided"):
            return 0.0, "the facts already revealed decided the record"
        return (1.0, "a deciding fact") if step.info.get("relevant") else (0.0, "not a deciding fact")
    deciding, known = set(step.info.get("deciding") or ()), set(step.info.get("known") or ())
    if not deciding:
        return None
    if shown_by(str(step.info.get("gold")), deciding, known):
        return 1.0, "the facts revealed decide the record"
    return 0.0, "no deciding fact was known" if step.info.get("gold") == "deny" else "answered without every fact"


@register_criterion("fact_finding.no_redundancy")
def no_redundancy(ctx: CriterionContext) -> tuple[float, str] | None:
    """0 for a redundant call: a repeated ``get_fact``, one made once the facts revealed already decided the
    record, or a refused call; else 1."""
    step = ctx.step
    if step is None:
        return None
    if step.info.get("error") or _tool(step) is None:
        return 0.0, "a refused call or no tool call"
    if step.info.get("repeated"):
        return 0.0, "repeated"
    return (0.0, "asked after the record was decided") if step.info.get("decided") else (1.0, "not redundant")


@register_criterion("fact_finding.concise")
def concise(ctx: CriterionContext) -> tuple[float, str] | None:
    """1 when the answer is certified and no call before it was redundant (see :func:`no_redundancy`), else 0;
    abstains when the answer could not be checked."""
    verdict = correct_decision(ctx)
    if verdict is None or verdict[0] == 0.0:
        return verdict
    wasted = [s.index for s in ctx.trace.steps if _tool(s) == "get_fact"
              and (s.info.get("error") or s.info.get("repeated") or s.info.get("decided"))]
    return (0.0, f"certified, but steps {wasted} were redundant") if wasted else (1.0, "certified, nothing wasted")


@register_criterion("fact_finding.correct")
def correct_decision(ctx: CriterionContext) -> tuple[float, str] | None:
    """1 when the episode's answer is the certified decision and the facts revealed prove it, 0 when wrong, right
    by luck on facts that do not decide, or never given; abstains when the answer could not be checked."""
    answers = [s for s in ctx.trace.steps if _tool(s) == "answer" and not s.info.get("error")]
    if not answers:
        return 0.0, "no valid answer"  # the model's failure (no answer, or not a decision): a 0, not an abstention
    info = answers[-1].info
    if "correct" not in info:
        return None  # the kernel certified no decision for the record: no signal
    if info.get("certified"):
        return 1.0, "certified and correct"
    if info["correct"]:
        return 0.0, "right by luck: the facts revealed do not decide the record"
    return 0.0, f"wrong (gold {info.get('gold')})"


FACT_FINDING_RUBRICS: RubricSet = rubric_set_from_data({
    "weights": {"env": 0.0, "event": 0.2, "outcome": 1.0},
    "event": {
        "id": "fact_finding/event", "version": "1", "aggregation": "weighted_sum",
        "goal_text": "Each decision reveals a fact the deciding rules need, without repeating one.",
        "criteria": [
            {"id": "relevant_reveal", "weight": 0.7, "scale": "binary", "function": relevant_reveal,
             "description": "1 for revealing a deciding fact (or answering once they are known)."},
            {"id": "no_redundancy", "weight": 0.3, "scale": "binary", "function": no_redundancy,
             "description": "0 for a repeated fact or a refused call."},
        ],
    },
    "outcome": {
        "id": "fact_finding/outcome", "version": "1", "aggregation": "weighted_sum",
        "goal_text": "The certified decision for the hidden record.",
        "criteria": [
            {"id": "correct", "weight": 0.8, "scale": "binary", "function": correct_decision,
             "description": "1 when the answer is the certified decision and the revealed facts prove it."},
            {"id": "concise", "weight": 0.2, "scale": "binary", "function": concise,
             "description": "1 when the answer is certified and no call before it was redundant."},
        ],
    },
}, source="proofgym.domains._fact_finding")
